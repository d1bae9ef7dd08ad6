"""The transactional outbox's writer: every change to a person's status or alert writes
its event rows **in the change's own transaction** (docs/decisions/0180-notifications-outbox.md).

A change site reads the groups it is about to change with :func:`before`, makes its
change, then calls :func:`record_changes` with that snapshot. :func:`record_changes`
reads the same groups again and writes, for each linked group after the change (keyed by
its lead record, :func:`trace_app.domain.groups.group_key`):

- ``status.changed`` when the group's status (:mod:`trace_app.domain.status_rule`)
  differs from the status any of its records showed before (a record's group before the
  change: after a "same" decision two groups become one, after "different" one becomes
  two); ``previous_status`` is the lead record's earlier status when that differs, else
  the first record's that does;
- ``alert.opened`` when the group has an open alert and one of its records' groups had
  none; ``alert.closed`` when it has none and one of its records' groups had one;
- and when the new status is *deceased*, a ``follow_ups`` row (inform the family in
  person), unless the group has one still open.

Nothing is written for a group whose status and alert look as they did to every one of
its records: no event without a change. Since the rows are added to the caller's
session, a rollback of the change takes its events with it: no change without its event.
The change sites are :func:`trace_app.domain.publish.publish_reports` (every report,
import and hand close that publishes a claim), :func:`trace_app.domain.links.decide_link`
and :mod:`trace_app.domain.alert_actions` (a close as duplicate or withdrawn, a reopen of
one). ``inquiry.created`` is written by :func:`write_event` from
``trace_app.notifications.inquiries``.

Events are fanned out to subscribers later, by the delivery worker
(``trace_app.notifications``): the change's transaction stays as short as it was.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

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
    open_alert_id: str | None  # the group's open alert (the lead row, not a joined source)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The groups of some records before a change (:func:`before`)."""

    group_of: Mapping[str, str]  # record id -> its group's key
    groups: Mapping[str, GroupState]  # group key -> its state


def read_groups(session: Session, person_ids: Iterable[str]) -> Snapshot:
    """The groups of ``person_ids`` and their state now: four statements (the groups,
    their members, the members' claims, their open alerts)."""
    members = group_members(session, sorted(set(person_ids)))
    group_of = {pid: key for key, ids in members.items() for pid in ids}
    if not group_of:
        return Snapshot({}, {})
    everyone = sorted(group_of)
    claims: dict[str, list[StatusClaim]] = {key: [] for key in members}
    report_of: dict[str, str] = {}
    for claim_id, person_id, status, report_id, reported_at, position in session.execute(
        select(
            Claim.id,
            Claim.person_id,
            Claim.status,
            Claim.report_id,
            Report.reported_at,
            Claim.position,
        )
        .join(Report, Report.id == Claim.report_id)
        .where(Claim.person_id.in_(everyone))
    ):
        claims[group_of[person_id]].append(
            StatusClaim(claim_id, ClaimStatus(status), reported_at, position, "")
        )
        report_of[claim_id] = report_id
    open_alert: dict[str, str] = {}
    for alert_id, person_id in session.execute(
        select(Alert.id, Alert.person_id)
        .where(
            Alert.person_id.in_(everyone),
            Alert.state == AlertState.OPEN.value,
            Alert.joined_alert_id.is_(None),
        )
        .order_by(Alert.position, Alert.id)
    ):
        open_alert.setdefault(group_of[person_id], alert_id)
    groups: dict[str, GroupState] = {}
    for key, facts in claims.items():
        deciding = current_status(facts)
        groups[key] = GroupState(
            deciding.status.value if deciding.status else None,
            deciding.claim_id,
            report_of.get(deciding.claim_id or ""),
            open_alert.get(key),
        )
    return Snapshot(group_of, groups)


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


def record_changes(session: Session, snapshot: Snapshot, incident_id: str) -> list[OutboxEvent]:
    """Compare the groups of ``snapshot``'s records now with ``snapshot`` and add the
    events (and follow-ups) the differences call for, as the module says; returns the
    events added. Flushes the caller's session first; the caller commits."""
    if not snapshot.group_of:
        return []
    session.flush()
    now_state = read_groups(session, snapshot.group_of)
    members: dict[str, list[str]] = {}
    for pid, key in now_state.group_of.items():
        members.setdefault(key, []).append(pid)
    events: list[OutboxEvent] = []
    names: dict[str, str] | None = None
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
        if names is None:
            names = {
                pid: name
                for pid, name in session.execute(
                    select(Person.id, Person.name).where(Person.id.in_(sorted(members)))
                )
            }
        name = names.get(key, "")
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
