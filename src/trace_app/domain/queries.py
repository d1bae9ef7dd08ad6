"""Read-side functions for pages and the JSON API.

People are counted and listed as the reader sees them: one row per linked group
(:mod:`trace_app.domain.groups`), with every record's claims; alerts one per person, a
joined missing report counted as another source of it, never as an alert of its own.

Each one runs a fixed number of SQL statements, whatever the number of reports, people
or claims (eager loading with ``selectinload``/``joinedload``; tests count statements).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Generic, TypeVar

from sqlalchemy import Row, bindparam, func, select, tuple_
from sqlalchemy.orm import Session, joinedload, selectinload

from trace_app.domain import people_cursor
from trace_app.domain.claim_source import joined_to_source
from trace_app.domain.errors import NotFoundError
from trace_app.domain.groups import is_group_lead
from trace_app.domain.status_rule import NO_STATUS, CurrentStatus, StatusClaim, current_status
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
from trace_app.store.sql import rare

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
    # the cursor of the next page, for a list that pages by keyset as well (the people
    # listing without a search, :func:`people_page_after`); None on the last page
    next_after: str | None = None
    # a page found by its cursor: whether a next page exists is whether next_after is set
    # (its offset is the cursor's count of rows before it, which may be out of date)
    by_cursor: bool = False

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


@dataclass(frozen=True, slots=True)
class ClaimListing:
    """A claim as the People page shows it, with its source report's summary."""

    id: str
    status: str
    location: str
    report_id: str
    summary: str
    source: str
    reported_at: datetime
    position: int = 0  # publication order within the incident (the status rule reads it)
    person_id: str = ""  # the record the claim is about (one of the group's)

    def for_status(self) -> StatusClaim:
        status = ClaimStatus(self.status)
        return StatusClaim(self.id, status, self.reported_at, self.position, self.source)


@dataclass(frozen=True, slots=True)
class PersonListing:
    """A person as listed: a record, or a linked group shown by its key record with the
    other records' names and every record's claims. ``status`` is the person's, by the
    one rule over every claim of the group (:mod:`trace_app.domain.status_rule`)."""

    id: str
    name: str
    age: int | None
    claims: list[ClaimListing] = field(default_factory=list)
    other_names: list[str] = field(default_factory=list)  # the group's other records
    status: CurrentStatus = NO_STATUS

    def with_status(self) -> PersonListing:
        """This listing with its status decided from its claims."""
        return replace(self, status=current_status(c.for_status() for c in self.claims))

    @property
    def status_claim(self) -> ClaimListing | None:
        """The claim that gives the status (None without a claim)."""
        return next((c for c in self.claims if c.id == self.status.claim_id), None)


@dataclass(frozen=True, slots=True)
class AlertListing:
    id: str
    state: str
    raised_at: datetime
    person_id: str
    person_name: str
    claim_id: str
    report_id: str
    source: str
    closed_at: datetime | None = None
    closed_by_claim_id: str | None = None
    close_note: str | None = None
    closed_by: str | None = None  # the account that closed it by hand
    close_reason: str | None = None  # duplicate or withdrawn (closed by hand)
    reopened_by: str | None = None
    reopen_note: str | None = None
    # the other missing reports that joined this alert: their sources
    other_sources: tuple[str, ...] = ()


