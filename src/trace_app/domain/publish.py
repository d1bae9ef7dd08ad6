"""Publishing a report: the one function the Organizations form and ``POST /api/reports`` call.

A report comes from one source (an organisation, found by name or created), is about one
person (matched by name within the incident, case-insensitive and trimmed, or created),
and creates one claim on that person. A "missing" claim opens an alert for the incident.
Every check runs before anything is added to the caller's session; the records are then
added and flushed together, and the caller's commit (or rollback) decides for all of them.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from trace_app.domain.errors import EmptyReportError, InvalidReportError, NotFoundError
from trace_app.store.db import WRITE_TRANSACTION
from trace_app.store.models import (
    Alert,
    AlertState,
    Claim,
    ClaimStatus,
    Incident,
    Organization,
    Person,
    Report,
)
from trace_app.store.types import as_utc, new_id, utc_now

MAX_NAME_LENGTH = 200
MAX_LOCATION_LENGTH = 300
MAX_REFERENCES = 50
MAX_REFERENCE_LENGTH = 500


class PersonInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = ""
    age: int | None = Field(default=None, ge=0, le=150)


class PublishReportInput(BaseModel):
    """What an organisation publishes. Summary and text default to empty so that a missing
    field gets the same message as an empty one."""

    model_config = ConfigDict(extra="forbid")

    incident_id: str
    source: str
    summary: str = ""
    original_text: str = ""
    reported_at: datetime | None = None
    references: list[str] = Field(default_factory=list)
    person: PersonInput = Field(default_factory=PersonInput)
    status: ClaimStatus
    location: str = ""

    @field_validator("references")
    @classmethod
    def _clean_references(cls, value: list[str]) -> list[str]:
        cleaned = [item.strip() for item in value if item.strip()]
        if len(cleaned) > MAX_REFERENCES:
            raise ValueError(f"at most {MAX_REFERENCES} references")
        if any(len(item) > MAX_REFERENCE_LENGTH for item in cleaned):
            raise ValueError(f"a reference is longer than {MAX_REFERENCE_LENGTH} characters")
        return cleaned


def name_key(name: str) -> str:
    """How names are matched: trimmed, inner whitespace collapsed, case-folded."""
    return " ".join(name.split()).casefold()


def clean_name(name: str) -> str:
    return " ".join(name.split())


def _validate(data: PublishReportInput) -> None:
    if not data.summary.strip() or not data.original_text.strip():
        raise EmptyReportError()
    if not clean_name(data.source):
        raise InvalidReportError("Choose the organisation that publishes the report.")
    if not clean_name(data.person.name):
        raise InvalidReportError("Enter the name of the person the report is about.")
    if len(clean_name(data.person.name)) > MAX_NAME_LENGTH or len(data.source) > MAX_NAME_LENGTH:
        raise InvalidReportError(f"Names are limited to {MAX_NAME_LENGTH} characters.")
    if len(data.location.strip()) > MAX_LOCATION_LENGTH:
        raise InvalidReportError(f"The location is limited to {MAX_LOCATION_LENGTH} characters.")


def find_or_create_organization(session: Session, name: str, kind: str = "other") -> Organization:
    display = clean_name(name)
    key = name_key(display)
    org = session.scalars(select(Organization).where(Organization.name_key == key)).first()
    if org is None:
        org = Organization(id=new_id("org"), name=display, name_key=key, kind=kind)
        session.add(org)
    return org


def _find_or_create_person(session: Session, incident_id: str, data: PersonInput) -> Person:
    display = clean_name(data.name)
    key = name_key(display)
    person = session.scalars(
        select(Person).where(Person.incident_id == incident_id, Person.name_key == key)
    ).first()
    if person is None:
        person = Person(
            id=new_id("per"), incident_id=incident_id, name=display, name_key=key, age=data.age
        )
        session.add(person)
    elif person.age is None and data.age is not None:
        person.age = data.age
    return person


def publish_report(session: Session, data: PublishReportInput) -> Report:
    """Store a report, its claim and (for "missing") an open alert; return the report.

    Raises :class:`EmptyReportError` (exact message "Enter a summary and the original
    report text.") for an empty or blank summary or text, :class:`InvalidReportError`
    for another unusable field, :class:`NotFoundError` for an unknown incident; these are
    raised before anything is added to the session. A database error during the flush
    leaves the session for the caller to roll back. Text longer than 3,000 characters is
    accepted; the investigation refuses it later. The caller commits.
    """
    _validate(data)
    # the incident's row lock (PostgreSQL) makes publications into one incident take
    # turns, so each reads the person, organisation and next position it then writes
    incident = session.get(Incident, data.incident_id, with_for_update=True)
    if incident is None:
        raise NotFoundError(f"No incident with id {data.incident_id!r}.")

    organization = find_or_create_organization(session, data.source)
    person = _find_or_create_person(session, incident.id, data.person)
    position = (
        session.scalar(
            select(func.coalesce(func.max(Report.position), 0)).where(
                Report.incident_id == incident.id
            )
        )
        or 0
    ) + 1
    reported_at = as_utc(data.reported_at) if data.reported_at else utc_now()
    report = Report(
        id=new_id("rep"),
        incident_id=incident.id,
        organization=organization,
        person=person,
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
        person=person,
        report=report,
        status=data.status.value,
        location=data.location.strip(),
        position=position,
    )
    session.add_all([report, claim])
    if data.status is ClaimStatus.MISSING:
        session.add(
            Alert(
                id=new_id("alr"),
                incident_id=incident.id,
                person=person,
                claim=claim,
                state=AlertState.OPEN.value,
                raised_at=reported_at,
                position=position,
            )
        )
    session.flush()
    return report


def publish_and_commit(session: Session, data: PublishReportInput) -> Report:
    """Publish and commit; on a unique-name race (another request created the same
    person or organisation first) roll back and try once more, which then finds it.

    Validation errors propagate with the session rolled back and nothing saved.
    """
    for attempt in (1, 2):
        try:
            session.connection(execution_options=WRITE_TRANSACTION)  # SQLite: BEGIN IMMEDIATE
            report = publish_report(session, data)
            session.commit()
            return report
        except IntegrityError:
            session.rollback()
            if attempt == 2:
                raise
        except BaseException:
            session.rollback()
            raise
    raise AssertionError("unreachable")
