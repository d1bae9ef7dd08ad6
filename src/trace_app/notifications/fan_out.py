"""Fan-out: an outbox event becomes one delivery per subscriber, once (issue 41).

For each event not yet fanned out (``fanned_out_at`` NULL), oldest first:

- every webhook endpoint of the event's incident that is not removed and takes the kind
  (``events`` NULL: every kind) gets a ``webhook`` delivery;
- a status or alert event gets an ``email`` delivery for each inquiry about a record of
  the person's linked group that has an address, was confirmed, and is not unsubscribed,
  erased or closed -- and none at all when the new status is ``deceased`` (a death is
  told in person: the follow-up written with the event says so). An alert event that
  came with a status change (a missing report opens the alert, a safe one closes it) is
  not mailed: one change, one mail;
- ``inquiry.created`` gets one ``email`` delivery: the confirmation to that inquiry.

The rows are inserted with ``ON CONFLICT DO NOTHING`` on ``(event_id, channel,
target_id)`` and the event is marked in the same transaction, so running it twice, or in
two workers at once, makes each delivery once. On PostgreSQL the events are read ``FOR
UPDATE SKIP LOCKED``: two replicas take different events instead of waiting.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from trace_app.domain.groups import group_members
from trace_app.store.db import WRITE_TRANSACTION
from trace_app.store.notification_models import (
    Delivery,
    DeliveryChannel,
    DeliveryState,
    EventKind,
    Inquiry,
    OutboxEvent,
    WebhookEndpoint,
)
from trace_app.store.types import new_id

DECEASED = "deceased"
BATCH = 100
# events of one change are written by one transaction: this close together
SAME_CHANGE_S = 2


def is_postgres(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def mail_recipients(session: Session, event: OutboxEvent, payload: dict[str, Any]) -> list[str]:
    """The inquiry ids an event is mailed to (none for a death)."""
    if event.kind == EventKind.INQUIRY_CREATED.value:
        inquiry = session.get(Inquiry, str(payload.get("inquiry_id") or ""))
        usable = (
            inquiry is not None
            and inquiry.email
            and inquiry.contacts_erased_at is None
            and inquiry.unsubscribed_at is None
        )
        return [inquiry.id] if usable and inquiry is not None else []
    if payload.get("status") == DECEASED:
        return []
    if event.kind != EventKind.STATUS_CHANGED.value and _with_status_change(session, event):
        return []  # one change, one mail: the status news says it
    members = [pid for ids in group_members(session, [event.person_id]).values() for pid in ids]
    rows = session.scalars(
        select(Inquiry.id)
        .where(
            Inquiry.incident_id == event.incident_id,
            Inquiry.person_id.in_(members or [event.person_id]),
            Inquiry.email.is_not(None),
            Inquiry.email_confirmed_at.is_not(None),
            Inquiry.unsubscribed_at.is_(None),
            Inquiry.contacts_erased_at.is_(None),
            Inquiry.closed_at.is_(None),
        )
        .order_by(Inquiry.id)
    )
    return list(rows)


def _with_status_change(session: Session, event: OutboxEvent) -> bool:
    """Did the change that opened or closed this alert also change the status? (Both
    events are written by one transaction, a moment apart.)"""
    near = timedelta(seconds=SAME_CHANGE_S)
    found = session.scalar(
        select(OutboxEvent.id)
        .where(
            OutboxEvent.person_id == event.person_id,
            OutboxEvent.kind == EventKind.STATUS_CHANGED.value,
            OutboxEvent.created_at.between(event.created_at - near, event.created_at + near),
        )
        .limit(1)
    )
    return found is not None


def webhook_targets(session: Session, event: OutboxEvent) -> list[str]:
    endpoints = session.execute(
        select(WebhookEndpoint.id, WebhookEndpoint.events)
        .where(
            WebhookEndpoint.incident_id == event.incident_id,
            WebhookEndpoint.removed_at.is_(None),
        )
        .order_by(WebhookEndpoint.id)
    ).all()
    return [eid for eid, kinds in endpoints if kinds is None or event.kind in kinds]


def targets(session: Session, event: OutboxEvent) -> list[tuple[str, str]]:
    """(channel, target id) of every delivery the event makes."""
    payload = json.loads(event.payload)
    found = [(DeliveryChannel.WEBHOOK.value, t) for t in webhook_targets(session, event)]
    found += [(DeliveryChannel.EMAIL.value, t) for t in mail_recipients(session, event, payload)]
    return found


def _insert_deliveries(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    if not rows:
        return
    dialect = postgresql if is_postgres(session) else sqlite
    statement = dialect.insert(Delivery).values(list(rows))
    session.execute(
        statement.on_conflict_do_nothing(index_elements=["event_id", "channel", "target_id"])
    )


def fan_out_pending(session: Session, *, limit: int = BATCH, now: datetime | None = None) -> int:
    """Fan out up to ``limit`` events; the number of events handled. The caller commits
    (the deliveries and the events' marks go together)."""
    now = now or datetime.now(UTC)
    session.connection(execution_options=WRITE_TRANSACTION)  # SQLite: BEGIN IMMEDIATE
    query = (
        select(OutboxEvent)
        .where(OutboxEvent.fanned_out_at.is_(None))
        .order_by(OutboxEvent.created_at, OutboxEvent.id)
        .limit(limit)
    )
    if is_postgres(session):
        query = query.with_for_update(skip_locked=True)
    events = list(session.scalars(query))
    for event in events:
        rows = [
            {
                "id": new_id("dlv"),
                "event_id": event.id,
                "channel": channel,
                "target_id": target,
                "state": DeliveryState.PENDING.value,
                "attempts": 0,
                "next_attempt_at": now,
                "created_at": now,
            }
            for channel, target in targets(session, event)
        ]
        _insert_deliveries(session, rows)
        event.fanned_out_at = now
    session.flush()
    return len(events)