# The People page's statements are built once (bound parameters only): building a
# select() costs more than running it on SQLite.
_COUNT_PEOPLE = (
    select(func.count())
    .select_from(Person)
    .where(Person.incident_id == bindparam("incident_id"), is_group_lead())
)
# By name, then id (several people may share a name): a total order, which the index
# ix_people_incident_name_key_id (incident_id, name_key, id) holds, so that a page after
# a cursor is a range of that index (people_page_after). One row more than the page is
# read, to know whether a next page exists.
_LISTED = (Person.id, Person.name, Person.age, Person.name_key)
_PEOPLE_ROWS = (
    select(*_LISTED)
    .where(Person.incident_id == bindparam("incident_id"), is_group_lead())
    .order_by(Person.name_key, Person.id)
    .offset(bindparam("offset"))
    .limit(bindparam("limit"))
)
_PEOPLE_AFTER = (
    select(*_LISTED)
    .where(
        Person.incident_id == bindparam("incident_id"),
        tuple_(Person.name_key, Person.id) > tuple_(bindparam("name_key"), bindparam("id")),
        is_group_lead(),
    )
    .order_by(Person.name_key, Person.id)
    .limit(bindparam("limit"))
)
_CLAIM_ROWS = (
    joined_to_source(
        select(
            Claim.person_id,
            Claim.id,
            Claim.status,
            Claim.location,
            Claim.report_id,
            Report.summary,
            Organization.name.label("source"),
            Report.reported_at,
            Claim.position,
        )
    )
    .where(Claim.person_id.in_(bindparam("person_ids", expanding=True)))
    .order_by(Claim.position, Claim.id)
)
_ALERTS_IN_STATE = (
    Alert.incident_id == bindparam("incident_id"),
    Alert.state == bindparam("state"),
    Alert.joined_alert_id.is_(None),
)
_COUNT_ALERTS = select(func.count()).select_from(Alert).where(*_ALERTS_IN_STATE)
_ALERT_COLUMNS = joined_to_source(
    select(
        Alert.id,
        Alert.state,
        Alert.raised_at,
        Alert.person_id,
        Person.name.label("person_name"),
        Alert.claim_id,
        Claim.report_id,
        Organization.name.label("source"),
        Alert.closed_at,
        Alert.closed_by_claim_id,
        Alert.close_note,
        Alert.closed_by,
        Alert.close_reason,
        Alert.reopened_by,
        Alert.reopen_note,
    )
    .join(Person, Person.id == Alert.person_id)
    .join(Claim, Claim.id == Alert.claim_id)
)
_JOINED_SOURCES = (
    joined_to_source(
        select(Alert.joined_alert_id, Organization.name).join(Claim, Claim.id == Alert.claim_id)
    )
    .where(Alert.joined_alert_id.in_(bindparam("alert_ids", expanding=True)))
    .order_by(Alert.position, Alert.id)
)
_ALERT_ROWS = (
    _ALERT_COLUMNS.where(*_ALERTS_IN_STATE)
    .order_by(Alert.position.desc(), Alert.id.desc())
    .offset(bindparam("offset"))
    .limit(bindparam("limit"))
)


def people_page(
    session: Session, incident_id: str, *, offset: int = 0, limit: int = PEOPLE_PER_PAGE
) -> Page[PersonListing]:
    """One page of the incident's people (by name, then id), each with its claims in
    publication order and the source report behind each claim: four statements whatever
    the sizes. ``next_after`` is the cursor of the next page (:func:`people_page_after`).

    Plain rows, not ORM objects: the page is read-only and this keeps it fast.
    """
    limit = clamp_limit(limit)
    offset = max(0, offset)
    total = session.scalar(_COUNT_PEOPLE, {"incident_id": incident_id})
    rows = session.execute(
        _PEOPLE_ROWS, {"incident_id": incident_id, "offset": offset, "limit": limit + 1}
    ).all()
    return _listed(session, rows, total or 0, offset, limit, by_cursor=False)


