"""Read-side functions for people, counted and listed as the reader sees them: one row per
linked group (:mod:`trace_app.domain.groups`), with every record's claims and the
group's status; keyset pages (ADR 0086); a fixed number of statements each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from sqlalchemy import Row, bindparam, func, select, tuple_
from sqlalchemy.orm import Session

from trace_app.domain import people_cursor
from trace_app.domain.claim_source import joined_to_source
from trace_app.domain.groups import is_group_lead
from trace_app.domain.queries import PEOPLE_PER_PAGE, Page, clamp_limit
from trace_app.domain.status_rule import NO_STATUS, CurrentStatus, StatusClaim, current_status
from trace_app.store.models import (
    Claim,
    ClaimStatus,
    Organization,
    Person,
    Report,
)
from trace_app.store.sql import rare


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
