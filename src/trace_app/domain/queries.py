"""Read-side functions for pages and the JSON API.

Each one runs a fixed number of SQL statements, whatever the number of reports, people
or claims (eager loading with ``selectinload``/``joinedload``; tests count statements).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session, joinedload, selectinload

from trace_app.domain.errors import NotFoundError
from trace_app.store.models import (
    Alert,
    AlertState,
    Claim,
    Incident,
    Organization,
    Person,
    Report,
)

PEOPLE_PER_PAGE = 50
MAX_PAGE_SIZE = 500
OPEN_ALERTS_SHOWN = 20

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class IncidentSummary:
    incident: Incident
    reports: int
    people: int
    open_alerts: int


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    total: int
    offset: int
    limit: int

    @property
    def number(self) -> int:
        """1-based page number."""
        return self.offset // self.limit + 1

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.limit))

    @property
    def has_previous(self) -> bool:
        return self.offset > 0

    @property
    def has_next(self) -> bool:
        return self.offset + self.limit < self.total


def clamp_limit(limit: int, default: int = PEOPLE_PER_PAGE) -> int:
    if limit <= 0:
        return default
    return min(limit, MAX_PAGE_SIZE)


def list_incidents(session: Session) -> list[IncidentSummary]:
    """Every incident with its counts: one statement."""
    reports = (
        select(func.count(Report.id)).where(Report.incident_id == Incident.id).scalar_subquery()
    )
    people = (
        select(func.count(Person.id)).where(Person.incident_id == Incident.id).scalar_subquery()
    )
    alerts = (
        select(func.count(Alert.id))
        .where(Alert.incident_id == Incident.id, Alert.state == AlertState.OPEN.value)
        .scalar_subquery()
    )
    rows = session.execute(
        select(Incident, reports, people, alerts).order_by(Incident.created_at, Incident.name)
    ).all()
    return [IncidentSummary(row[0], row[1], row[2], row[3]) for row in rows]


def get_incident(session: Session, incident_id: str) -> Incident:
    incident = session.get(Incident, incident_id)
    if incident is None:
        raise NotFoundError(f"No incident with id {incident_id!r}.")
    return incident


def find_incident_by_name(session: Session, name: str) -> Incident | None:
    return session.scalars(select(Incident).where(Incident.name == name)).first()


def people_page(
    session: Session, incident_id: str, *, offset: int = 0, limit: int = PEOPLE_PER_PAGE
) -> Page[Person]:
    """One page of the incident's people (by name), each with claims, their reports and
    sources loaded: five statements whatever the sizes."""
    limit = clamp_limit(limit)
    offset = max(0, offset)
    total = session.scalar(select(func.count(Person.id)).where(Person.incident_id == incident_id))
    people = session.scalars(
        select(Person)
        .where(Person.incident_id == incident_id)
        .order_by(Person.name_key, Person.id)
        .offset(offset)
        .limit(limit)
        .options(
            selectinload(Person.claims).joinedload(Claim.report).joinedload(Report.organization)
        )
    ).all()
    return Page(items=list(people), total=total or 0, offset=offset, limit=limit)


def open_alerts(
    session: Session, incident_id: str, *, limit: int = OPEN_ALERTS_SHOWN
) -> Page[Alert]:
    """The newest open alerts of the incident with person, claim and source loaded."""
    limit = clamp_limit(limit, OPEN_ALERTS_SHOWN)
    condition = (Alert.incident_id == incident_id, Alert.state == AlertState.OPEN.value)
    total = session.scalar(select(func.count(Alert.id)).where(*condition))
    alerts = session.scalars(
        select(Alert)
        .where(*condition)
        .order_by(Alert.position.desc(), Alert.id)
        .limit(limit)
        .options(
            joinedload(Alert.person),
            joinedload(Alert.claim).joinedload(Claim.report).joinedload(Report.organization),
        )
    ).all()
    return Page(items=list(alerts), total=total or 0, offset=0, limit=limit)


def reports_page(
    session: Session, incident_id: str, *, offset: int = 0, limit: int = PEOPLE_PER_PAGE
) -> Page[Report]:
    """One page of the incident's reports in publication order, with source and person."""
    limit = clamp_limit(limit)
    offset = max(0, offset)
    total = session.scalar(select(func.count(Report.id)).where(Report.incident_id == incident_id))
    reports = session.scalars(
        select(Report)
        .where(Report.incident_id == incident_id)
        .order_by(Report.position, Report.id)
        .offset(offset)
        .limit(limit)
        .options(
            joinedload(Report.organization),
            joinedload(Report.person),
            selectinload(Report.claims),
        )
    ).all()
    return Page(items=list(reports), total=total or 0, offset=offset, limit=limit)


def incident_reports(session: Session, incident_id: str) -> list[Report]:
    """All of the incident's single-source reports (each from one organisation), in
    publication order, with source and person loaded: one statement."""
    return list(
        session.scalars(
            select(Report)
            .where(Report.incident_id == incident_id)
            .order_by(Report.position, Report.id)
            .options(joinedload(Report.organization), joinedload(Report.person))
        ).all()
    )


def get_report(session: Session, report_id: str) -> Report:
    """A report with its source, person, incident and claims loaded."""
    report = session.scalars(
        select(Report)
        .where(Report.id == report_id)
        .options(
            joinedload(Report.organization),
            joinedload(Report.person),
            joinedload(Report.incident),
            selectinload(Report.claims),
        )
    ).first()
    if report is None:
        raise NotFoundError(f"No report with id {report_id!r}.")
    return report


def list_organizations(session: Session) -> list[Organization]:
    return list(session.scalars(select(Organization).order_by(Organization.name_key)).all())
