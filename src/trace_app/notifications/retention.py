"""How long enquirers' contacts are kept: until a set number of days after their inquiry
closes (``incidents.contact_retention_days``, default 90), then erased by
:func:`purge` (``trace inquiries purge``, audited), which leaves each row as a tombstone.

**When an inquiry closes** (docs/decisions/0180-notifications-outbox.md), the first of:

1. the enquirer was told the person was found: a ``status.changed`` event saying *safe*
   or *admitted* was mailed to them (its delivery is ``delivered``) and the person's
   status is still safe or admitted: closed at that delivery's time
   (:func:`close_informed`, run by :func:`purge`);
2. the family was told in person after a death: the group's ``inform_in_person``
   follow-up was marked done (:func:`trace_app.notifications.follow_ups.mark_done`);
3. a coordinator recorded that the enquirer was told another way, by phone or at the desk
   (:func:`trace_app.notifications.inquiries.close_inquiry`).

Trace has no closed incidents yet; when it does, closing one closes its inquiries. An
inquiry that never closes keeps its contacts until someone erases them on request
(:func:`trace_app.notifications.inquiries.erase_contacts`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.domain import audit, status_events
from trace_app.domain.audit import Actor
from trace_app.domain.errors import InvalidInputError, NotFoundError
from trace_app.notifications.inquiries import tombstone
from trace_app.store.models import ClaimStatus, Incident
from trace_app.store.notification_models import (
    Delivery,
    DeliveryChannel,
    DeliveryState,
    EventKind,
    Inquiry,
    OutboxEvent,
)
from trace_app.store.types import utc_now

FOUND = frozenset({ClaimStatus.SAFE.value, ClaimStatus.ADMITTED.value})
DEFAULT_RETENTION_DAYS = 90
MAX_AUDITED_IDS = 200  # the purge's audit row names at most this many inquiries


@dataclass(frozen=True, slots=True)
class PurgeResult:
    closed: int  # inquiries closed now (the enquirer was told the person was found)
    erased: int  # inquiries whose contacts were erased now
    erased_ids: tuple[str, ...]


def close_informed(session: Session) -> list[str]:
    """Close every open inquiry whose enquirer was mailed that the person was found
    (rule 1 of the module), at that delivery's time; the ids closed. The caller commits."""
    rows = session.execute(
        select(Inquiry, OutboxEvent.payload, Delivery.delivered_at)
        .join(Delivery, Delivery.target_id == Inquiry.id)
        .join(OutboxEvent, OutboxEvent.id == Delivery.event_id)
        .where(
            Inquiry.closed_at.is_(None),
            Delivery.channel == DeliveryChannel.EMAIL.value,
            Delivery.state == DeliveryState.DELIVERED.value,
            OutboxEvent.kind == EventKind.STATUS_CHANGED.value,
        )
        .order_by(Delivery.delivered_at)
    ).all()
    told: dict[str, tuple[Inquiry, datetime]] = {}
    for inquiry, payload, delivered_at in rows:
        if json.loads(payload).get("status") in FOUND and delivered_at is not None:
            told.setdefault(inquiry.id, (inquiry, delivered_at))
    if not told:
        return []
    now = status_events.read_groups(session, [i.person_id for i, _ in told.values()])
    closed: list[str] = []
    for inquiry, delivered_at in told.values():
        group = now.groups.get(now.group_of.get(inquiry.person_id, ""))
        if group is not None and group.status in FOUND:
            inquiry.closed_at = delivered_at
            closed.append(inquiry.id)
    session.flush()
    return closed


def due_for_erasure(session: Session, now: datetime) -> list[Inquiry]:
    """Closed inquiries whose contacts are still kept and whose incident's retention has
    run out (closed at least ``contact_retention_days`` ago)."""
    rows = session.execute(
        select(Inquiry, Incident.contact_retention_days)
        .join(Incident, Incident.id == Inquiry.incident_id)
        .where(Inquiry.closed_at.is_not(None), Inquiry.contacts_erased_at.is_(None))
        .order_by(Inquiry.closed_at, Inquiry.id)
    ).all()
    return [
        inquiry
        for inquiry, days in rows
        if inquiry.closed_at is not None and inquiry.closed_at + timedelta(days=days) <= now
    ]


def purge(
    session: Session, *, actor: Actor, now: datetime | None = None, dry_run: bool = False
) -> PurgeResult:
    """Close what rule 1 closes, then erase the contacts whose retention has run out,
    each leaving a tombstone (``erased_by``: "retention"); one audit row
    (``inquiry.purge``) says how many and names them. ``dry_run``: count only, change
    nothing (the caller rolls back). The caller commits."""
    when = now or utc_now()
    closed = close_informed(session)
    due = due_for_erasure(session, when)
    if dry_run:
        return PurgeResult(len(closed), len(due), tuple(i.id for i in due))
    for inquiry in due:
        tombstone(session, inquiry, f"retention ({actor.name})")
    session.flush()
    audit.record(
        session,
        actor,
        "inquiry.purge",
        object_type="inquiries",
        touched=[f"inquiry:{i.id}" for i in due[:MAX_AUDITED_IDS]],
        after={"closed": len(closed), "erased": len(due)},
    )
    return PurgeResult(len(closed), len(due), tuple(i.id for i in due))


MAX_RETENTION_DAYS = 3650


def set_retention_days(session: Session, incident_id: str, days: int, *, actor: Actor) -> int:
    """Keep the incident's enquirer contacts ``days`` (0 to 3,650) after their inquiry
    closes; audited as ``incident.contact_retention``. Raises :class:`NotFoundError` and
    :class:`InvalidInputError`. The caller commits."""
    if not 0 <= days <= MAX_RETENTION_DAYS:
        raise InvalidInputError(f"Choose a number of days from 0 to {MAX_RETENTION_DAYS:,}.")
    incident = session.get(Incident, incident_id, with_for_update=True)
    if incident is None:
        raise NotFoundError(f"No incident with id {incident_id!r}.")
    before = incident.contact_retention_days
    if before != days:
        incident.contact_retention_days = days
        session.flush()
        audit.record(
            session,
            actor,
            "incident.contact_retention",
            object_type="incident",
            object_id=incident.id,
            incident_id=incident.id,
            before={"days": before},
            after={"days": days},
        )
    return days
