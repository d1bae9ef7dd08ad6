"""The transactional outbox's writer: every change to a person's status or alert writes
its event rows **in the change's own transaction** (docs/decisions/0180-notifications-outbox.md).

Two ways in, one comparison. A publication (:func:`trace_app.domain.publish.publish_reports`:
every report, import and hand close that publishes a claim) calls
:func:`record_published` with what the alert rule read and changed
(:func:`trace_app.domain.alerts.settle_alerts`): the groups after it are those rows,
before it the same rows without the new claims and with the alert rows' earlier states,
so it reads nothing itself. A link decision (:func:`trace_app.domain.links.decide_link`)
and a hand close or reopen (:mod:`trace_app.domain.alert_actions`) read the groups first
with :func:`before` and hand that to :func:`record_changes` after the change, which reads
them again (after a regrouping, the groups too). For each linked group after the change
(keyed by its lead record, :func:`trace_app.domain.groups.group_key`) they write:

- ``status.changed`` when the group's status (:mod:`trace_app.domain.status_rule`)
  differs from the status any of its records showed before (a record's group before the
  change: after a "same" decision two groups become one, after "different" one becomes
  two); ``previous_status`` is the lead record's earlier status when that differs, else
  the first record's that does;
- ``alert.opened`` when the group has an open alert and one of its records' groups had
  none; ``alert.closed`` when it has none and one of its records' groups had one (the
  alert rows as the rule of :mod:`trace_app.domain.alerts` left them);
- and when the new status is *deceased*, a ``follow_ups`` row (inform the family in
  person), unless the group has one still open.

Nothing is written for a group whose status and alert look as they did to every one of
its records: no event without a change. Since the rows are added to the caller's
session, a rollback of the change takes its events with it: no change without its event.
``inquiry.created`` is written by :func:`write_event` from
``trace_app.notifications.inquiries``.

Events are fanned out to subscribers later, by the delivery worker
(``trace_app.notifications``): the change's transaction stays as short as it was.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session
from sqlalchemy.orm.util import identity_key

from trace_app.domain.alerts import Settled
from trace_app.domain.groups import group_members
from trace_app.domain.status_rule import StatusClaim, current_status
from trace_app.store.models import Alert, AlertState, Claim, ClaimStatus, Person, Report
from trace_app.store.notification_models import EventKind, FollowUp, FollowUpKind, OutboxEvent
from trace_app.store.types import new_id, utc_now


@dataclass(frozen=True, slots=True)
class GroupState:
    """What subscribers see of a linked group: its status and its open alert."""

    status: str | None  # None: no claim at all
    claim_id: str | None  # the claim that decides the status
    report_id: str | None  # that claim's report
    open_alert_id: str | None  # the group's open alert (its lead row when known)


@dataclass(frozen=True, slots=True)
class Fact:
    """A claim of a record, with the alert row of a missing claim (as stored now)."""

    claim_id: str
    status: ClaimStatus
    report_id: str | None  # None: not known (an earlier claim, for a publication)
    reported_at: datetime
    position: int
    alert_id: str | None
    alert_state: str | None
    alert_joined: bool  # the row joined another open alert as a further source


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The groups of some records at one moment (:func:`before`, :func:`read_groups`)."""

    group_of: Mapping[str, str]  # record id -> its group's key
    groups: Mapping[str, GroupState]  # group key -> its state


# The claims of the records in the expanding parameter ``ids``, each with its report's
# time and the alert row of a missing claim: one statement, built once.
_FACTS = (
    select(
        Claim.id,
        Claim.person_id,
        Claim.status,
        Claim.report_id,
        Report.reported_at,
        Claim.position,
        Alert.id,
        Alert.state,
        Alert.joined_alert_id,
    )
    .join(Report, Report.id == Claim.report_id)
    .outerjoin(Alert, Alert.claim_id == Claim.id)
    .where(Claim.person_id.in_(bindparam("ids", expanding=True)))
)


def _loaded_groups(session: Session, person_ids: set[str]) -> dict[str, str] | None:
    """The groups of ``person_ids`` from the records the session holds, without a
    statement, when each is loaded and in no group; None otherwise (read them)."""
    found: dict[str, str] = {}
    for pid in person_ids:
        person = session.identity_map.get(identity_key(Person, pid))
        if not isinstance(person, Person) or person.group_id is not None:
            return None
        found[pid] = pid
    return found


