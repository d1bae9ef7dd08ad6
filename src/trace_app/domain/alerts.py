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

"Later" compares the reports' ``reported_at`` times. Nothing here runs a model; the
investigation never calls it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.domain.errors import AlertClosedError, NotFoundError
from trace_app.domain.text import clean_note
from trace_app.store.models import Alert, AlertState, Claim, ClaimStatus, Report
from trace_app.store.types import new_id, utc_now

CLOSING_STATUSES = frozenset({ClaimStatus.SAFE, ClaimStatus.ADMITTED, ClaimStatus.DECEASED})


def apply_alert_rule(session: Session, claim: Claim, reported_at: datetime) -> Alert | None:
    """Open or close the person's alerts for a newly added ``claim`` (reported at
    ``reported_at``); return the alert it opened, if any. The caller flushes and commits."""
    status = ClaimStatus(claim.status)
    if status is ClaimStatus.MISSING:
        return _open_alert(session, claim, reported_at)
    if status in CLOSING_STATUSES:
        _close_open_alerts(session, claim, reported_at)
    return None


def _open_alert(session: Session, claim: Claim, reported_at: datetime) -> Alert:
    later_closing = None
    if claim.person.id is not None:
        later_closing = session.scalars(
            select(Claim)
            .join(Report, Report.id == Claim.report_id)
            .where(
                Claim.person_id == claim.person.id,
                Claim.status.in_([s.value for s in CLOSING_STATUSES]),
                Report.reported_at > reported_at,
            )
            .order_by(Report.reported_at, Claim.position)
            .limit(1)
        ).first()
    alert = Alert(
        id=new_id("alr"),
        incident_id=claim.incident_id,
        person=claim.person,
        claim=claim,
        state=AlertState.OPEN.value,
        raised_at=reported_at,
        position=claim.position,
    )
    if later_closing is not None:
        alert.state = AlertState.CLOSED.value
        alert.closed_by_claim_id = later_closing.id
        alert.closed_at = utc_now()
    session.add(alert)
    return alert


def _close_open_alerts(session: Session, claim: Claim, reported_at: datetime) -> None:
    if claim.person.id is None:
        return
    alerts = session.scalars(
        select(Alert).where(
            Alert.person_id == claim.person.id,
            Alert.state == AlertState.OPEN.value,
            Alert.raised_at <= reported_at,
        )
    ).all()
    now = utc_now()
    for alert in alerts:
        alert.state = AlertState.CLOSED.value
        alert.closed_by_claim_id = claim.id
        alert.closed_at = now


def close_alert(session: Session, alert_id: str, note: str) -> Alert:
    """A person closes an open alert with a note. Raises :class:`NotFoundError` for an
    unknown alert, :class:`AlertClosedError` when it is already closed and
    :class:`InvalidInputError` for an empty note. The caller commits."""
    text = clean_note(note, "Write a note that says why the alert is closed.")
    alert = session.get(Alert, alert_id, with_for_update=True)
    if alert is None:
        raise NotFoundError(f"No alert with id {alert_id!r}.")
    if alert.state != AlertState.OPEN.value:
        raise AlertClosedError("This alert is already closed.")
    alert.state = AlertState.CLOSED.value
    alert.close_note = text
    alert.closed_at = utc_now()
    session.flush()
    return alert
