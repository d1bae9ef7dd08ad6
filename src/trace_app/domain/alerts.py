"""The one rule for alerts: one alert per person (a linked group), opened by a missing
claim, joined by further missing claims, closed by a later safe, admitted or deceased one.

Each missing claim has one alert row (made when the claim is published). Which rows are
open, which joined which, and what closed them is **recomputed from the group's claims**
by :func:`settle_alerts`, the rule, whenever something changes that it depends on: a
claim published (:mod:`trace_app.domain.publish`), a "same", "different" or "undecided"
decision (:mod:`trace_app.domain.links`), an alert closed or reopened by hand
(:mod:`trace_app.domain.alert_actions`). So an undone "same" decision reopens exactly
what the linking closed: there is no separate reopen code.

The rule replays a group's claims in the order they describe (the report's
``reported_at``, then publication order, then id; the order of
:func:`trace_app.domain.person_view.current_status`):

- a *missing* claim opens the group's alert when none is open; while one is open it
  *joins* it as another source (``joined_alert_id``; its state mirrors the alert's);
- a *safe*, *admitted* or *deceased* claim closes the open alert and all its sources
  (``closed_by_claim_id``, and the time it first closed);
- a *seen* claim changes no alert;
- a row a person closed by hand as a duplicate or withdrawn (``close_reason``) stays as
  they left it and takes no part, until it is reopened.

The result depends only on the group's claims, its records and the hand closes, never on
the order things were published or decided in (a property test replays them in many
orders). Nothing here runs a model; the investigation never calls it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.domain.groups import group_members
from trace_app.store.models import Alert, AlertState, Claim, ClaimStatus, Report
from trace_app.store.types import new_id, utc_now

CLOSING_STATUSES = frozenset({ClaimStatus.SAFE, ClaimStatus.ADMITTED, ClaimStatus.DECEASED})


@dataclass(frozen=True, slots=True)
class ClaimFact:
    """What the rule needs of a claim."""

    claim_id: str
    status: ClaimStatus
    reported_at: datetime
    position: int


def alert_for_missing_claim(claim: Claim, reported_at: datetime) -> Alert:
    """The alert row of a newly published missing claim; :func:`settle_alerts` then says
    whether it opens the group's alert, joins it or is closed at once."""
    return Alert(
        id=new_id("alr"),
        incident_id=claim.incident_id,
        person_id=claim.person_id,
        claim_id=claim.id,
        state=AlertState.OPEN.value,
        raised_at=reported_at,
        position=claim.position,
    )


@dataclass(frozen=True, slots=True)
class Settled:
    """What :func:`settle_alerts` read and changed, for the outbox
    (:func:`trace_app.domain.status_events.record_published`), which then needs no
    statement of its own."""

    group_of: dict[str, str]  # each record of the groups -> its group's key
    claims: dict[str, list[ClaimFact]]  # group key -> its claims
    rows: dict[str, Alert]  # claim id -> its alert row (states as settled)
    changed: dict[str, str]  # alert id -> the state it had, for each row whose state changed


def settle_alerts(session: Session, person_ids: Iterable[str]) -> Settled:
    """Apply the rule to the groups of ``person_ids``: three statements for all of them
    (group members, their claims, their alert rows), then the changes in memory. Returns
    what it read and which rows' states it changed (:class:`Settled`). The caller
    flushes and commits."""
    changed: dict[str, str] = {}
    groups = group_members(session, list(set(person_ids)))
    if not groups:
        return Settled({}, {}, {}, changed)
    group_of = {pid: key for key, members in groups.items() for pid in members}
    everyone = sorted(group_of)
    claims: dict[str, list[ClaimFact]] = {key: [] for key in groups}
    for claim_id, person_id, status, reported_at, position in session.execute(
        select(Claim.id, Claim.person_id, Claim.status, Report.reported_at, Claim.position)
        .join(Report, Report.id == Claim.report_id)
        .where(Claim.person_id.in_(everyone))
    ):
        fact = ClaimFact(claim_id, ClaimStatus(status), reported_at, position)
        claims[group_of[person_id]].append(fact)
    rows = {
        a.claim_id: a for a in session.scalars(select(Alert).where(Alert.person_id.in_(everyone)))
    }
    for facts in claims.values():
        _settle_group(facts, rows, changed)
    return Settled(group_of, claims, rows, changed)


def _settle_group(
    facts: Sequence[ClaimFact], rows: dict[str, Alert], changed: dict[str, str]
) -> None:
    episode: list[Alert] = []  # the open alert (first) and the rows that joined it
    for fact in sorted(facts, key=lambda c: (c.reported_at, c.position, c.claim_id)):
        if fact.status is ClaimStatus.MISSING:
            row = rows.get(fact.claim_id)
            if row is None or row.close_reason is not None:
                continue
            episode.append(row)
        elif fact.status in CLOSING_STATUSES and episode:
            _set_episode(episode, fact.claim_id, changed)
            episode = []
    if episode:
        _set_episode(episode, None, changed)


def _set_episode(
    episode: list[Alert], closing_claim_id: str | None, changed: dict[str, str]
) -> None:
    lead = episode[0]
    now = utc_now()
    for row in episode:
        joined = None if row is lead else lead.id
        if row.joined_alert_id != joined:
            row.joined_alert_id = joined
        if closing_claim_id is None:
            if row.state != AlertState.OPEN.value:
                changed.setdefault(row.id, row.state)
                row.state = AlertState.OPEN.value
                row.closed_by_claim_id = None
                row.closed_at = None
        elif row.closed_by_claim_id != closing_claim_id or row.state != AlertState.CLOSED.value:
            if row.state != AlertState.CLOSED.value:
                changed.setdefault(row.id, row.state)
            row.state = AlertState.CLOSED.value
            row.closed_by_claim_id = closing_claim_id
            row.closed_at = now
