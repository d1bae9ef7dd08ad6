"""A person closing an alert by hand, or reopening one closed by mistake.

Closing asks what the person knows (:class:`~trace_app.store.models.AlertCloseReason`):

- *found safe*, *admitted* or *deceased*: a claim with that status is published for the
  alert's person, by the closer's organisation, through the one publish path
  (:func:`trace_app.domain.publish.publish_report`); the alert rule then closes the
  group's alert by that claim. Status and alert always agree, and the claim stays in
  the person's story with the closer's note as its text.
- *duplicate* or *withdrawn*: the alert and its sources are closed with the note
  (``close_reason``); the rule leaves them alone from then on.

Reopening, with a note: an alert closed as a duplicate or withdrawn gets its hand close
cleared and the rule settles the group again; an alert closed by a claim (a person's
*found safe*, or any later safe, admitted or deceased report) is reopened by a *missing*
claim from the reopener's organisation, published the same way, so the status says
missing again and the rule opens the person's alert. Both are audited
(``alert.close``, ``alert.reopen``). The caller commits.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from trace_app.domain import audit, status_events
from trace_app.domain.alerts import settle_alerts
from trace_app.domain.audit import Actor
from trace_app.domain.errors import AlertClosedError, InvalidInputError, NotFoundError
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.domain.text import clean_note
from trace_app.store.models import (
    Alert,
    AlertCloseReason,
    AlertState,
    Claim,
    ClaimStatus,
    Person,
    Report,
)
from trace_app.store.types import utc_now

CLAIM_OF_REASON: dict[AlertCloseReason, ClaimStatus] = {
    AlertCloseReason.FOUND_SAFE: ClaimStatus.SAFE,
    AlertCloseReason.ADMITTED: ClaimStatus.ADMITTED,
    AlertCloseReason.DECEASED: ClaimStatus.DECEASED,
}
REASON_WORDS: dict[AlertCloseReason, str] = {
    AlertCloseReason.FOUND_SAFE: "found safe",
    AlertCloseReason.ADMITTED: "admitted (hospital or shelter)",
    AlertCloseReason.DECEASED: "deceased",
    AlertCloseReason.DUPLICATE: "a duplicate of another alert",
    AlertCloseReason.WITHDRAWN: "withdrawn by whoever reported it",
}


class NoOrganizationError(InvalidInputError):
    """Closing as found safe, admitted or deceased publishes a claim: it needs the
    organisation it is published for."""


def _lead_alert(session: Session, alert_id: str) -> Alert:
    alert = session.get(Alert, alert_id, with_for_update=True)
    if alert is None:
        raise NotFoundError(f"No alert with id {alert_id!r}.")
    if alert.joined_alert_id is not None:
        lead = session.get(Alert, alert.joined_alert_id, with_for_update=True)
        if lead is not None:
            return lead
    return alert


def _sources(session: Session, alert: Alert) -> list[Alert]:
    return [
        alert,
        *session.scalars(
            select(Alert).where(Alert.joined_alert_id == alert.id).order_by(Alert.position)
        ),
    ]


def _publish_claim(
    session: Session, alert: Alert, status: ClaimStatus, summary: str, note: str, source: str
) -> Claim:
    """A claim about the alert's person, reported now (or just after the newest claim of
    the alert's group, if that one is dated ahead of the clock), by ``source``."""
    person = session.get(Person, alert.person_id)
    if person is None:  # pragma: no cover - the alert's foreign key keeps its person
        raise NotFoundError(f"No person with id {alert.person_id!r}.")
    newest = session.scalar(
        select(Report.reported_at)
        .join(Claim, Claim.report_id == Report.id)
        .join(Person, Person.id == Claim.person_id)
        .where(or_(Person.id == person.id, Person.group_id == (person.group_id or person.id)))
        .order_by(Report.reported_at.desc())
        .limit(1)
    )
    reported_at: datetime = max(utc_now(), newest) if newest else utc_now()
    report = publish_report(
        session,
        PublishReportInput(
            incident_id=alert.incident_id,
            source=source,
            summary=summary,
            original_text=note,
            reported_at=reported_at,
            person=PersonInput(name=person.name, person_id=person.id),
            status=status,
        ),
    )
    return report.claims[0]