def people_page_after(
    session: Session, incident_id: str, *, after: str | None, limit: int = PEOPLE_PER_PAGE
) -> Page[PersonListing]:
    """The page of the incident's people that follows the cursor ``after`` (the
    ``next_after`` of the page before; None for the first page), found by keyset: the
    rows after its ``(name_key, id)``, a range of the name index however deep the page,
    instead of every earlier row read and skipped as an offset does. The total is still
    counted exactly. Four statements, as :func:`people_page`.

    :class:`~trace_app.domain.errors.BadCursorError` for a cursor Trace did not write.
    A person added or removed before the cursor since it was written shifts the page's
    numbering (``offset`` is the cursor's count of rows before it), never its rows: no
    row is shown twice or skipped.
    """
    limit = clamp_limit(limit)
    cursor = people_cursor.decode(after) if after else None
    total = session.scalar(_COUNT_PEOPLE, {"incident_id": incident_id}) or 0
    if cursor is None:
        offset = 0
        rows = session.execute(
            _PEOPLE_ROWS, {"incident_id": incident_id, "offset": 0, "limit": limit + 1}
        ).all()
    else:
        offset = min(cursor.rows_before, total)
        rows = session.execute(
            _PEOPLE_AFTER,
            {
                "incident_id": incident_id,
                "name_key": cursor.name_key,
                "id": cursor.id,
                "limit": limit + 1,
            },
        ).all()
    return _listed(session, rows, total, offset, limit, by_cursor=True)


def _listed(
    session: Session,
    rows: Sequence[Row[str, str, int | None, str]],
    total: int,
    offset: int,
    limit: int,
    *,
    by_cursor: bool,
) -> Page[PersonListing]:
    """A page of the listing from its rows (read one beyond the page): the groups filled
    in, and the cursor of the next page when there is one."""
    shown = rows[:limit]
    next_after = None
    if len(rows) > limit:
        last = shown[-1]
        next_after = people_cursor.encode(
            people_cursor.PeopleCursor(
                last.name_key, last.id, min(offset + len(shown), people_cursor.MAX_ROWS_BEFORE)
            )
        )
    people = {row.id: PersonListing(row.id, row.name, row.age) for row in shown}
    _fill_groups(session, people)
    return Page(
        items=list(people.values()),
        total=total,
        offset=offset,
        limit=limit,
        next_after=next_after,
        by_cursor=by_cursor,
    )


_GROUP_MEMBERS = (
    select(Person.id, Person.name, Person.group_id)
    .where(
        rare(Person.group_id.in_(bindparam("keys", expanding=True))),
        Person.group_id != Person.id,
    )
    .order_by(Person.id)
)


def _fill_groups(session: Session, people: dict[str, PersonListing]) -> None:
    """Add to each listed group key record its group's other names, every record's
    claims, in publication order, and the group's status: two statements."""
    if not people:
        return
    owner = {pid: pid for pid in people}
    for member_id, name, key in session.execute(_GROUP_MEMBERS, {"keys": list(people)}):
        owner[member_id] = str(key)
        people[str(key)].other_names.append(name)
    for c in session.execute(_CLAIM_ROWS, {"person_ids": list(owner)}):
        people[owner[c.person_id]].claims.append(
            ClaimListing(
                c.id,
                c.status,
                c.location,
                c.report_id,
                c.summary,
                c.source,
                c.reported_at,
                c.position,
                c.person_id,
            )
        )
    for pid, listing in list(people.items()):  # the group's status, by the one rule
        people[pid] = listing.with_status()


def alerts_page(
    session: Session,
    incident_id: str,
    *,
    state: AlertState = AlertState.OPEN,
    offset: int = 0,
    limit: int = OPEN_ALERTS_SHOWN,
) -> Page[AlertListing]:
    """The incident's alerts in one state, newest first, with person and source (and,
    for closed ones, what closed them): two statements."""
    limit = clamp_limit(limit, OPEN_ALERTS_SHOWN)
    offset = max(0, offset)
    params = {"incident_id": incident_id, "state": state.value}
    total = session.scalar(_COUNT_ALERTS, params)
    rows = session.execute(_ALERT_ROWS, {**params, "offset": offset, "limit": limit})
    alerts = _with_sources(session, [AlertListing(*row) for row in rows])
    return Page(items=alerts, total=total or 0, offset=offset, limit=limit)


