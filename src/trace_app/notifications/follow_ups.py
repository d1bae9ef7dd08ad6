"""Follow-ups: work for an incident's coordinators that no message may do.

A death is never sent by message. When a group's status becomes *deceased*,
:mod:`trace_app.domain.status_events` writes an ``inform_in_person`` follow-up beside the
``status.changed`` event, and the delivery worker mails no enquirer. The follow-up lists
the enquirers of the person's group with their contacts (for those who may read them;
each such read is audited) and stays until someone marks it done; marking it done closes
those enquirers' inquiries (they were told), which starts their retention
(:mod:`trace_app.notifications.retention`).

Also here: the deliveries that failed (:func:`failed_deliveries`), which coordinators see.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from trace_app.domain import audit
from trace_app.domain.audit import Actor
from trace_app.domain.errors import InvalidInputError, NotFoundError
from trace_app.domain.groups import group_members
from trace_app.notifications.inquiries import InquiryView
from trace_app.store.models import Person
from trace_app.store.notification_models import (
    Delivery,
    DeliveryState,
    FollowUp,
    Inquiry,
    OutboxEvent,
)
from trace_app.store.types import utc_now

MAX_LISTED = 500


class FollowUpDoneError(InvalidInputError):
    """Marking a follow-up done twice."""

    code = "follow_up_done"
    http_status = 409


@dataclass(frozen=True, slots=True)
class FollowUpView:
    id: str
    incident_id: str
    person_id: str  # the group's lead record
    person_name: str
    kind: str
    event_id: str | None
    created_at: datetime
    done_at: datetime | None
    done_by: str | None
    looking: int  # how many inquiries follow the person
    # their contacts: only when the caller may read them (and the read is audited)
    enquirers: tuple[InquiryView, ...] | None


def _inquiries_of(session: Session, person_ids: list[str]) -> dict[str, list[Inquiry]]:
    """Each of ``person_ids`` -> the inquiries of its linked group now, oldest first (a
    follow-up names the group's lead when it was written; a later decision may regroup)."""
    members = group_members(session, person_ids)
    key_of = {pid: key for key, ids in members.items() for pid in ids}
    by_key: dict[str, list[Inquiry]] = {key: [] for key in members}
    if key_of:
        for row in session.scalars(
            select(Inquiry)
            .where(Inquiry.person_id.in_(sorted(key_of)))
            .order_by(Inquiry.created_at, Inquiry.id)
        ):
            by_key[key_of[row.person_id]].append(row)
    return {pid: by_key[key_of[pid]] for pid in person_ids if pid in key_of}


def list_follow_ups(
    session: Session,
    incident_id: str,
    *,
    include_done: bool = False,
    actor: Actor | None = None,
) -> list[FollowUpView]:
    """The incident's follow-ups, oldest first (open ones only unless ``include_done``).
    With ``actor``, each lists its enquirers with their contacts, and one audit row
    (``inquiry.read_contacts``) names every inquiry shown; without, only how many there
    are. The caller commits."""
    query = select(FollowUp, Person.name).join(Person, Person.id == FollowUp.person_id)
    query = query.where(FollowUp.incident_id == incident_id)
    if not include_done:
        query = query.where(FollowUp.done_at.is_(None))
    rows = session.execute(query.order_by(FollowUp.created_at, FollowUp.id).limit(MAX_LISTED)).all()
    inquiries = _inquiries_of(session, [f.person_id for f, _ in rows])
    shown: list[str] = []
    views: list[FollowUpView] = []
    for follow_up, name in rows:
        group = inquiries.get(follow_up.person_id, [])
        if actor is not None:
            shown += [i.id for i in group]
        views.append(
            FollowUpView(
                id=follow_up.id,
                incident_id=follow_up.incident_id,
                person_id=follow_up.person_id,
                person_name=name,
                kind=follow_up.kind,
                event_id=follow_up.event_id,
                created_at=follow_up.created_at,
                done_at=follow_up.done_at,
                done_by=follow_up.done_by,
                looking=len(group),
                enquirers=tuple(InquiryView.of(i) for i in group) if actor else None,
            )
        )
    if actor is not None and shown:
        audit.record(
            session,
            actor,
            "inquiry.read_contacts",
            object_type="follow_ups",
            incident_id=incident_id,
            touched=[f"inquiry:{i}" for i in dict.fromkeys(shown)],
        )
    return views


def open_follow_ups(
    session: Session, incident_id: str, *, actor: Actor | None = None
) -> list[FollowUpView]:
    """The incident's open follow-ups (for pages): :func:`list_follow_ups` without the
    done ones. Pass ``actor`` only for a reader allowed ``contacts:read``."""
    return list_follow_ups(session, incident_id, actor=actor)


def mark_done(
    session: Session, incident_id: str, follow_up_id: str, *, actor: Actor
) -> FollowUpView:
    """``actor`` has informed the family in person: the follow-up is done (who, when),
    and the group's open inquiries close now. Audited as ``follow_up.done``. Raises
    :class:`NotFoundError` (unknown here) and :class:`FollowUpDoneError`. The caller
    commits."""
    row = session.get(FollowUp, follow_up_id, with_for_update=True)
    if row is None or row.incident_id != incident_id:
        raise NotFoundError(f"No follow-up with id {follow_up_id!r} in this incident.")
    if row.done_at is not None:
        raise FollowUpDoneError(f"This follow-up was marked done by {row.done_by}.")
    now = utc_now()
    row.done_at = now
    row.done_by = actor.name[:200]
    closed: list[str] = []
    for inquiry in _inquiries_of(session, [row.person_id]).get(row.person_id, []):
        if inquiry.closed_at is None:
            inquiry.closed_at = now
            closed.append(inquiry.id)
    session.flush()
    audit.record(
        session,
        actor,
        "follow_up.done",
        object_type="follow_up",
        object_id=row.id,
        incident_id=incident_id,
        touched=[f"person:{row.person_id}", *(f"inquiry:{i}" for i in closed)],
        after={"done_at": now.isoformat(), "inquiries_closed": len(closed)},
    )
    [view] = [v for v in list_follow_ups(session, incident_id, include_done=True) if v.id == row.id]
    return view


# --- deliveries ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeliveryView:
    id: str
    event_id: str
    kind: str
    person_id: str
    channel: str
    target_id: str  # an inquiry id (email) or a webhook endpoint id: never an address
    state: str
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    delivered_at: datetime | None
    created_at: datetime


FAILED = "failed"  # a dead delivery, or one waiting to be retried after an error
DELIVERY_STATES = (FAILED, *(s.value for s in DeliveryState))


def deliveries(
    session: Session, incident_id: str, state: str = FAILED, *, limit: int = 100
) -> list[DeliveryView]:
    """The incident's deliveries in ``state`` (``failed``: dead, or pending after an
    error), newest first."""
    if state not in DELIVERY_STATES:
        raise InvalidInputError(f"Choose a state: {', '.join(DELIVERY_STATES)}.")
    query = (
        select(Delivery, OutboxEvent.kind, OutboxEvent.person_id)
        .join(OutboxEvent, OutboxEvent.id == Delivery.event_id)
        .where(OutboxEvent.incident_id == incident_id)
    )
    if state == FAILED:
        query = query.where(
            or_(
                Delivery.state == DeliveryState.DEAD.value,
                and_(
                    Delivery.state == DeliveryState.PENDING.value,
                    Delivery.last_error.is_not(None),
                ),
            )
        )
    else:
        query = query.where(Delivery.state == state)
    rows = session.execute(
        query.order_by(Delivery.created_at.desc(), Delivery.id.desc()).limit(limit)
    ).all()
    return [
        DeliveryView(
            id=d.id,
            event_id=d.event_id,
            kind=kind,
            person_id=person_id,
            channel=d.channel,
            target_id=d.target_id,
            state=d.state,
            attempts=d.attempts,
            next_attempt_at=d.next_attempt_at,
            last_error=d.last_error,
            delivered_at=d.delivered_at,
            created_at=d.created_at,
        )
        for d, kind, person_id in rows
    ]


def failed_deliveries(
    session: Session, incident_id: str, *, limit: int = 100
) -> list[DeliveryView]:
    """The incident's deliveries that failed (dead, or retrying after an error), newest
    first: what the coordinators' page shows."""
    return deliveries(session, incident_id, FAILED, limit=limit)
