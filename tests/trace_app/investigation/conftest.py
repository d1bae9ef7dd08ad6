"""Fixtures for investigation tests: a seeded SQLite store, a temporary ledger, and the
scripted provider going through the real gateway."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from modelgate.ledger import JsonFileLedger, Ledger
from modelgate.providers import Provider, ProviderConfig, ScriptedProvider
from trace_app.demo.data import COMMUNITY_RELAY, HOSPITAL_EXAMPLE, POLICE_REPORT
from trace_app.demo.seed import hospital_example_input, reset_demo
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.investigation.model_settings import NEMOTRON_MODEL, ModelSettings
from trace_app.investigation.service import InvestigationService
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import (
    Alert,
    Claim,
    ClaimStatus,
    Incident,
    InvestigationRun,
    Organization,
    Person,
    Report,
)

PASSPHRASE = "correct horse battery staple"
KEY = "nvapi-test-key-not-real"
CAP_ENV = "TRACE_MODEL_REQUEST_CAP"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in (
        "TRACE_MODEL",
        "TRACE_MODEL_BASE_URL",
        "TRACE_MODEL_PROVIDER",
        "TRACE_MODEL_STRUCTURED_OUTPUT",
        "TRACE_MODEL_API_KEY",
        "TRACE_MODEL_AUDIT_LOG",
        "TRACE_PROMPT_VERSION",
        "DATABASE_URL",
        CAP_ENV,
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRACE_LIVE_PASSPHRASE", PASSPHRASE)
    monkeypatch.setenv("NVIDIA_NIM_API_KEY", KEY)
    # no recorded runs unless a test records some
    monkeypatch.setenv("TRACE_RECORDED_INVESTIGATIONS", str(tmp_path / "no-recorded-runs.json"))


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(make_engine(f"sqlite:///{tmp_path / 'trace.db'}"))
    migrate(database.engine)
    with database.session() as session:
        reset_demo(session)
    yield database
    database.dispose()


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    return tmp_path / "ledger" / "model-usage.json"


@dataclass
class Harness:
    db: Database
    ledger_path: Path
    provider: ScriptedProvider
    service: InvestigationService
    built: list[ProviderConfig]

    def ledger(self) -> JsonFileLedger:
        return JsonFileLedger(self.ledger_path, cap=200)

    def requests_counted(self) -> int:
        if not self.ledger_path.exists():
            return 0
        return self.ledger().snapshot().requests


def make_service(
    db: Database,
    ledger_path: Path,
    provider: ScriptedProvider,
    built: list[ProviderConfig] | None = None,
    env: dict[str, str] | None = None,
) -> InvestigationService:
    import os

    built = built if built is not None else []
    model = ModelSettings.from_env(env if env is not None else dict(os.environ))

    def provider_factory(config: ProviderConfig) -> Provider:
        built.append(config)
        config.read_api_key()  # the same refusal as a real adapter
        return provider

    def ledger_factory() -> Ledger:
        from modelgate.ledger import cap_from_env

        return JsonFileLedger(ledger_path, cap=cap_from_env(CAP_ENV))

    return InvestigationService(
        db, model=model, ledger_factory=ledger_factory, provider_factory=provider_factory
    )


@pytest.fixture
def harness(db: Database, ledger_path: Path) -> Harness:
    provider = ScriptedProvider(model=NEMOTRON_MODEL, name="nim")
    built: list[ProviderConfig] = []
    return Harness(db, ledger_path, provider, make_service(db, ledger_path, provider, built), built)


def report_id_for(db: Database, source: str, text: str) -> str:
    with db.session() as session:
        found = session.scalar(
            select(Report.id)
            .join(Organization, Report.organization_id == Organization.id)
            .where(Organization.name == source, Report.original_text == text)
        )
    assert found is not None, f"no report from {source}"
    return found


def police_report_id(db: Database) -> str:
    return report_id_for(db, POLICE_REPORT.source, POLICE_REPORT.text)


def community_relay_id(db: Database) -> str:
    return report_id_for(db, COMMUNITY_RELAY.source, COMMUNITY_RELAY.text)


def incident_id(db: Database) -> str:
    with db.session() as session:
        found = session.scalar(select(Incident.id))
    assert found is not None
    return found


def publish(
    db: Database,
    source: str,
    text: str,
    *,
    person: str = "Maya Gurung",
    age: int | None = 24,
    status: ClaimStatus = ClaimStatus.SEEN,
    minutes: int = 0,
) -> str:
    with db.session() as session:
        report = publish_report(
            session,
            PublishReportInput(
                incident_id=incident_id(db),
                source=source,
                summary=text[:60] or "summary",
                original_text=text,
                reported_at=datetime(2026, 9, 27, 6, 0, tzinfo=UTC).replace(minute=minutes % 60),
                references=[],
                person=PersonInput(name=person, age=age),
                status=status,
                location="Tatopani",
            ),
        )
        return report.id


def publish_hospital_example(db: Database) -> str:
    with db.session() as session:
        return publish_report(session, hospital_example_input(incident_id(db))).id


HOSPITAL_TEXT = HOSPITAL_EXAMPLE.text


def snapshot_people_claims_alerts(db: Database) -> dict[str, Any]:
    """Everything the investigation must never change."""
    with db.session() as session:
        return {
            "people": sorted(
                (p.id, p.name, p.name_key, p.age) for p in session.scalars(select(Person))
            ),
            "claims": sorted(
                (c.id, c.person_id, c.report_id, c.status, c.location)
                for c in session.scalars(select(Claim))
            ),
            "alerts": sorted(
                (a.id, a.person_id, a.claim_id, a.state) for a in session.scalars(select(Alert))
            ),
            "reports": sorted(
                (r.id, r.original_text, r.status) for r in session.scalars(select(Report))
            ),
        }


def saved_runs(db: Database) -> list[InvestigationRun]:
    with db.session() as session:
        return list(session.scalars(select(InvestigationRun).order_by(InvestigationRun.run_at)))


def run_count(db: Database) -> int:
    with db.session() as session:
        return int(session.scalar(select(func.count()).select_from(InvestigationRun)) or 0)


ScriptedFactory = Callable[..., ScriptedProvider]
