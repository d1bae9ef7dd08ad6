"""Read-side functions shared by every feature: pages (``Page``, ``clamp_limit``), the
incidents and their counts, an incident's organisations, and which incident a record
belongs to. The features' own reads are :mod:`~trace_app.domain.people_queries`,
:mod:`~trace_app.domain.alert_queries` and :mod:`~trace_app.domain.report_queries`.

Each one runs a fixed number of SQL statements, whatever the number of reports, people
or claims (eager loading with ``selectinload``/``joinedload``; tests count statements).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from trace_app.domain.errors import NotFoundError
from trace_app.domain.groups import is_group_lead
from trace_app.store.models import (
    Alert,
    AlertState,
    Incident,
    Organization,
    Person,
    Report,
)

PEOPLE_PER_PAGE = 50
MAX_PAGE_SIZE = 500

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
    # the cursor of the next page, for a list that pages by keyset as well (the people
    # listing without a search, :func:`people_page_after`); None on the last page
    next_after: str | None = None
    # a page found by its cursor: whether a next page exists is whether next_after is set
    # (its offset is the cursor's count of rows before it, which may be out of date)
    by_cursor: bool = False
    # ``total`` is a lower bound: counting stopped there (a filtered review queue counts
    # at most :data:`trace_app.investigation.review_queue.FILTERED_TOTAL_CAP` rows past
    # the page), so a page says "1,000 or more"
    total_at_least: bool = False

    @property
    def number(self) -> int:
        """1-based page number."""
        number = self.offset // self.limit + 1
        return min(number, self.pages) if self.by_cursor else number

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.limit))

    @property
    def has_previous(self) -> bool:
        return self.offset > 0

    @property
    def has_next(self) -> bool:
        if self.by_cursor:
            return self.next_after is not None
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
        select(func.count(Person.id))
        .where(Person.incident_id == Incident.id, is_group_lead())
        .scalar_subquery()
    )
    alerts = (
        select(func.count(Alert.id))
        .where(
            Alert.incident_id == Incident.id,
            Alert.state == AlertState.OPEN.value,
            Alert.joined_alert_id.is_(None),
        )
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


def list_organizations(session: Session) -> list[Organization]:
    return list(session.scalars(select(Organization).order_by(Organization.name_key)).all())


# Built once: every object-level access check runs one of these
_INCIDENT_OF = {
    kind: select(kind.incident_id).where(kind.id == bindparam("record_id"))
    for kind in (Report, Person, Alert)
}


def incident_of(session: Session, kind: type[Report | Person | Alert], record_id: str) -> str:
    """The incident a report, person or alert belongs to (for the object-level access
    check); :class:`NotFoundError` for an unknown id."""
    found = session.scalar(_INCIDENT_OF[kind], {"record_id": record_id})
    if found is None:
        raise NotFoundError(f"No {kind.__name__.lower()} with id {record_id!r}.")
    return str(found)
