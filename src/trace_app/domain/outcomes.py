"""What an action changed, for the words a page shows after it (issue 40, item 4): which
alerts a publication or a "same person" decision raised, joined or closed, and whether a
report started a new person's record or joined an existing one. Reads only: the rules
that make the changes live in :mod:`trace_app.domain.alerts` and
:mod:`trace_app.domain.publish`; this module only looks at what they left.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from trace_app.domain.groups import group_members
from trace_app.store.models import Alert, AlertState, Claim, Person, PersonLink, Report


@dataclass(frozen=True, slots=True)
class AlertChange:
    """One alert an action opened, joined or closed."""

    alert_id: str
    person_id: str
    person_name: str
    raised_at: datetime
    # the status of the claim that closed it ("safe"), when a claim closed it
    closing_status: str | None = None


@dataclass(frozen=True, slots=True)
class PublishOutcome:
    """What publishing one report changed."""

    person_id: str
    person_name: str
    # how many reports the person's record (its linked group) had before this one
    earlier_reports: int
    raised: AlertChange | None = None  # this report's missing claim opened an alert
    joined: AlertChange | None = None  # ... or joined the alert already open
    closed: tuple[AlertChange, ...] = ()  # this report's claim closed these

    @property
    def new_person(self) -> bool:
        return self.earlier_reports == 0


def _change(session: Session, alert: Alert, closing_status: str | None = None) -> AlertChange:
    person = session.get(Person, alert.person_id)
    return AlertChange(
        alert.id,
        alert.person_id,
        person.name if person is not None else "",
        alert.raised_at,
        closing_status,
    )


def _group(session: Session, person_id: str) -> list[str]:
    groups = group_members(session, [person_id])
    return sorted({pid for members in groups.values() for pid in members} | {person_id})


def publish_outcome(session: Session, report: Report) -> PublishOutcome:
    """What publishing ``report`` changed, read from what the rules left: its person's
    record new or not (earlier reports of the linked group), the alert its missing claim
    opened or joined, the alerts its claim closed."""
    members = _group(session, report.person_id)
    earlier = session.scalar(
        select(func.count(Report.id)).where(
            Report.person_id.in_(members), Report.position < report.position
        )
    )
    claim_ids = [c.id for c in report.claims]
    raised = joined = None
    closed: list[AlertChange] = []
    if claim_ids:
        own = session.scalars(select(Alert).where(Alert.claim_id.in_(claim_ids))).first()
        if own is not None and own.close_reason is None:
            if own.joined_alert_id is None:
                raised = _change(session, own)
            else:
                lead = session.get(Alert, own.joined_alert_id)
                joined = _change(session, lead if lead is not None else own)
        closing = session.scalars(
            select(Alert)
            .where(Alert.closed_by_claim_id.in_(claim_ids), Alert.joined_alert_id.is_(None))
            .order_by(Alert.raised_at)
        )
        closed = [_change(session, alert, report.status) for alert in closing]
    return PublishOutcome(
        report.person_id,
        report.person.name,
        int(earlier or 0),
        raised=raised,
        joined=joined,
        closed=tuple(closed),
    )


def open_alert_ids(session: Session, person_ids: Iterable[str]) -> set[str]:
    """The open alerts (each group's lead alert) of these people's linked groups: read
    before a decision, so that :func:`alerts_closed_since` can say what it closed."""
    everyone = sorted({m for pid in person_ids for m in _group(session, pid)})
    return set(
        session.scalars(
            select(Alert.id).where(
                Alert.person_id.in_(everyone),
                Alert.state == AlertState.OPEN.value,
                Alert.joined_alert_id.is_(None),
            )
        )
    )


def alerts_closed_since(session: Session, were_open: Iterable[str]) -> list[AlertChange]:
    """Of the alerts that were open, those now closed, each with the status of the claim
    that closed it (a "same person" decision closes an alert when a later report about
    the other record says safe, admitted or deceased)."""
    ids = sorted(set(were_open))
    if not ids:
        return []
    changes = []
    for alert in session.scalars(
        select(Alert).where(Alert.id.in_(ids), Alert.state == AlertState.CLOSED.value)
    ):
        claim = session.get(Claim, alert.closed_by_claim_id) if alert.closed_by_claim_id else None
        changes.append(_change(session, alert, claim.status if claim is not None else None))
    return sorted(changes, key=lambda c: c.raised_at)


def closed_by_latest_decision(session: Session, person_id: str) -> list[AlertChange]:
    """The alerts of ``person_id``'s linked group that its newest decision closed: closed
    by a claim (a later report about a record now counted as the same person) no earlier
    than the decision was recorded. The person page after "Same person" names them."""
    link = session.scalars(
        select(PersonLink)
        .where(PersonLink.decided_on_person_id == person_id)
        .order_by(PersonLink.decided_at.desc(), PersonLink.sequence.desc())
        .limit(1)
    ).first()
    if link is None:
        return []
    members = _group(session, person_id)
    alerts = session.scalars(
        select(Alert.id).where(
            Alert.person_id.in_(members),
            Alert.state == AlertState.CLOSED.value,
            Alert.joined_alert_id.is_(None),
            Alert.closed_by_claim_id.is_not(None),
            Alert.closed_at >= link.decided_at,
        )
    )
    return alerts_closed_since(session, alerts)
