"""Publishing a report: the one function the Organizations form and ``POST /api/reports`` call.

A report comes from one source (an organisation, found by name or created), is about one
person (chosen explicitly, or matched on a confident match by the one rule of
:func:`trace_app.domain.identity.match_or_create_person`, or created),
and creates one claim on that person, which opens or closes alerts by the one rule in
:mod:`trace_app.domain.alerts`.
Every check runs before anything is added to the caller's session; the records are then
added and flushed together, and the caller's commit (or rollback) decides for all of them.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, Strict, field_validator
from pydantic_core import PydanticCustomError
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from trace_app.domain import audit, status_events
from trace_app.domain.alerts import alert_for_missing_claim, settle_alerts
from trace_app.domain.audit import Actor
from trace_app.domain.errors import (
    EmptyReportError,
    InvalidReportError,
    NotFoundError,
)
from trace_app.domain.identity import MAX_ALTERNATE_NAMES, NameIndex, match_or_create_person
from trace_app.domain.text import (
    MAX_REFERENCES,
    IdText,
    LocationText,
    PersonNameText,
    ReferenceText,
    ReportText,
    SourceNameText,
    SummaryText,
    clean_name,
    name_key,
)
from trace_app.store.db import WRITE_TRANSACTION
from trace_app.store.models import (
    Claim,
    ClaimStatus,
    Incident,
    Organization,
    Report,
)
from trace_app.store.types import as_utc, new_id, utc_now

MAX_AGE = 150
# A report time may be this far ahead of the server's clock (clocks drift); later is refused.
CLOCK_SKEW = timedelta(minutes=5)
EARLIEST_REPORT = datetime(1900, 1, 1, tzinfo=UTC)


def _schema_requires(*names: str) -> Callable[[dict[str, Any]], None]:
    """Mark fields required in the JSON schema: their Python defaults exist only so that
    a missing summary, text or person gets the domain's own message (it is refused)."""

    def extra(schema: dict[str, Any]) -> None:
        required = list(schema.get("required", []))
        schema["required"] = [*required, *(n for n in names if n not in required)]
        for name in names:
            schema.get("properties", {}).get(name, {}).pop("default", None)

    return extra


class PersonInput(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_schema_requires("name"))

    name: PersonNameText = Field(
        default="", description="The person's name; stored in NFC with whitespace collapsed."
    )
    # strict: JSON ``true`` is not an age
    age: Annotated[int, Strict()] | None = Field(default=None, ge=0, le=MAX_AGE)
    alternate_names: list[PersonNameText] = Field(
        default_factory=list,
        max_length=MAX_ALTERNATE_NAMES,
        description="Other names the person is known by; repeats are dropped.",
    )
    person_id: IdText | None = Field(
        default=None,
        description=(
            "The existing person of this incident the report is about. Without it, the "
            "report attaches to the one person with the same name and a compatible age "
            "(at most 2 years apart), or creates a new person."
        ),
    )

    @field_validator("alternate_names")
    @classmethod
    def _no_blank_alternate_names(cls, value: list[str]) -> list[str]:
        if any(not item.strip() for item in value):
            raise PydanticCustomError(
                "blank", "An other name of the person is blank: remove the empty ones."
            )
        return value


