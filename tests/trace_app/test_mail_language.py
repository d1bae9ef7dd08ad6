"""Each mail goes in the enquirer's language (issue 42): an enquirer whose language is
``ne`` gets the news in Nepali, through the real delivery worker and a real SMTP server
(aiosmtpd on 127.0.0.1), whatever language the worker's own context is in; the page its
unsubscribe link opens speaks Nepali too."""

from __future__ import annotations

import email.policy
import json
import re
import socket
import sqlite3
import threading
import time
from datetime import UTC, datetime
from email import message_from_bytes
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from fastapi.testclient import TestClient

from trace_app import i18n
from trace_app.notifications.worker import DeliveryWorker
from trace_app.settings import TraceSettings
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import Incident, Person
from trace_app.store.notification_models import EventKind, Inquiry, OutboxEvent
from trace_app.store.types import new_id
from trace_app.web.app import create_app


class _Inbox:
    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.arrived = threading.Condition()

    async def handle_DATA(self, _server: Any, _session: Any, envelope: Any) -> str:
        with self.arrived:
            message = message_from_bytes(envelope.content, policy=email.policy.default)
            assert isinstance(message, EmailMessage)
            self.messages.append(message)
            self.arrived.notify_all()
        return "250 OK"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[EmailMessage]:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.messages) < count and time.monotonic() < deadline:
                self.arrived.wait(deadline - time.monotonic())
            return list(self.messages)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _rows(db: Database) -> None:
    """An incident in Kathmandu, a person, an enquirer who reads Nepali (address
    confirmed), and the change the outbox holds: the person is now safe."""
    now = datetime(2026, 12, 2, 8, 20, tzinfo=UTC)
    with db.session() as session:
        incident = Incident(id=new_id("inc"), name="Flood", time_zone="Asia/Kathmandu")
        session.add(incident)
        session.flush()
        person = Person(
            id=new_id("per"), incident_id=incident.id, name="Bikash Shrestha", name_key="bikash"
        )
        session.add(person)
        session.flush()
        session.add(
            Inquiry(
                id=new_id("inq"),
                incident_id=incident.id,
                person_id=person.id,
                enquirer_name="Anil Shrestha",
                relationship="brother",
                email="anil@example.org",
                language="ne",
                consent_at=now,
                email_confirmed_at=now,
            )
        )
        payload = {
            "incident_id": incident.id,
            "person_id": person.id,
            "person_name": "Bikash Shrestha",
            "status": "safe",
            "previous_status": "missing",
            "at": now.isoformat(),
            "report_id": None,
        }
        session.add(
            OutboxEvent(
                id=new_id("evt"),
                incident_id=incident.id,
                kind=EventKind.STATUS_CHANGED.value,
                person_id=person.id,
                payload=json.dumps(payload),
            )
        )


def test_an_enquirer_who_reads_nepali_gets_the_news_in_nepali(
    tmp_path: Path, migrated_sqlite: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    source, copy = sqlite3.connect(migrated_sqlite), sqlite3.connect(home / "trace.db")
    source.backup(copy)
    source.close()
    copy.close()
    inbox = _Inbox()
    port = _free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    db = Database(make_engine(f"sqlite:///{home / 'trace.db'}"))
    try:
        migrate(db.engine)
        settings = TraceSettings(
            home=home,
            database_url=f"sqlite:///{home / 'trace.db'}",
            public_url="http://localhost",
            smtp_url=f"smtp://127.0.0.1:{port}",
        )
        _rows(db)
        # the worker's own context reads Arabic: the mail still follows the enquirer
        with i18n.language("ar"):
            assert DeliveryWorker(db, settings).drain().delivered == 1
        (mail,) = inbox.wait_for(1)
        part = mail.get_body()
        assert part is not None
        body = str(part.get_content())
        # the unsubscribe link opens a page in the enquirer's language, no cookie needed
        link = re.search(r"http://localhost(/subscriptions/unsubscribe/[A-Za-z0-9_-]+)", body)
        assert link
        with TestClient(create_app(settings, db=db), base_url="http://localhost") as web:
            page = web.get(link.group(1), headers={"accept-language": "fr"}).text
            assert '<html lang="ne" dir="ltr">' in page
            chosen = web.get(link.group(1) + "?lang=es").text  # a visitor's choice wins
            assert '<html lang="es" dir="ltr">' in chosen
    finally:
        controller.stop()
        db.dispose()

    assert mail["Content-Language"] == "ne"
    safe = i18n.translate_in("ne", "Safe")
    assert safe == "सुरक्षित"
    # the subject: "News about {person}: {phrase}", in Nepali, the name as it was written
    assert mail["Subject"] == f"Bikash Shrestha बारे खबर: {safe}"
    assert body.startswith("नमस्ते Anil Shrestha,")
    assert f"अहिलेको अवस्था: {safe}।" in body
    assert "डिसेम्बर 2, 14:05 (Kathmandu)" in body  # the date in Nepali, Kathmandu time
    # no English sentence of the message is left, and no Arabic from the worker's context
    for english in ("Hello", "There is news", "Status now", "To stop these messages"):
        assert english not in body
    assert not any("\u0600" <= ch <= "\u06ff" for ch in body)