def group_state(
    facts: Iterable[Fact],
    *,
    leaving_out: Collection[str] = (),
    states_before: Mapping[str, str] | None = None,
) -> GroupState:
    """A group's status (the one rule, :func:`trace_app.domain.status_rule.current_status`)
    and open alert, as stored, from its claims. ``leaving_out`` and ``states_before``
    give the state *before* a publication from the rows after it: its new claims left
    out, and the alert rows it changed with the states they had
    (:func:`trace_app.domain.alerts.settle_alerts` returns them)."""
    used = [f for f in facts if f.claim_id not in leaving_out]
    deciding = current_status(
        StatusClaim(f.claim_id, f.status, f.reported_at, f.position, "") for f in used
    )
    report_of = {f.claim_id: f.report_id for f in used}
    before = states_before or {}
    open_rows = sorted(
        (f.alert_joined, f.position, f.alert_id)
        for f in used
        if f.alert_id is not None and before.get(f.alert_id, f.alert_state) == AlertState.OPEN.value
    )
    return GroupState(
        deciding.status.value if deciding.status else None,
        deciding.claim_id,
        report_of.get(deciding.claim_id or ""),
        open_rows[0][2] if open_rows else None,
    )


def read_groups(
    session: Session, person_ids: Iterable[str], *, group_of: Mapping[str, str] | None = None
) -> Snapshot:
    """The groups of ``person_ids`` and their state now: one statement for the claims
    and alert rows, and one or two for the groups unless the session holds the records
    (each in no group) or ``group_of`` gives them (no regrouping since they were read)."""
    if group_of is None:
        known = set(person_ids)
        group_of = _loaded_groups(session, known)
        if group_of is None:
            members = group_members(session, sorted(known))
            group_of = {pid: key for key, ids in members.items() for pid in ids}
    if not group_of:
        return Snapshot({}, {})
    facts: dict[str, list[Fact]] = {key: [] for key in group_of.values()}
    rows = session.execute(_FACTS, {"ids": sorted(group_of)})
    for claim_id, pid, status, report_id, at, position, alert_id, state, joined in rows:
        facts[group_of[pid]].append(
            Fact(
                claim_id,
                ClaimStatus(status),
                report_id,
                at,
                position,
                alert_id,
                state,
                joined is not None,
            )
        )
    return Snapshot(dict(group_of), {key: group_state(found) for key, found in facts.items()})


def before(session: Session, person_ids: Iterable[str]) -> Snapshot:
    """Read the groups of ``person_ids`` before a change (pass every record the change
    may touch); hand the result to :func:`record_changes` after it."""
    return read_groups(session, person_ids)


def event_payload(
    *,
    incident_id: str,
    person_id: str,
    person_name: str,
    status: str | None,
    previous_status: str | None,
    report_id: str | None,
    at: str,
    **extra: str | None,
) -> str:
    """An event's payload as stored (JSON text) and sent: never an enquirer's contacts."""
    body: dict[str, Any] = {
        "incident_id": incident_id,
        "person_id": person_id,
        "person_name": person_name,
        "status": status,
        "previous_status": previous_status,
        "at": at,
        "report_id": report_id,
        **extra,
    }
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def write_event(
    session: Session,
    incident_id: str,
    kind: EventKind,
    person_id: str,
    person_name: str,
    state: GroupState,
    *,
    previous_status: str | None,
    report_id: str | None = None,
    **extra: str | None,
) -> OutboxEvent:
    """Add one outbox event to the caller's session (its transaction decides for it)."""
    now = utc_now()
    event = OutboxEvent(
        id=new_id("evt"),
        incident_id=incident_id,
        kind=kind.value,
        person_id=person_id,
        payload=event_payload(
            incident_id=incident_id,
            person_id=person_id,
            person_name=person_name,
            status=state.status,
            previous_status=previous_status,
            report_id=report_id,
            at=now.isoformat().replace("+00:00", "Z"),
            **extra,
        ),
        created_at=now,
    )
    session.add(event)
    return event


def _first_differing(
    lead_before: GroupState | None,
    befores: list[GroupState],
    seen: Callable[[GroupState], object],
    now: object,
) -> GroupState | None:
    """The earlier state in which ``seen`` differs from ``now``: the lead record's when it
    does, else the first record's that does; None when none does."""
    if lead_before is not None and seen(lead_before) != now:
        return lead_before
    return next((state for state in befores if seen(state) != now), None)


def _status(state: GroupState) -> object:
    return state.status


def _has_alert(state: GroupState) -> object:
    return state.open_alert_id is not None


