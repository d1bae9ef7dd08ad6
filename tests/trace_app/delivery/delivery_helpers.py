"""Real parts for the delivery tests (issue 41): an SMTP server (aiosmtpd) and a webhook
receiver on 127.0.0.1, and rows written as the change sites write them."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller
from sqlalchemy.orm import Session

from trace_app.store.models import Incident, Person
from trace_app.store.notification_models import (
    EventKind,
    Inquiry,
    OutboxEvent,
    WebhookEndpoint,
)
from trace_app.store.types import new_id

SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"  # base64 of 24 test bytes
ENQUIRER_EMAIL = "anil@example.org"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- SMTP ------------------------------------------------------------------------------
class _Inbox:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.arrived = threading.Condition()

    async def handle_DATA(self, _server: Any, _session: Any, envelope: Any) -> str:
        with self.arrived:
            self.messages.append(message_from_bytes(envelope.content))
            self.arrived.notify_all()
        return "250 OK"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Message]:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.messages) < count and time.monotonic() < deadline:
                self.arrived.wait(deadline - time.monotonic())
            return list(self.messages)


@dataclass
class SmtpSink:
    url: str
    inbox: _Inbox


@contextmanager
def smtp_sink() -> Iterator[SmtpSink]:
    inbox = _Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield SmtpSink(f"smtp://127.0.0.1:{port}", inbox)
    finally:
        controller.stop()


# --- webhooks --------------------------------------------------------------------------
@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    status: int
    path: str = ""


@dataclass
class Receiver:
    url: str
    calls: list[Received] = field(default_factory=list)
    # answer for the n-th call (0-based): an HTTP status
    answer: Callable[[int], int] = lambda _n: 200
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.calls) >= count:
                    return list(self.calls)
            time.sleep(0.01)
        with self.lock:
            return list(self.calls)


@contextmanager
def webhook_receiver(answer: Callable[[int], int] = lambda _n: 200) -> Iterator[Receiver]:
    receiver = Receiver(url="", answer=answer)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            call = Received(headers, body, 0, self.path)
            with receiver.lock:
                number = len(receiver.calls)
                receiver.calls.append(call)
            call.status = receiver.answer(number)  # may wait (a receiver that hangs)
            self.send_response(call.status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


# --- rows ------------------------------------------------------------------------------
def make_incident(session: Session, name: str = "Flood test") -> tuple[str, str]:
    """A new incident with one person (Bikash Shrestha); (incident id, person id)."""
    incident = Incident(id=new_id("inc"), name=f"{name} {new_id('x')[-6:]}", time_zone="UTC")
    session.add(incident)
    session.flush()
    person = Person(
        id=new_id("per"),
        incident_id=incident.id,
        name="Bikash Shrestha",
        name_key="bikash shrestha",
    )
    session.add(person)
    session.flush()
    return incident.id, person.id


def make_inquiry(
    session: Session,
    incident_id: str,
    person_id: str,
    *,
    email: str | None = ENQUIRER_EMAIL,
    confirmed: bool = False,
    language: str = "en",
) -> str:
    now = datetime.now(UTC)
    inquiry = Inquiry(
        id=new_id("inq"),
        incident_id=incident_id,
        person_id=person_id,
        enquirer_name="Anil Shrestha",
        relationship="brother",
        email=email,
        phone="+977 1 555 0100",
        note="asks for news of his brother",
        language=language,
        consent_at=now,
        email_confirmed_at=now if confirmed else None,
    )
    session.add(inquiry)
    session.flush()
    return inquiry.id


def make_endpoint(session: Session, incident_id: str, url: str, secret: str = SECRET) -> str:
    endpoint = WebhookEndpoint(id=new_id("whk"), incident_id=incident_id, url=url, secret=secret)
    session.add(endpoint)
    session.flush()
    return endpoint.id


def make_event(
    session: Session,
    incident_id: str,
    person_id: str,
    kind: EventKind = EventKind.STATUS_CHANGED,
    *,
    status: str = "safe",
    previous: str = "missing",
    inquiry_id: str | None = None,
) -> str:
    """An outbox event as domain/status_events writes one (the contract's payload)."""
    payload: dict[str, Any] = {
        "incident_id": incident_id,
        "person_id": person_id,
        "person_name": "Bikash Shrestha",
        "status": status,
        "previous_status": previous,
        "at": datetime.now(UTC).isoformat(),
        "report_id": None,
    }
    if inquiry_id is not None:
        payload["inquiry_id"] = inquiry_id
    event = OutboxEvent(
        id=new_id("evt"),
        incident_id=incident_id,
        kind=kind.value,
        person_id=person_id,
        payload=json.dumps(payload),
    )
    session.add(event)
    session.flush()
    return event.id