def close_alert(
    session: Session,
    alert_id: str,
    reason: AlertCloseReason,
    note: str,
    *,
    actor: Actor,
    source: str | None = None,
) -> Alert:
    """``actor`` closes the open alert ``alert_id`` (or the group's alert it joined)
    knowing ``reason``, with ``note``; ``source`` is the closer's organisation, needed
    for found safe, admitted and deceased (:class:`NoOrganizationError` without it).
    Raises :class:`NotFoundError`, :class:`AlertClosedError` when it is closed already
    and :class:`InvalidInputError` for a bad note; nothing is changed then. Returns the
    closed alert. The caller commits."""
    text = clean_note(note, "Write a note that says how you know.")
    alert = _lead_alert(session, alert_id)
    if alert.state != AlertState.OPEN.value:
        raise AlertClosedError("This alert is already closed.")
    status = CLAIM_OF_REASON.get(reason)
    claim_id: str | None = None
    if status is not None:
        if not source:
            raise NoOrganizationError(
                "Closing as found safe, admitted or deceased publishes a report for your "
                "organisation, and your account has none here: ask a coordinator."
            )
        summary = f"Alert closed by hand: {REASON_WORDS[reason]}."
        claim_id = _publish_claim(session, alert, status, summary, text, source).id
        session.refresh(alert)
        if alert.state != AlertState.CLOSED.value:  # pragma: no cover - the rule closes it
            raise AlertClosedError("The alert did not close; reload the page.")
    else:
        now = utc_now()
        sources = _sources(session, alert)
        seen = status_events.before(session, [row.person_id for row in sources])
        for row in sources:
            row.state = AlertState.CLOSED.value
            row.close_reason = reason.value
            row.close_note = text
            row.closed_by = actor.name
            row.closed_at = now
        session.flush()
        status_events.record_changes(session, seen, alert.incident_id)
    audit.record(
        session,
        actor,
        "alert.close",
        object_type="alert",
        object_id=alert.id,
        incident_id=alert.incident_id,
        touched=[f"person:{alert.person_id}"],
        before={"state": AlertState.OPEN.value},
        after={
            "state": AlertState.CLOSED.value,
            "reason": reason.value,
            "note": text,
            **({"claim": claim_id} if claim_id else {}),
        },
    )
    return alert


def reopen_alert(
    session: Session,
    alert_id: str,
    note: str,
    *,
    actor: Actor,
    source: str | None = None,
) -> Alert:
    """``actor`` reopens a closed alert with ``note`` (see the module docstring); returns
    the person's open alert. An alert closed by a claim needs ``source`` (the reopener's
    organisation: a missing claim is published). Raises :class:`NotFoundError`,
    :class:`AlertClosedError` (here: it is open) and :class:`InvalidInputError`."""
    text = clean_note(note, "Write a note that says why the alert is reopened.")
    alert = _lead_alert(session, alert_id)
    if alert.state != AlertState.CLOSED.value:
        raise AlertClosedError("This alert is open.")
    before = {
        "state": AlertState.CLOSED.value,
        "reason": alert.close_reason or "claim",
    }
    if alert.close_reason is not None:
        cleared = [row for row in _sources(session, alert) if row.close_reason is not None]
        seen = status_events.before(session, [row.person_id for row in cleared])
        for row in cleared:
            row.close_reason = None
            row.close_note = None
            row.closed_by = None
        alert.reopened_by = actor.name
        alert.reopen_note = text
        session.flush()
        # a source may belong to another group by now: settle every group it touched
        settle_alerts(session, [row.person_id for row in cleared])
        session.flush()
        status_events.record_changes(session, seen, alert.incident_id)
        reopened = alert
    else:
        if not source:
            raise NoOrganizationError(
                "Reopening an alert a report closed publishes a 'missing' report for your "
                "organisation, and your account has none here: ask a coordinator."
            )
        claim = _publish_claim(
            session, alert, ClaimStatus.MISSING, "Alert reopened: still missing.", text, source
        )
        found = session.scalar(select(Alert).where(Alert.claim_id == claim.id))
        reopened = _lead_alert(session, found.id) if found else alert
        reopened.reopened_by = actor.name
        reopened.reopen_note = text
        session.flush()
    audit.record(
        session,
        actor,
        "alert.reopen",
        object_type="alert",
        object_id=reopened.id,
        incident_id=alert.incident_id,
        touched=[f"person:{alert.person_id}"],
        before=before,
        after={"state": reopened.state, "note": text},
    )
    return reopened
