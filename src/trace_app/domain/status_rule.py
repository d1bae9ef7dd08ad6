"""The one status rule: **the claim about the latest moment, over the person's linked
group, decides the person's status** (ADR 0160).

A person, to the reader, is a linked group (:mod:`trace_app.domain.groups`): a record
alone, or the records decided "same". Its status is what the newest claim of any of
its records says; each record's own status (the same rule over its own claims) is a
detail beside it. Every place that says a person's status reads it from here:

- :func:`current_status`, the rule over claims already read (the person page and API,
  the People list and ``GET /api/incidents/{id}/people`` through
  :func:`trace_app.domain.queries.person_listings`, the Duplicates queue's facts);
- :func:`group_statuses`, the rule for a batch of records read in three statements
  (the people CSV, the PFIF export's description);
- :func:`group_status_sql`, the rule as SQL for the search's ``status`` filter, in the
  same order (``reported_at``, then publication order, then claim id), so that a
  filter and a page never disagree; :func:`record_status_sql` is the record's own.

The alert rule (:func:`trace_app.domain.alerts.settle_alerts`) replays the group's claims
in the same order: a group whose status is *missing* has an open alert, one whose status
is safe, admitted or deceased has none (unless a person closed or reopened it by hand).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, ScalarSelect, UnaryExpression, case, select
from sqlalchemy.orm import Session, aliased

from trace_app.domain.claim_source import joined_to_source
from trace_app.domain.groups import group_members
from trace_app.store.models import Claim, ClaimStatus, Organization, Person, Report

# Claims reported this close before the deciding one, from another source and saying
# something else, make the status disputed: a responder should read both.
DISPUTE_WINDOW = timedelta(hours=6)


@dataclass(frozen=True, slots=True)
class StatusClaim:
    """What :func:`current_status` needs of a claim."""

    claim_id: str
    status: ClaimStatus
    reported_at: datetime
    position: int  # publication order within the incident
    source: str


@dataclass(frozen=True, slots=True)
class CurrentStatus:
    status: ClaimStatus | None  # None: no claim at all
    claim_id: str | None
    reported_at: datetime | None
    disputed_by: tuple[str, ...] = ()  # ids of the claims that disagree (see the rule)


NO_STATUS = CurrentStatus(None, None, None)


def described_order(claim: StatusClaim) -> tuple[datetime, int, str]:
    """The order claims describe: the report's time, then publication, then claim id."""
    return (claim.reported_at, claim.position, claim.claim_id)


def current_status(claims: Iterable[StatusClaim]) -> CurrentStatus:
    """The status the claims give: **the claim about the latest moment wins**. Pass a
    group's claims for the person's status, one record's for that record's own.

    - "Latest" is the report's ``reported_at`` (the moment the report describes), not when
      it was published: a report published late about an earlier moment does not undo
      newer news. Claims about the same moment: the one published last wins.
    - Every status counts the same, "deceased" included: a later "seen" after "deceased"
      is news a responder must see, not one the rule hides.
    - The status is *disputed* by every claim from another source, reported no more than
      ``DISPUTE_WINDOW`` (6 hours) before the winning one, that says something else
      ("missing" at 10:00 from the police, "safe" at 11:00 from a camp): the rule still
      picks the later one, and the page shows that someone should check.
    - No claims: no status.
    """
    ordered = sorted(claims, key=described_order)
    if not ordered:
        return NO_STATUS
    winner = ordered[-1]
    disputed = tuple(
        c.claim_id
        for c in ordered[:-1]
        if c.status is not winner.status
        and c.source != winner.source
        and winner.reported_at - c.reported_at <= DISPUTE_WINDOW
    )
    return CurrentStatus(winner.status, winner.claim_id, winner.reported_at, disputed)


@dataclass(frozen=True, slots=True)
class GroupStatus:
    """A record's status as :func:`group_statuses` reads it: the group's, with the
    deciding claim's place and source, and the record's own beside it."""

    group_key: str  # the group's key (its smallest record id; the record's own when alone)
    status: CurrentStatus  # the group's: what the person's status is
    location: str  # where the deciding claim places the person ("" without one)
    source: str  # who said so
    record_status: CurrentStatus  # this record's claims alone (a detail)
    record_location: str  # where the claim deciding record_status places the person
    record_source: str  # who said that
    record_claims: int  # how many claims this record has


def group_statuses(session: Session, person_ids: Sequence[str]) -> dict[str, GroupStatus]:
    """Each of ``person_ids`` with its group's status and its own (:class:`GroupStatus`):
    three statements for the batch (the groups, their members, every member's claims)."""
    if not person_ids:
        return {}
    members = group_members(session, person_ids)
    key_of = {pid: key for key, ids in members.items() for pid in ids}
    every = sorted(key_of)
    rows = session.execute(
        joined_to_source(
            select(
                Claim.id,
                Claim.person_id,
                Claim.status,
                Report.reported_at,
                Claim.position,
                Organization.name,
                Claim.location,
            )
        ).where(Claim.person_id.in_(every))
    )
    by_record: dict[str, list[StatusClaim]] = {pid: [] for pid in every}
    where: dict[str, tuple[str, str]] = {}
    for claim_id, person_id, said, reported_at, position, source, location in rows:
        claim = StatusClaim(claim_id, ClaimStatus(said), reported_at, position, source)
        by_record[person_id].append(claim)
        where[claim_id] = (location or "", source)
    found: dict[str, GroupStatus] = {}
    for key, ids in members.items():
        status = current_status(c for pid in ids for c in by_record[pid])
        location, source = where.get(status.claim_id or "", ("", ""))
        for pid in ids:
            own = current_status(by_record[pid])
            own_location, own_source = where.get(own.claim_id or "", ("", ""))
            found[pid] = GroupStatus(
                key, status, location, source, own, own_location, own_source, len(by_record[pid])
            )
    return {pid: found[pid] for pid in person_ids if pid in found}


def _latest_first() -> tuple[UnaryExpression[Any], ...]:
    """The described order, newest first (:func:`described_order` reversed), as SQL."""
    return (Report.reported_at.desc(), Claim.position.desc(), Claim.id.desc())


def record_status_sql() -> ScalarSelect[str]:
    """SQL, correlated to ``Person``: the status of the record's own newest claim (the
    detail beside the person's status); null without a claim."""
    return (
        select(Claim.status)
        .join(Report, Report.id == Claim.report_id)
        .where(Claim.person_id == Person.id)
        .order_by(*_latest_first())
        .limit(1)
        .scalar_subquery()
    )


def group_status_sql() -> ColumnElement[str]:
    """SQL, correlated to ``Person``: the person's status by the rule, the newest claim of
    any record of its group (a record alone: its own newest claim, read exactly as
    :func:`record_status_sql`; a record in a group: the group's records through the
    ``people.group_id`` index, then their claims). Every record of a group has the same
    value, so a filter keeps or drops a group whole. Built once, as the People page's
    statements are."""
    return _GROUP_STATUS


def _group_status_sql() -> ColumnElement[str]:
    # the expression group_status_sql describes
    member = aliased(Person)
    # correlated two levels down: the outer query's person, never a second FROM of people
    records = select(member.id).where(member.group_id == Person.group_id).correlate(Person)
    grouped = (
        select(Claim.status)
        .join(Report, Report.id == Claim.report_id)
        .where(Claim.person_id.in_(records))
        .order_by(*_latest_first())
        .limit(1)
        .scalar_subquery()
    )
    return case((Person.group_id.is_(None), record_status_sql()), else_=grouped)


_GROUP_STATUS = _group_status_sql()
