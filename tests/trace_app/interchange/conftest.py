"""Helpers for the interchange tests on a database (SQLite and PostgreSQL, ``db_url``)."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from accounts_helpers import TEST_OPERATOR
from sqlalchemy import func, select

from trace_app.domain.incidents import create_incident
from trace_app.domain.pfif_export import iter_incident_pfif
from trace_app.domain.pfif_import import ImportSummary, import_pfif
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.domain.reviews import ReviewValue, record_review
from trace_app.domain.shelter_import import import_shelter_csv
from trace_app.store.db import Database
from trace_app.store.models import (
    Alert,
    AlertState,
    ClaimStatus,
    InvestigationRun,
    Person,
    Report,
)
from trace_app.store.types import new_id, utc_now

from .person_finder_rules import person_finder_parse

DOMAIN = "trace.example.org"
FIXTURES = Path(__file__).parent / "fixtures"
START = datetime(2026, 7, 14, 6, 0, tzinfo=UTC)


def new_incident(database: Database, name: str = "Flood") -> str:
    with database.session() as s:
        return create_incident(s, name, actor=TEST_OPERATOR).id


def publish(
    database: Database,
    incident_id: str,
    name: str,
    status: str,
    *,
    minutes: int = 0,
    location: str = "",
    age: int | None = None,
    source: str = "River Clinic",
    text: str = "",
    alternate_names: tuple[str, ...] = (),
) -> str:
    with database.session() as s:
        report = publish_report(
            s,
            PublishReportInput(
                incident_id=incident_id,
                source=source,
                summary=f"{name}: {status}",
                original_text=text or f"{source} says {name} is {status}.",
                reported_at=START + timedelta(minutes=minutes),
                person=PersonInput(name=name, age=age, alternate_names=list(alternate_names)),
                status=ClaimStatus(status),
                location=location,
            ),
        )
        return report.id


def publish_story(database: Database, incident: str) -> dict[str, str]:
    """Every claim status, non-Latin names, an alert opened and one closed."""
    return {
        "maya_missing": publish(database, incident, "Maya Gurung", "missing", age=34),
        "maya_seen": publish(
            database, incident, "Maya Gurung", "seen", minutes=10, location="Bus park"
        ),
        "maya_admitted": publish(
            database, incident, "Maya Gurung", "admitted", minutes=20, location="Central Hospital"
        ),
        "sunita": publish(
            database,
            incident,
            "सुनिता राई",
            "missing",
            minutes=5,
            alternate_names=("Sunita Rai",),
            source="Камчатка Relief",
        ),
        "wang": publish(database, incident, "王小明", "safe", minutes=7, location="体育馆"),
        "omar": publish(database, incident, "عمر حداد", "deceased", minutes=9, age=70),
    }


def review(
    database: Database, report_id: str, value: ReviewValue, note: str = "checked by phone"
) -> None:
    """A person's review decision on the report, on a saved NEEDS_REVIEW run of it (as the
    review queue has one)."""
    with database.session() as s:
        report = s.get(Report, report_id)
        assert report is not None
        run = InvestigationRun(
            id=new_id("inv"),
            incident_id=report.incident_id,
            report_id=report_id,
            status="NEEDS_REVIEW",
            mode="LIVE",
            model="scripted-test-model",
            prompt_version="test-v1",
            run_at=utc_now(),
            fingerprint=new_id("fp"),
            attribution="UNCLEAR",
            referenced_source="NONE",
            citations=[],
            reason="unclear",
            evidence=[],
        )
        s.add(run)
        s.flush()
        record_review(s, run, value, note, actor=TEST_OPERATOR)


def export(database: Database, incident_id: str) -> bytes:
    with database.sessions() as s:
        return b"".join(iter_incident_pfif(s, incident_id, domain=DOMAIN, batch=2))


def import_doc(
    database: Database, incident_id: str, document: bytes, *, skip_invalid: bool = False
) -> ImportSummary:
    with database.session() as s:
        return import_pfif(
            s,
            incident_id,
            io.BytesIO(document),
            domain=DOMAIN,
            skip_invalid=skip_invalid,
            actor=TEST_OPERATOR,
        )


def import_csv(
    database: Database,
    incident_id: str,
    text: str,
    *,
    source: str = "Camp 2 Desk",
    skip: bool = False,
) -> ImportSummary:
    with database.session() as s:
        return import_shelter_csv(
            s,
            incident_id,
            io.BytesIO(text.encode()),
            source_name=source,
            domain=DOMAIN,
            skip_invalid=skip,
            actor=TEST_OPERATOR,
        )


def comparable(document: bytes) -> dict[str, Any]:
    """People and notes by record id, as Person Finder's rules read them, without the
    entry dates (the time each repository stored them)."""
    persons, notes = person_finder_parse(document)
    strip = lambda r: {k: v for k, v in r.items() if k != "entry_date"}  # noqa: E731
    return {
        "persons": {p["person_record_id"]: strip(p) for p in persons},
        "notes": {n["note_record_id"]: strip(n) for n in notes},
    }


def counts(database: Database, incident_id: str) -> tuple[int, int, int]:
    """People, reports and open alerts of the incident."""
    with database.sessions() as s:
        people = s.scalar(
            select(func.count()).select_from(Person).where(Person.incident_id == incident_id)
        )
        reports = s.scalar(
            select(func.count()).select_from(Report).where(Report.incident_id == incident_id)
        )
        alerts = s.scalar(
            select(func.count())
            .select_from(Alert)
            .where(Alert.incident_id == incident_id, Alert.state == AlertState.OPEN.value)
        )
        return int(people or 0), int(reports or 0), int(alerts or 0)


def statuses(database: Database, incident_id: str) -> dict[str, list[str]]:
    """Each person's claim statuses in report order, by name."""
    with database.sessions() as s:
        rows = s.execute(
            select(Person.name, Report.status)
            .join(Report, Report.person_id == Person.id)
            .where(Person.incident_id == incident_id)
            .order_by(Report.reported_at, Report.position)
        )
        found: dict[str, list[str]] = {}
        for name, status in rows:
            found.setdefault(name, []).append(status)
        return found
