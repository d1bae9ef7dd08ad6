"""REPLAYED demo runs: ``demo/recorded_investigations.json``, replayed after every Reset.

Where the file is (:func:`default_path`, one place): ``TRACE_RECORDED_INVESTIGATIONS``
when set (read by :class:`trace_app.settings.TraceSettings` and passed in); otherwise
``demo/recorded_investigations.json`` at the root of the repository checkout ``trace_app``
is imported from (found from the package's own location, so ``trace serve`` and
``trace reset`` find it from any folder); otherwise a copy shipped
inside the package (``trace_app/demo/``) if a build put one there. With none of these
(an installed wheel without the copy) Reset logs a warning and creates no REPLAYED runs.
See ``docs/decisions/0031``.

The file holds real model runs of three seeded reports, written only by
``trace record-demo`` (:func:`write_recorded`) from live investigations. After every reset
:func:`recreate_replayed_runs` re-creates each recorded run as a REPLAYED
``InvestigationRun`` when, and only when, a seeded report still has the recorded content
fingerprint (computed with the recorded model id and the current prompt version).
Nothing here calls a model.

File format (``format: trace-recorded-investigations-v1``)::

    {"format": ..., "recorded_at": ..., "runs": [
        {"fingerprint", "status", "attribution", "referenced_source", "support",
         "model", "prompt_version", "run_at", "reason",
         "usage": {prompt_tokens, completion_tokens, estimated_tokens, source},
         "citations": [{role, source, excerpt, reported_at}],
         "exchanges": [the modelgate audit records of the run's calls, secrets removed]}]}
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from modelgate.atomicfile import write_bytes_atomic
from modelgate.recording import Exchange
from trace_app.domain.errors import ConfigurationError
from trace_app.investigation import evidence_store as store
from trace_app.investigation.attribution_cues import find_cues
from trace_app.investigation.content_fingerprint import content_fingerprint
from trace_app.investigation.evidence import ReportEvidence
from trace_app.investigation.menu import build_menu
from trace_app.investigation.model_settings import PROMPT_VERSION
from trace_app.investigation.outcome import Citation, InvestigationResult, UsageTotals
from trace_app.investigation.vocabulary import Mode, Status
from trace_app.settings import RECORDED_INVESTIGATIONS_ENV as PATH_ENV
from trace_app.store.models import Incident, InvestigationRun

log = logging.getLogger(__name__)

FORMAT = "trace-recorded-investigations-v1"
FILE_NAME = "recorded_investigations.json"
CHECKOUT_FILE = Path("demo") / FILE_NAME


class RecordedRunsError(ConfigurationError):
    """The recorded-runs file exists but cannot be read as recorded runs."""

    code = "recorded_runs_invalid"


class RecordedCitation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    role: str
    source: str
    excerpt: str
    reported_at: str


class RecordedUsage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    estimated_tokens: int = Field(ge=0)
    source: str


class RecordedRun(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    fingerprint: str
    status: Status
    attribution: str | None
    referenced_source: str | None
    support: str | None
    model: str
    prompt_version: str
    run_at: datetime
    reason: str
    usage: RecordedUsage
    citations: list[RecordedCitation]
    exchanges: list[dict[str, Any]]


class RecordedFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    format: str
    recorded_at: datetime
    runs: list[RecordedRun]


def checkout_root(package_dir: Path | None = None) -> Path | None:
    """The repository root when ``trace_app`` runs from a checkout (``src/trace_app`` next
    to ``pyproject.toml``, as with the editable install), else ``None`` (an installed wheel).
    The working directory plays no part."""
    package = (package_dir or Path(__file__).resolve().parent.parent).resolve()
    root = package.parent.parent
    if package.parent.name == "src" and (root / "pyproject.toml").is_file():
        return root
    return None


def default_path(override: Path | None = None, *, package_dir: Path | None = None) -> Path | None:
    """Where Reset reads the recorded runs: ``override`` (``TRACE_RECORDED_INVESTIGATIONS``),
    else the checkout's ``demo/`` file, else a copy shipped in the package if one exists,
    else ``None``."""
    chosen = default_output(override, package_dir=package_dir)
    if chosen is not None:
        return chosen
    packaged = (package_dir or Path(__file__).resolve().parent.parent) / "demo" / FILE_NAME
    return packaged if packaged.is_file() else None


def default_output(override: Path | None = None, *, package_dir: Path | None = None) -> Path | None:
    """Where ``trace record-demo`` writes by default: ``override``
    (``TRACE_RECORDED_INVESTIGATIONS``), else the checkout's ``demo/`` file; never into an
    installed package (``None``)."""
    if override is not None:
        return override
    root = checkout_root(package_dir)
    return root / CHECKOUT_FILE if root is not None else None


def load_recorded(path: Path | None = None) -> list[RecordedRun]:
    """The recorded runs of ``path`` (default: :func:`default_path`); ``[]`` (logged) when
    there is no file; ``RecordedRunsError`` if bad."""
    path = path or default_path()
    if path is None:
        log.warning(
            "no recorded investigations: not running from a checkout and %s is unset, "
            "so Reset creates no REPLAYED runs",
            PATH_ENV,
        )
        return []
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        log.warning("no recorded investigations at %s, so Reset creates no REPLAYED runs", path)
        return []
    try:
        parsed = RecordedFile.model_validate_json(data)
    except ValidationError as exc:
        raise RecordedRunsError(
            f"{path}: not a recorded-runs file ({exc.error_count()} errors)"
        ) from None
    if parsed.format != FORMAT:
        raise RecordedRunsError(f"{path}: format {parsed.format!r}, expected {FORMAT!r}")
    for run in parsed.runs:
        if not run.status.saved:
            raise RecordedRunsError(f"{path}: a {run.status} run cannot be replayed")
    return list(parsed.runs)


def recorded_run(result: InvestigationResult, exchanges: list[Exchange]) -> RecordedRun:
    """A recorded run from a live, saved-status result and its audit records."""
    if result.mode is not Mode.LIVE or not result.status.saved:
        raise ValueError(f"only a live COMPLETED or NEEDS_REVIEW run is recorded, not {result}")
    assert result.fingerprint and result.model and result.prompt_version and result.run_at
    return RecordedRun(
        fingerprint=result.fingerprint,
        status=result.status,
        attribution=result.attribution,
        referenced_source=result.referenced_source,
        support=result.support,
        model=result.model,
        prompt_version=result.prompt_version,
        run_at=result.run_at,
        reason=result.reason,
        usage=RecordedUsage(**result.usage.as_json()),
        citations=[
            RecordedCitation(
                role=c.role, source=c.source, excerpt=c.excerpt, reported_at=c.reported_at
            )
            for c in result.citations
        ],
        exchanges=[asdict(e) for e in exchanges],
    )


def write_recorded(runs: list[RecordedRun], recorded_at: datetime, path: Path) -> None:
    """Write the file atomically (temp file in the same folder, fsync, ``os.replace``)."""
    body = RecordedFile(format=FORMAT, recorded_at=recorded_at, runs=runs)
    data = json.dumps(body.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    write_bytes_atomic(path, data.encode("utf-8"))


def recreate_replayed_runs(session: Session, path: Path | None = None) -> int:
    """After a reset: add a REPLAYED run for each recorded run whose fingerprint matches a
    report now in the store. Returns how many were added. Idempotent; never commits."""
    try:
        recorded = [r for r in load_recorded(path) if r.prompt_version == PROMPT_VERSION]
    except RecordedRunsError as error:
        log.error("recorded investigations not replayed: %s", error)
        return 0
    if not recorded:
        return 0
    wanted = {run.fingerprint: run for run in recorded}
    models = sorted({run.model for run in recorded})
    added = 0
    for incident_id in session.scalars(select(Incident.id)).all():
        reports = store.incident_reports(session, incident_id)
        sources = {r.source for r in reports}
        for report in reports:
            if report.text_problem is not None:
                continue
            menu = build_menu(report, sources)
            if menu.too_many:
                continue
            for model in models:
                fp = content_fingerprint(
                    report, menu, reports, model=model, prompt_version=PROMPT_VERSION
                )
                run = wanted.get(fp)
                if run is None or store.find_run(session, incident_id, fp) is not None:
                    continue
                store.save_run(session, _replayed_row(incident_id, report, run, reports))
                added += 1
    session.flush()
    return added


def _replayed_row(
    incident_id: str, report: ReportEvidence, run: RecordedRun, reports: tuple[Any, ...]
) -> InvestigationRun:
    """The recorded run as a REPLAYED row, built by the one row builder
    (:func:`evidence_store.run_from_result`); cited reports are found by source and text."""
    citations = []
    for c in run.citations:
        if c.role == "report":
            cited_id = report.report_id
        else:
            cited_id = next(
                (r.report_id for r in reports if r.source == c.source and r.text == c.excerpt),
                "",
            )
        citations.append(Citation(report_id=cited_id, **c.model_dump()))
    replayed = InvestigationResult(
        report_id=report.report_id,
        status=run.status,
        reason=run.reason,
        mode=Mode.REPLAYED,
        attribution=run.attribution,
        referenced_source=run.referenced_source,
        support=run.support,
        model=run.model,
        prompt_version=run.prompt_version,
        run_at=run.run_at,
        usage=UsageTotals(**run.usage.model_dump()),
        citations=tuple(citations),
        fingerprint=run.fingerprint,
        evidence=find_cues(report.text),
        rules_version=None,  # the recorded file does not say; shown runs are re-decided
    )
    return store.run_from_result(incident_id, replayed)
