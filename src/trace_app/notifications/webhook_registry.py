"""Partner systems' webhook endpoints for an incident: register, list, remove.

A coordinator registers a URL (``http`` or ``https``) and, optionally, the event kinds it
takes (none named: every kind). Trace answers once with the signing secret, ``whsec_``
and the base64 of 32 random bytes (the Standard Webhooks form); lists never show it
again. Removing keeps the row (``removed_at``) so past deliveries still name it, and skips
what was waiting for it. Each change is audited, the URL without any user or password.
"""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from trace_app.domain import audit
from trace_app.domain.audit import Actor
from trace_app.domain.errors import InvalidInputError, NotFoundError
from trace_app.notifications import destinations
from trace_app.store.models import Incident
from trace_app.store.notification_models import (
    Delivery,
    DeliveryChannel,
    DeliveryState,
    EventKind,
    WebhookEndpoint,
)
from trace_app.store.types import new_id, utc_now

SECRET_PREFIX = "whsec_"  # noqa: S105 - the prefix of every secret, not a secret
SECRET_BYTES = 32
MAX_URL_CHARACTERS = 2000
MAX_ENDPOINTS = 50  # an incident's endpoints at one time


class WebhookInputError(InvalidInputError):
    code = "invalid_webhook"


@dataclass(frozen=True, slots=True)
class EndpointView:
    """An endpoint as lists show it: never its secret."""

    id: str
    incident_id: str
    url: str
    events: tuple[str, ...] | None  # None: every kind
    created_at: datetime
    removed_at: datetime | None

    @classmethod
    def of(cls, row: WebhookEndpoint) -> EndpointView:
        return cls(
            id=row.id,
            incident_id=row.incident_id,
            url=row.url,
            events=tuple(row.events) if row.events is not None else None,
            created_at=row.created_at,
            removed_at=row.removed_at,
        )


def new_secret() -> str:
    """``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def _check_url(url: str) -> str:
    text = url.strip()
    if not text or len(text) > MAX_URL_CHARACTERS or any(c.isspace() for c in text):
        raise WebhookInputError("Enter the partner's URL (http or https, no spaces).")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        raise WebhookInputError("The URL cannot be read; check it.") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebhookInputError("The URL must start with http:// or https:// and name a host.")
    if not text.isascii():
        raise WebhookInputError("Write the URL in ASCII (punycode for the host, %-escapes).")
    return text


def shown_url(url: str) -> str:
    """The URL without any user or password (for the audit trail)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return f"{parts.scheme}://{host}{parts.path}"


def _check_events(events: list[str] | None) -> list[str] | None:
    if events is None:
        return None
    known = [k.value for k in EventKind]
    unknown = [e for e in events if e not in known]
    if unknown or not events:
        raise WebhookInputError(
            "Name the events to send (or leave them out for every one): " + ", ".join(known)
        )
    return list(dict.fromkeys(events))


def register(
    session: Session,
    incident_id: str,
    url: str,
    events: list[str] | None = None,
    *,
    actor: Actor,
    created_by: str | None = None,
    private_addresses: bool = False,
) -> tuple[EndpointView, str]:
    """Register ``url`` for the incident's events (``events``: the kinds, None: all);
    returns the endpoint and its secret, which is shown this once. Audited as
    ``webhook.register``. ``private_addresses``: the setting that lets a URL name an
    address inside the server's network (:mod:`trace_app.notifications.destinations`).
    Raises :class:`WebhookInputError`, :class:`NotFoundError`."""
    checked = _check_url(url)
    if not private_addresses and destinations.written_inside(checked):
        raise WebhookInputError(
            "Trace sends webhooks to addresses on the internet, not inside its own network "
            "(localhost, 127.0.0.1, 10.x, 192.168.x and the like). Ask the operator if the "
            "partner's system is inside it."
        )
    kinds = _check_events(events)
    if session.get(Incident, incident_id) is None:
        raise NotFoundError(f"No incident with id {incident_id!r}.")
    active = session.scalars(
        select(WebhookEndpoint.id).where(
            WebhookEndpoint.incident_id == incident_id, WebhookEndpoint.removed_at.is_(None)
        )
    ).all()
    if len(active) >= MAX_ENDPOINTS:
        raise WebhookInputError(
            f"This incident has {MAX_ENDPOINTS} webhooks already: remove one first."
        )
    secret = new_secret()
    row = WebhookEndpoint(
        id=new_id("whk"),
        incident_id=incident_id,
        url=checked,
        secret=secret,
        events=kinds,
        created_by=created_by,
        created_at=utc_now(),
    )
    session.add(row)
    session.flush()
    audit.record(
        session,
        actor,
        "webhook.register",
        object_type="webhook",
        object_id=row.id,
        incident_id=incident_id,
        after={"url": shown_url(checked), "events": kinds or "all"},
    )
    return EndpointView.of(row), secret


def list_endpoints(
    session: Session, incident_id: str, *, include_removed: bool = False
) -> list[EndpointView]:
    """The incident's endpoints, oldest first (without their secrets)."""
    query = select(WebhookEndpoint).where(WebhookEndpoint.incident_id == incident_id)
    if not include_removed:
        query = query.where(WebhookEndpoint.removed_at.is_(None))
    rows = session.scalars(query.order_by(WebhookEndpoint.created_at, WebhookEndpoint.id))
    return [EndpointView.of(r) for r in rows]


def remove(session: Session, incident_id: str, endpoint_id: str, *, actor: Actor) -> EndpointView:
    """Stop sending to the endpoint: ``removed_at`` is set, what waited for it is skipped.
    Audited as ``webhook.remove``; removing a removed one changes nothing. Raises
    :class:`NotFoundError` for an endpoint not of this incident."""
    row = session.get(WebhookEndpoint, endpoint_id, with_for_update=True)
    if row is None or row.incident_id != incident_id:
        raise NotFoundError(f"No webhook with id {endpoint_id!r} in this incident.")
    if row.removed_at is None:
        row.removed_at = utc_now()
        session.execute(
            update(Delivery)
            .where(
                Delivery.channel == DeliveryChannel.WEBHOOK.value,
                Delivery.target_id == row.id,
                Delivery.state == DeliveryState.PENDING.value,
            )
            .values(state=DeliveryState.SKIPPED.value, last_error="webhook removed")
        )
        session.flush()
        audit.record(
            session,
            actor,
            "webhook.remove",
            object_type="webhook",
            object_id=row.id,
            incident_id=incident_id,
            before={"url": shown_url(row.url)},
        )
    return EndpointView.of(row)