def _with_sources(session: Session, alerts: list[AlertListing]) -> list[AlertListing]:
    """Each alert with the sources of the missing reports that joined it: one statement."""
    if not alerts:
        return alerts
    joined: dict[str, list[str]] = {}
    for alert_id, source in session.execute(_JOINED_SOURCES, {"alert_ids": [a.id for a in alerts]}):
        joined.setdefault(str(alert_id), []).append(source)
    return [replace(a, other_sources=tuple(joined[a.id])) if a.id in joined else a for a in alerts]


def person_listings(session: Session, person_ids: list[str]) -> list[PersonListing]:
    """The given people in the given order, each with its claims (a group key record
    with its group's other names and claims): three statements."""
    if not person_ids:
        return []
    rows = session.execute(
        select(Person.id, Person.name, Person.age).where(Person.id.in_(person_ids))
    ).all()
    found = {row.id: PersonListing(row.id, row.name, row.age) for row in rows}
    _fill_groups(session, found)
    return [found[pid] for pid in person_ids if pid in found]


def open_alerts(
    session: Session, incident_id: str, *, limit: int = OPEN_ALERTS_SHOWN
) -> Page[AlertListing]:
    """The newest open alerts of the incident, with person and source: two statements."""
    return alerts_page(session, incident_id, state=AlertState.OPEN, limit=limit)


def get_alert(session: Session, alert_id: str) -> AlertListing:
    """One alert with its person and source."""
    row = session.execute(
        _ALERT_COLUMNS.where(Alert.id == bindparam("alert_id")), {"alert_id": alert_id}
    ).first()
    if row is None:
        raise NotFoundError(f"No alert with id {alert_id!r}.")
    return _with_sources(session, [AlertListing(*row)])[0]


def person_alerts(session: Session, person_ids: list[str]) -> list[AlertListing]:
    """Every alert of one person (all the records of its group), newest first, with its
    sources; the missing reports that joined an alert are among its sources, not listed
    as alerts: two statements."""
    rows = session.execute(
        _ALERT_COLUMNS.where(
            Alert.person_id.in_(bindparam("person_ids", expanding=True)),
            Alert.joined_alert_id.is_(None),
        ).order_by(Alert.position.desc(), Alert.id.desc()),
        {"person_ids": person_ids},
    )
    return _with_sources(session, [AlertListing(*row) for row in rows])


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
    report = find_report(session, report_id)
    if report is None:
        raise NotFoundError(f"No report with id {report_id!r}.")
    return report


def find_report(session: Session, report_id: str) -> Report | None:
    """:func:`get_report`, or None for an unknown id."""
    return session.scalars(
        select(Report)
        .where(Report.id == report_id)
        .options(
            joinedload(Report.organization),
            joinedload(Report.person),
            joinedload(Report.incident),
            selectinload(Report.claims),
        )
    ).first()


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


def open_alerts_of(
    session: Session,
    incident_id: str,
    person_ids: Collection[str],
    *,
    limit: int = OPEN_ALERTS_SHOWN,
) -> Page[AlertListing]:
    """The newest open alerts of the incident about the given people (the People page's
    alerts filtered by its search): the incident's open alerts are read as ids (one
    narrow statement), then the shown ones in full."""
    limit = clamp_limit(limit, OPEN_ALERTS_SHOWN)
    wanted = set(person_ids)
    rows = session.execute(
        select(Alert.id, Alert.person_id)
        .where(*_ALERTS_IN_STATE)
        .order_by(Alert.position.desc(), Alert.id.desc()),
        {"incident_id": incident_id, "state": AlertState.OPEN.value},
    ).all()
    matching = [alert_id for alert_id, person_id in rows if person_id in wanted]
    shown = matching[:limit]
    found: dict[str, AlertListing] = {}
    if shown:
        for row in session.execute(_ALERT_COLUMNS.where(Alert.id.in_(shown))):
            found[row.id] = AlertListing(*row)
    return Page(items=[found[a] for a in shown], total=len(matching), offset=0, limit=limit)
