"""``trace record-demo``: record real runs of seeded reports for REPLAYED mode.

Three reports: the police report and the community relay (the relay-and-source pair the
demo is built around), and Sunita Bhandari's camp entry, the report a reviewer opens in the
reviewer's task of issue 40 (found by searching "Sunitta").

The runs are made on a fresh, temporary copy of the seeded demo (the user's database is
not touched), through the normal guarded path: passphrase, key, the server's real ledger
and cap. Every exchange is captured by modelgate's recorder and stored with the run. The
file is written (atomically) only when both runs end COMPLETED or NEEDS_REVIEW; otherwise
the previous file stays as it was.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import select

from modelgate.recording import Recorder, load_exchanges
from trace_app.demo.data import CAMP, COMMUNITY_RELAY, POLICE_REPORT, REPORTS, DemoReport
from trace_app.demo.seed import seed_demo
from trace_app.domain.errors import ConfigurationError
from trace_app.investigation.model_settings import ModelSettings
from trace_app.investigation.outcome import InvestigationResult
from trace_app.investigation.recorded import RecordedRun, recorded_run, write_recorded
from trace_app.investigation.service import (
    InvestigationService,
    LedgerFactory,
    ProviderFactory,
)
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import Organization, Report
from trace_app.store.types import utc_now

REVIEWER_TASK_ENTRY = next(r for r in REPORTS if r.source == CAMP and r.person == "Sunita Bhandari")
SEEDED_REPORTS: tuple[DemoReport, ...] = (POLICE_REPORT, COMMUNITY_RELAY, REVIEWER_TASK_ENTRY)


class RecordingFailed(ConfigurationError):
    """A seeded run did not end with a saved status; nothing was written."""

    code = "recording_failed"

    def __init__(self, results: list[InvestigationResult]) -> None:
        self.results = results
        bad = ", ".join(f"{r.status.value} ({r.reason})" for r in results if not r.status.saved)
        super().__init__(f"not recorded: {bad}")


@dataclass(frozen=True, slots=True)
class RecordingOutcome:
    results: list[InvestigationResult]
    runs: list[RecordedRun]
    path: Path


def _seeded_report_id(db: Database, item: DemoReport) -> str:
    with db.session() as session:
        found = session.scalar(
            select(Report.id)
            .join(Organization, Report.organization_id == Organization.id)
            .where(Organization.name == item.source, Report.original_text == item.text)
        )
    if found is None:
        raise LookupError(f"the seeded report from {item.source} is missing from the seed")
    return found


async def record_demo(
    *,
    model: ModelSettings,
    passphrase: str | None,
    output: Path,
    ledger_factory: LedgerFactory,
    provider_factory: ProviderFactory,
    now: datetime | None = None,
) -> RecordingOutcome:
    with tempfile.TemporaryDirectory(prefix="trace-record-") as folder:
        base = Path(folder)
        db = Database(make_engine(f"sqlite:///{base / 'seed.db'}"))
        service: InvestigationService | None = None
        try:
            migrate(db.engine)
            with db.session() as session:
                seed_demo(session)  # the seed alone: no replay hook runs here
            recorder = Recorder(base / "exchanges.jsonl")
            service = InvestigationService(
                db,
                model=model,
                ledger_factory=ledger_factory,
                provider_factory=provider_factory,
                recorder=recorder,
            )
            results: list[InvestigationResult] = []
            runs: list[RecordedRun] = []
            for item in SEEDED_REPORTS:
                seen = len(load_exchanges(recorder.path)) if recorder.path.exists() else 0
                result = await service.investigate(
                    _seeded_report_id(db, item), passphrase, force_live=True
                )
                results.append(result)
                exchanges = load_exchanges(recorder.path)[seen:] if recorder.path.exists() else []
                if result.status.saved:
                    runs.append(recorded_run(result, exchanges))
        finally:
            if service is not None:
                await service.aclose()
            db.dispose()
    if len(runs) != len(SEEDED_REPORTS):
        raise RecordingFailed(results)
    write_recorded(runs, now or utc_now(), output)
    return RecordingOutcome(results=results, runs=runs, path=output)
