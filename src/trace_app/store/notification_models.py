"""Tracing requests, the outbox and its deliveries (issue 41; tables).

An Inquiry records who is looking for a person (the enquirer's name, relationship and
contacts, taken with consent) for one record of an incident; the record's linked group is
what it follows. Erasing an inquiry's contacts keeps the row as a tombstone
(``contacts_erased_at``, ``erased_by``).

An OutboxEvent is written in the same transaction as the change it reports
(:mod:`trace_app.domain.status_events`): a group's status changed, its alert opened or
closed, or an inquiry was taken. Its id is stable and is the webhook-id. The delivery
worker fans an event out into Delivery rows, one per channel and target, once
(``UNIQUE(event_id, channel, target_id)``), and sends those at least once.

A WebhookEndpoint is a partner system's URL for an incident, with its signing secret. A
FollowUp is work for the incident's coordinators (inform a family in person after a death).
An InquiryLink is a single-purpose, expiring link sent by mail: only the SHA-256 of its
random token is kept.
"""

from __future__ import annotations

import enum
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from trace_app.store.models import Base
from trace_app.store.types import ID_LENGTH, UTCDateTime, utc_now


class EventKind(enum.StrEnum):
    """What an outbox event reports."""

    STATUS_CHANGED = "status.changed"
    ALERT_OPENED = "alert.opened"
    ALERT_CLOSED = "alert.closed"
    INQUIRY_CREATED = "inquiry.created"


class DeliveryChannel(enum.StrEnum):
    EMAIL = "email"
    WEBHOOK = "webhook"


class DeliveryState(enum.StrEnum):
    PENDING = "pending"
    DELIVERED = "delivered"
    DEAD = "dead"
    SKIPPED = "skipped"


class FollowUpKind(enum.StrEnum):
    INFORM_IN_PERSON = "inform_in_person"


class LinkPurpose(enum.StrEnum):
    CONFIRM = "confirm"
    UNSUBSCRIBE = "unsubscribe"


def _id() -> Mapped[str]:
    return mapped_column(String(ID_LENGTH), primary_key=True)


def _incident() -> Mapped[str]:
    return mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"), index=True)


class Inquiry(Base):
    """A tracing request: who is looking for a person, and how to reach them."""

    __tablename__ = "inquiries"

    id: Mapped[str] = _id()
    incident_id: Mapped[str] = _incident()
    person_id: Mapped[str] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"), index=True)
    # the contacts: NULL (or the tombstone name) once erased
    enquirer_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    relationship: Mapped[str] = mapped_column(String(100), default="")
    email: Mapped[str | None] = mapped_column(String(320), nullable=True)
    phone: Mapped[str | None] = mapped_column(String(40), nullable=True)
    language: Mapped[str] = mapped_column(String(20), default="en", server_default="en")
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    consent_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_by: Mapped[str | None] = mapped_column(String(ID_LENGTH), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    email_confirmed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    unsubscribed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    contacts_erased_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # who erased them (an account's name, or "retention" for the purge)
    erased_by: Mapped[str | None] = mapped_column(String(200), nullable=True)


class OutboxEvent(Base):
    """One change to tell subscribers about, written in the change's transaction."""

    __tablename__ = "outbox_events"
    # the worker's "not yet fanned out", oldest first
    __table_args__ = (Index("ix_outbox_events_pending", "fanned_out_at", "created_at"),)

    id: Mapped[str] = _id()
    incident_id: Mapped[str] = _incident()
    kind: Mapped[str] = mapped_column(String(40))
    # the group's lead record (its group id, or the record's own id outside a group)
    person_id: Mapped[str] = mapped_column(String(ID_LENGTH), index=True)
    # JSON text: see trace_app.domain.status_events.event_payload
    payload: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    fanned_out_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Delivery(Base):
    """One event to one target on one channel; sent at least once by the worker."""

    __tablename__ = "deliveries"
    __table_args__ = (
        UniqueConstraint("event_id", "channel", "target_id", name="uq_deliveries_target"),
        Index("ix_deliveries_due", "state", "next_attempt_at"),
    )

    id: Mapped[str] = _id()
    event_id: Mapped[str] = mapped_column(
        ForeignKey("outbox_events.id", ondelete="CASCADE"), index=True
    )
    channel: Mapped[str] = mapped_column(String(20))
    # an inquiry id (email) or a webhook endpoint id (webhook)
    target_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    state: Mapped[str] = mapped_column(String(20), default=DeliveryState.PENDING.value)
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    # a worker claimed it until then; an expired lease means the worker died
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)


class WebhookEndpoint(Base):
    """A partner system's URL for an incident; ``secret`` (``whsec_...``) signs each call."""

    __tablename__ = "webhook_endpoints"

    id: Mapped[str] = _id()
    incident_id: Mapped[str] = _incident()
    url: Mapped[str] = mapped_column(String(2000))
    secret: Mapped[str] = mapped_column(String(200))
    # a list of event kinds (EventKind values); NULL: every kind
    events: Mapped[list[str] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    created_by: Mapped[str | None] = mapped_column(String(ID_LENGTH), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    removed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class FollowUp(Base):
    """Work for the incident's coordinators, kept until someone marks it done."""

    __tablename__ = "follow_ups"

    id: Mapped[str] = _id()
    incident_id: Mapped[str] = _incident()
    # the group's lead record
    person_id: Mapped[str] = mapped_column(String(ID_LENGTH), index=True)
    event_id: Mapped[str | None] = mapped_column(
        ForeignKey("outbox_events.id", ondelete="SET NULL"), nullable=True
    )
    kind: Mapped[str] = mapped_column(String(40), default=FollowUpKind.INFORM_IN_PERSON.value)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    done_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    done_by: Mapped[str | None] = mapped_column(String(200), nullable=True)


class InquiryLink(Base):
    """A mailed link's token (confirm or unsubscribe): only its SHA-256 (hex) is kept."""

    __tablename__ = "inquiry_links"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    inquiry_id: Mapped[str] = mapped_column(
        ForeignKey("inquiries.id", ondelete="CASCADE"), index=True
    )
    purpose: Mapped[str] = mapped_column(String(20))
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
