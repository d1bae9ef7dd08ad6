"""The one rule for opening and closing alerts, and a person closing one with a note.

The rule, applied whenever a claim is published (:func:`apply_alert_rule`):

- A *missing* claim opens a new alert for its person, even when an earlier alert was
  closed. If the person already has a closing claim reported *later* than this missing
  claim (a report published late about an earlier moment), the alert is saved already
  closed by that claim, so the newest word about the person decides.
- A *safe*, *admitted* or *deceased* claim closes every open alert of its person raised
  at or before the time the claim was reported, and records itself
  (``closed_by_claim_id``) and the time of closing.
- A *seen* claim changes no alert.

"Later" compares the reports' ``reported_at`` times. The rule reads one person's
:class:`PersonAlerts` (its open alerts and its closing claims), which
:func:`load_alert_states` reads for many people in two statements, so a batch of
publications (:func:`trace_app.domain.publish.publish_reports`) applies the same rule
claim after claim without a query each. Nothing here runs a model; the investigation
never calls it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.domain import audit
from trace_app.domain.audit import Actor
from trace_app.domain.errors import AlertClosedError, NotFoundError
from trace_app.domain.text import clean_note
from trace_app.store.models import Alert, AlertState, Claim, ClaimStatus, Report
from trace_app.store.types import new_id, utc_now

CLOSING_STATUSES = frozenset({ClaimStatus.SAFE, ClaimStatus.ADMITTED, ClaimStatus.DECEASED})


@dataclass(frozen=True, slots=True)
class ClosingClaim:
    """A safe, admitted or deceased claim, as the rule compares them."""

    reported_at: datetime
    position: int
    claim_id: str


@dataclass(slots=True)
class PersonAlerts:
    """What the rule knows of one person: the open alerts and every closing claim.

    :func:`apply_alert_rule` keeps it up to date as it adds claims and alerts."""

    open_alerts: list[Alert] = field(default_factory=list)
    closing_claims: list[ClosingClaim] = field(default_factory=list)


def load_alert_states(session: Session, person_ids: Iterable[str]) -> dict[str, PersonAlerts]:
    """Each person's :class:`PersonAlerts` as stored (two statements for all of them); a
    person with no alert and no closing claim gets an empty state."""
    ids = sorted(set(person_ids))
    states = {pid: PersonAlerts() for pid in ids}
    if not ids:
        return states
    for alert in session.scalars(
        select(Alert)
        .where(Alert.person_id.in_(ids), Alert.state == AlertState.OPEN.value)
        .order_by(Alert.position, Alert.id)
    ):
        states[alert.person_id].open_alerts.append(alert)
    rows = session.execute(
        select(Claim.person_id, Report.reported_at, Claim.position, Claim.id)
        .join(Report, Report.id == Claim.report_id)
        .where(
            Claim.person_id.in_(ids),
            Claim.status.in_([s.value for s in CLOSING_STATUSES]),
        )
    )
    for person_id, reported_at, position, claim_id in rows:
        states[person_id].closing_claims.append(ClosingClaim(reported_at, position, claim_id))
    return states


def apply_alert_rule(
    session: Session,
    claim: Claim,
    reported_at: datetime,
    state: PersonAlerts | None = None,
) -> Alert | None:
    """Open or close the person's alerts for a newly added ``claim`` (reported at
    ``reported_at``); return the alert it opened, if any. ``state`` is the person's
    :class:`PersonAlerts` (read from the database when not given), updated here for the
    next claim about the same person. The caller flushes and commits."""
    if state is None:
        state = load_alert_states(session, [claim.person_id])[claim.person_id]
    status = ClaimStatus(claim.status)
    if status is ClaimStatus.MISSING:
        alert = _open_alert(claim, reported_at, state)
        session.add(alert)
        return alert
    if status in CLOSING_STATUSES:
        _close_open_alerts(claim, reported_at, state)
    return None


def _open_alert(claim: Claim, reported_at: datetime, state: PersonAlerts) -> Alert:
    later = [c for c in state.closing_claims if c.reported_at > reported_at]
    later_closing = min(later, key=lambda c: (c.reported_at, c.position), default=None)
    alert = Alert(
        id=new_id("alr"),
        incident_id=claim.incident_id,
        person_id=claim.person_id,
        claim_id=claim.id,
        state=AlertState.OPEN.value,
        raised_at=reported_at,
        position=claim.position,
    )
    if later_closing is not None:
        alert.state = AlertState.CLOSED.value
        alert.closed_by_claim_id = later_closing.claim_id
        alert.closed_at = utc_now()
    else:
        state.open_alerts.append(alert)
    return alert


def _close_open_alerts(claim: Claim, reported_at: datetime, state: PersonAlerts) -> None:
    now = utc_now()
    still_open: list[Alert] = []
    for alert in state.open_alerts:
        if alert.raised_at <= reported_at:
            alert.state = AlertState.CLOSED.value
            alert.closed_by_claim_id = claim.id
            alert.closed_at = now
        else:
            still_open.append(alert)
    state.open_alerts = still_open
    state.closing_claims.append(ClosingClaim(reported_at, claim.position, claim.id))


def close_alert(session: Session, alert_id: str, note: str, *, actor: Actor) -> Alert:
    """``actor`` closes an open alert with a note (audited as ``alert.close``). Raises
    :class:`NotFoundError` for an unknown alert, :class:`AlertClosedError` when it is
    already closed and :class:`InvalidInputError` for an empty note. The caller commits."""
    text = clean_note(note, "Write a note that says why the alert is closed.")
    alert = session.get(Alert, alert_id, with_for_update=True)
    if alert is None:
        raise NotFoundError(f"No alert with id {alert_id!r}.")
    if alert.state != AlertState.OPEN.value:
        raise AlertClosedError("This alert is already closed.")
    alert.state = AlertState.CLOSED.value
    alert.close_note = text
    alert.closed_at = utc_now()
    alert.closed_by = actor.name
    session.flush()
    audit.record(
        session,
        actor,
        "alert.close",
        object_type="alert",
        object_id=alert.id,
        incident_id=alert.incident_id,
        touched=[f"person:{alert.person_id}"],
        before={"state": AlertState.OPEN.value},
        after={"state": AlertState.CLOSED.value, "note": text},
    )
    return alert