def record_changes(
    session: Session, snapshot: Snapshot, incident_id: str, *, regrouped: bool = False
) -> list[OutboxEvent]:
    """Compare the groups of ``snapshot``'s records now with ``snapshot`` and add the
    events (and follow-ups) the differences call for, as the module says; returns the
    events added. ``regrouped``: the change may have changed which records form a group
    (a link decision), so the groups are read again. Flushes the caller's session first;
    the caller commits."""
    if not snapshot.group_of:
        return []
    session.flush()
    now_state = read_groups(
        session, snapshot.group_of, group_of=None if regrouped else snapshot.group_of
    )
    return _write_differences(session, snapshot, now_state, incident_id)


def record_published(
    session: Session, incident_id: str, settled: Settled, new_claims: Mapping[str, str]
) -> list[OutboxEvent]:
    """:func:`record_changes` for a publication (which adds claims and regroups nothing),
    from what the alert rule read and changed (``settled``,
    :func:`trace_app.domain.alerts.settle_alerts`) and the new claims (claim id -> its
    report id): the groups after it are those rows, and before it the same rows without
    the new claims and with the changed alert rows' earlier states. No statement of its
    own but the events' inserts; the caller flushes and commits."""
    if not settled.group_of:
        return []
    now_groups: dict[str, GroupState] = {}
    earlier_groups: dict[str, GroupState] = {}
    for key, claims in settled.claims.items():
        facts = []
        for claim in claims:
            row = settled.rows.get(claim.claim_id)
            facts.append(
                Fact(
                    claim.claim_id,
                    claim.status,
                    new_claims.get(claim.claim_id),
                    claim.reported_at,
                    claim.position,
                    row.id if row is not None else None,
                    row.state if row is not None else None,
                    row is not None and row.joined_alert_id is not None,
                )
            )
        now_groups[key] = group_state(facts)
        earlier_groups[key] = group_state(
            facts, leaving_out=new_claims, states_before=settled.changed
        )
    earlier = Snapshot(settled.group_of, earlier_groups)
    return _write_differences(session, earlier, Snapshot(settled.group_of, now_groups), incident_id)


def _write_differences(
    session: Session, snapshot: Snapshot, now_state: Snapshot, incident_id: str
) -> list[OutboxEvent]:
    """The events (and follow-ups) for the differences between two readings."""
    members: dict[str, list[str]] = {}
    for pid, key in now_state.group_of.items():
        members.setdefault(key, []).append(pid)
    events: list[OutboxEvent] = []
    for key in sorted(members):
        state = now_state.groups[key]
        befores = [
            snapshot.groups[snapshot.group_of[pid]]
            for pid in sorted(members[key])
            if pid in snapshot.group_of
        ]
        lead_key = snapshot.group_of.get(key)
        lead_before = snapshot.groups[lead_key] if lead_key is not None else None
        was_status = _first_differing(lead_before, befores, _status, state.status)
        has_open = state.open_alert_id is not None
        was_alert = _first_differing(lead_before, befores, _has_alert, has_open)
        if was_status is None and was_alert is None:
            continue
        lead = session.get(Person, key)  # loaded by the change, as a rule: no statement
        name = lead.name if lead is not None else ""
        report_id = (
            state.report_id
            if lead_before is None or lead_before.claim_id != state.claim_id
            else None
        )
        if was_status is not None:
            event = write_event(
                session,
                incident_id,
                EventKind.STATUS_CHANGED,
                key,
                name,
                state,
                previous_status=was_status.status,
                report_id=report_id,
            )
            events.append(event)
            if state.status == ClaimStatus.DECEASED.value:
                _follow_up(session, incident_id, key, event.id)
        if was_alert is not None:
            kind = EventKind.ALERT_OPENED if has_open else EventKind.ALERT_CLOSED
            alert_id = state.open_alert_id if has_open else was_alert.open_alert_id
            events.append(
                write_event(
                    session,
                    incident_id,
                    kind,
                    key,
                    name,
                    state,
                    previous_status=(lead_before or was_alert).status,
                    report_id=report_id,
                    alert_id=alert_id,
                )
            )
    return events


def _follow_up(session: Session, incident_id: str, person_id: str, event_id: str) -> None:
    """An "inform the family in person" follow-up for the group, unless one is open."""
    open_one = session.scalar(
        select(FollowUp.id).where(
            FollowUp.person_id == person_id,
            FollowUp.kind == FollowUpKind.INFORM_IN_PERSON.value,
            FollowUp.done_at.is_(None),
        )
    )
    if open_one is None:
        session.add(
            FollowUp(
                id=new_id("fup"),
                incident_id=incident_id,
                person_id=person_id,
                event_id=event_id,
                kind=FollowUpKind.INFORM_IN_PERSON.value,
                created_at=utc_now(),
            )
        )
