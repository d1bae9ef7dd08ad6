"""Sending one event to a partner's webhook, signed as Standard Webhooks says.

Headers: ``webhook-id`` (the outbox event's id: the same on every retry, so a receiver
deduplicates by it), ``webhook-timestamp`` (seconds), ``webhook-signature`` (``v1,`` and
the base64 HMAC-SHA256 of ``id.timestamp.body`` under the endpoint's ``whsec_`` secret,
made by the ``standardwebhooks`` package). The body is the event's kind, time and data:
the incident, the person's id and name, the new and previous status, the time and the
report it came from. It is built from a fixed list of keys, so an enquirer's contacts
can never be in it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx
from standardwebhooks import Webhook

TIMEOUT_S = 10.0
USER_AGENT = "Trace-Webhooks/1"
# the payload keys a partner receives (never an enquirer's name, email, phone or note)
DATA_KEYS = (
    "incident_id",
    "person_id",
    "person_name",
    "status",
    "previous_status",
    "at",
    "report_id",
    "alert_id",
    "inquiry_id",
)


class SendError(Exception):
    """A delivery attempt failed; the message is short and holds no secret. ``permanent``:
    retrying cannot help (the delivery goes straight to the dead letters)."""

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


def body_of(kind: str, payload_text: str) -> bytes:
    """The JSON body for an event: ``{"type", "timestamp", "data"}``; the same bytes for
    every attempt of one event."""
    payload: dict[str, Any] = json.loads(payload_text)
    data = {key: payload.get(key) for key in DATA_KEYS if key in payload}
    document = {"type": kind, "timestamp": payload.get("at"), "data": data}
    return json.dumps(document, ensure_ascii=False, sort_keys=True).encode("utf-8")


def signed_headers(secret: str, event_id: str, body: bytes, now: datetime) -> dict[str, str]:
    signature = Webhook(secret).sign(event_id, now, body.decode("utf-8"))
    return {
        "webhook-id": event_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": signature,
        "content-type": "application/json",
        "user-agent": USER_AGENT,
    }


def send(
    url: str,
    secret: str,
    event_id: str,
    body: bytes,
    *,
    client: httpx.Client | None = None,
    timeout: float = TIMEOUT_S,
) -> None:
    """POST the signed body; any 2xx answer counts as delivered. Raises :class:`SendError`
    otherwise (a 410 Gone is permanent, as the specification suggests). Redirects are not
    followed."""
    headers = signed_headers(secret, event_id, body, datetime.now(UTC))
    try:
        if client is None:
            with httpx.Client(timeout=timeout, follow_redirects=False) as own:
                response = own.post(url, content=body, headers=headers)
        else:
            response = client.post(url, content=body, headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        raise SendError(f"the receiver could not be reached ({type(exc).__name__})") from None
    if not 200 <= response.status_code < 300:
        raise SendError(
            f"the receiver answered HTTP {response.status_code}",
            permanent=response.status_code == 410,
        )