class ReportContent(BaseModel):
    """What a report says, without who says it: the API's body (the source is the
    signed-in member's organisation, never a field). The JSON schema states every limit exactly
    (lengths, refused characters, the age range); a report time must lie between
    1900 and a few minutes from now. Summary, text and person default to empty so that a
    missing field gets the same message as an empty one (the schema marks them required)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=_schema_requires("summary", "original_text", "person"),
    )

    incident_id: IdText
    summary: SummaryText = ""
    original_text: ReportText = ""
    reported_at: datetime | None = Field(
        default=None, description="Default: now. At most five minutes in the future."
    )
    references: list[ReferenceText] = Field(default_factory=list, max_length=MAX_REFERENCES)
    person: PersonInput = Field(default_factory=PersonInput)
    status: ClaimStatus
    location: LocationText = ""

    @field_validator("references")
    @classmethod
    def _clean_references(cls, value: list[str]) -> list[str]:
        return [item.strip() for item in value if item.strip()]

    @field_validator("reported_at")
    @classmethod
    def _reported_at_in_range(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        try:
            when = as_utc(value)
        except OverflowError:
            raise PydanticCustomError(
                "time_range", "is outside the range of times Trace can store"
            ) from None
        if when < EARLIEST_REPORT:
            raise PydanticCustomError("time_range", "must not be before the year 1900")
        if when > utc_now() + CLOCK_SKEW:
            raise PydanticCustomError(
                "time_future", "is in the future; a report tells what has already happened"
            )
        return when


class PublishReportInput(ReportContent):
    """A report and its source (an organisation's name; an unknown name creates it): what
    :func:`publish_report` takes from the web layer, the imports and the demo seed."""

    source: SourceNameText = Field(
        description="The publishing organisation; an unknown name creates it."
    )

    @classmethod
    def from_content(cls, content: ReportContent, source: str) -> PublishReportInput:
        fields = {name: getattr(content, name) for name in ReportContent.model_fields}
        return cls.model_validate({**fields, "source": source})


def validate_report(data: PublishReportInput) -> None:
    """Refuse a report :func:`publish_report` would refuse for its own fields (blank
    summary or text, no source, no person name), before anything is added."""
    blank = tuple(name for name in ("summary", "original_text") if not getattr(data, name).strip())
    if blank:
        raise EmptyReportError(fields=blank)
    if not clean_name(data.source):
        raise InvalidReportError(
            "Choose the organisation that publishes the report.", fields=("source",)
        )
    if not clean_name(data.person.name):
        raise InvalidReportError(
            "Enter the name of the person the report is about.", fields=("person.name",)
        )


def find_or_create_organization(session: Session, name: str, kind: str = "other") -> Organization:
    display = clean_name(name)
    key = name_key(display)
    org = session.scalars(select(Organization).where(Organization.name_key == key)).first()
    if org is None:
        org = Organization(id=new_id("org"), name=display, name_key=key, kind=kind)
        session.add(org)
    return org


def publish_report(session: Session, data: PublishReportInput) -> Report:
    """Store a report, its claim and (for "missing") an open alert; return the report.

    Raises :class:`EmptyReportError` (exact message "Enter a summary and the original
    report text.") for an empty or blank summary or text, :class:`InvalidReportError`
    for another unusable field (a chosen person of another incident among them),
    :class:`NotFoundError` for an unknown incident or chosen person; these are
    raised before anything is added to the session. A database error during the flush
    leaves the session for the caller to roll back. Text longer than 3,000 characters is
    accepted; the investigation refuses it later. The caller commits.
    """
    return publish_reports(session, [data])[0]


def publish_reports(session: Session, items: Sequence[PublishReportInput]) -> list[Report]:
    """Publish several reports of one incident, in their order, by exactly the rule of
    :func:`publish_report` (which is this function with one report): each report's
    person by the identity rule, its organisation found or created, the next position,
    and the alert rule claim after claim. The batch reads the people of its names, the
    next position once, each organisation once, flushes, and settles the alerts of
    the people's groups once (:func:`trace_app.domain.alerts.settle_alerts`).

    Every report's own fields are checked (:func:`validate_report`) before anything is
    added: the first unusable one raises as :func:`publish_report` does. A chosen
    ``person_id`` that is unknown or of another incident raises while people are
    matched, when earlier reports of the batch may have added people to the session: the
    caller rolls back, as for any error. Raises ``ValueError`` for reports of several
    incidents. The caller commits.
    """
    if not items:
        return []
    for data in items:
        validate_report(data)
    incident_id = items[0].incident_id
    if any(data.incident_id != incident_id for data in items):
        raise ValueError("publish_reports takes reports of one incident at a time")
    # the incident's row lock (PostgreSQL) makes publications into one incident take
    # turns, so each reads the person, organisation and next position it then writes
    incident = session.get(Incident, incident_id, with_for_update=True)
    if incident is None:
        raise NotFoundError(f"No incident with id {incident_id!r}.")

    names = NameIndex(
        session,
        incident.id,
        {name_key(clean_name(d.person.name)) for d in items if d.person.person_id is None},
    )
    people = [
        match_or_create_person(
            session,
            incident.id,
            data.person.name,
            data.person.age,
            alternate_names=data.person.alternate_names,
            person_id=data.person.person_id,
            index=names,
        )
        for data in items
    ]
    organizations: dict[str, Organization] = {}
    position = (
        session.scalar(
            select(func.coalesce(func.max(Report.position), 0)).where(
                Report.incident_id == incident.id
            )
        )
        or 0
    )
    reports: list[Report] = []
    new_claims: dict[str, str] = {}  # claim id -> report id
    for data, person in zip(items, people, strict=True):
        source = name_key(clean_name(data.source))
        if source not in organizations:
            organizations[source] = find_or_create_organization(session, data.source)
        position += 1
        reported_at = as_utc(data.reported_at) if data.reported_at else utc_now()
        report = Report(
            id=new_id("rep"),
            incident_id=incident.id,
            organization_id=organizations[source].id,
            person_id=person.id,
            summary=data.summary.strip(),
            original_text=data.original_text,
            reported_at=reported_at,
            references=list(data.references),
            person_name=clean_name(data.person.name),
            person_age=data.person.age,
            status=data.status.value,
            location=data.location.strip(),
            published_at=utc_now(),
            position=position,
        )
        claim = Claim(
            id=new_id("clm"),
            incident_id=incident.id,
            person_id=person.id,
            report_id=report.id,
            status=data.status.value,
            location=data.location.strip(),
            position=position,
        )
        session.add_all([report, claim])
        new_claims[claim.id] = report.id
        if data.status is ClaimStatus.MISSING:
            session.add(alert_for_missing_claim(claim, reported_at))
        reports.append(report)
    session.flush()
    settled = settle_alerts(session, [person.id for person in people])
    # the outbox: an event for each group whose status or alert this changed
    status_events.record_published(session, incident.id, settled, new_claims)
    session.flush()
    return reports


# A write transaction that finds SQLite's lock held past its busy timeout is tried again,
# with growing pauses, for at most this long in all.
LOCKED_RETRY_S = 30.0
_LOCKED_PAUSES_S = (0.05, 0.1, 0.2, 0.4, 0.8, 1.0)
_SQLITE_BUSY_CODES = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED (primary codes)


def _sqlite_locked(error: OperationalError) -> bool:
    code = getattr(error.orig, "sqlite_errorcode", None)
    return isinstance(error.orig, sqlite3.OperationalError) and (
        code is not None and (code & 0xFF) in _SQLITE_BUSY_CODES
    )


def publish_and_commit(session: Session, data: PublishReportInput, *, actor: Actor) -> Report:
    """Publish and commit, with the audit row (``report.publish``) in the same
    transaction. On a unique-name race (another request created the same organisation, or
    gave the person the same alternate name, first) roll back and try once more, which
    then finds it.
    On SQLite, a write lock still held by another writer after the busy timeout
    ("database is locked") rolls back and tries again, for up to ``LOCKED_RETRY_S``.

    Validation errors propagate with the session rolled back and nothing saved.
    """
    deadline = time.monotonic() + LOCKED_RETRY_S
    name_races = 0
    waits = 0
    while True:
        try:
            session.connection(execution_options=WRITE_TRANSACTION)  # SQLite: BEGIN IMMEDIATE
            report = publish_report(session, data)
            audit.record(
                session,
                actor,
                "report.publish",
                object_type="report",
                object_id=report.id,
                incident_id=report.incident_id,
                touched=[f"person:{report.person_id}"],
                after={
                    "source": data.source,
                    "person": report.person_name,
                    "status": report.status,
                    "location": report.location,
                },
            )
            session.commit()
            return report
        except IntegrityError:
            session.rollback()
            name_races += 1
            if name_races == 2:
                raise
        except OperationalError as error:
            session.rollback()
            if not _sqlite_locked(error) or time.monotonic() >= deadline:
                raise
            time.sleep(_LOCKED_PAUSES_S[min(waits, len(_LOCKED_PAUSES_S) - 1)])
            waits += 1
        except BaseException:
            session.rollback()
            raise
