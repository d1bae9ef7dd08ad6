"""What the webhook and delivery routes take and answer (the API's shapes)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from trace_app.notifications.follow_ups import DeliveryView
from trace_app.notifications.webhook_registry import MAX_URL_CHARACTERS, EndpointView
from trace_app.store.notification_models import EventKind


class WebhookIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: Annotated[str, Field(min_length=1, max_length=MAX_URL_CHARACTERS)] = Field(
        description="The partner's endpoint: http:// or https://."
    )
    events: list[EventKind] | None = Field(
        default=None,
        max_length=len(EventKind),
        description="The event kinds to send; leave it out for every kind.",
    )


class WebhookOut(BaseModel):
    id: str
    incident_id: str
    url: str
    events: list[str] | None = Field(description="The kinds sent; null: every kind.")
    created_at: datetime
    removed_at: datetime | None

    @classmethod
    def of(cls, view: EndpointView) -> WebhookOut:
        return cls(
            id=view.id,
            incident_id=view.incident_id,
            url=view.url,
            events=list(view.events) if view.events is not None else None,
            created_at=view.created_at,
            removed_at=view.removed_at,
        )


class WebhookCreatedOut(WebhookOut):
    secret: str = Field(
        description="The signing secret (whsec_...): shown this once, never again. "
        "Each request carries webhook-id, webhook-timestamp and webhook-signature "
        "(Standard Webhooks)."
    )


class WebhookList(BaseModel):
    items: list[WebhookOut]


class DeliveryOut(BaseModel):
    id: str
    event_id: str = Field(description="The event's id: the webhook-id of every attempt.")
    kind: str
    person_id: str
    channel: str = Field(description="email or webhook")
    target_id: str = Field(description="The inquiry (email) or webhook endpoint id.")
    state: str = Field(description="pending, delivered, dead or skipped")
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    delivered_at: datetime | None
    created_at: datetime

    @classmethod
    def of(cls, view: DeliveryView) -> DeliveryOut:
        return cls(
            id=view.id,
            event_id=view.event_id,
            kind=view.kind,
            person_id=view.person_id,
            channel=view.channel,
            target_id=view.target_id,
            state=view.state,
            attempts=view.attempts,
            next_attempt_at=view.next_attempt_at,
            last_error=view.last_error,
            delivered_at=view.delivered_at,
            created_at=view.created_at,
        )


class DeliveryList(BaseModel):
    items: list[DeliveryOut]
