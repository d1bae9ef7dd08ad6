"""Delivery through real parts (issue 41): mail to an aiosmtpd server on 127.0.0.1 and
webhooks to an HTTP receiver that fails first, then succeeds; the dead letter; mail that
waits without a mail server; a death never mailed; a dead worker's lease taken again."""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from delivery_helpers import (
    ENQUIRER_EMAIL,
    SECRET,
    make_endpoint,
    make_event,
    make_incident,
    make_inquiry,
    smtp_sink,
    webhook_receiver,
)
from fastapi.testclient import TestClient
from sqlalchemy import select
from standardwebhooks import Webhook

from trace_app.notifications import destinations, fan_out
from trace_app.notifications import worker as worker_module
from trace_app.notifications.worker import DeliveryWorker, mail_waiting
from trace_app.settings import TraceSettings
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.notification_models import (
    Delivery,
    DeliveryChannel,
    DeliveryState,
    EventKind,
    Inquiry,
    OutboxEvent,
)
from trace_app.web.app import create_app

LINK = re.compile(r"http://localhost(/subscriptions/(?:confirm|unsubscribe)/[A-Za-z0-9_-]+)")


@pytest.fixture
def settings(tmp_path: Path, migrated_sqlite: Path) -> TraceSettings:
    home = tmp_path / "home"
    home.mkdir()
    source, copy = sqlite3.connect(migrated_sqlite), sqlite3.connect(home / "trace.db")
    source.backup(copy)
    source.close()
    copy.close()
    return TraceSettings(
        home=home,
        database_url=f"sqlite:///{home / 'trace.db'}",
        public_url="http://localhost",
        delivery_retry_seconds=0.01,
        delivery_max_attempts=3,
        webhook_private_addresses=True,  # the receivers listen on 127.0.0.1
    )


@pytest.fixture
def db(settings: TraceSettings) -> Iterator[Database]:
    database = Database(make_engine(settings.database_url))
    migrate(database.engine)
    yield database
    database.dispose()


def _deliveries(db: Database, channel: DeliveryChannel | None = None) -> list[Delivery]:
    with db.session() as session:
        query = select(Delivery).order_by(Delivery.created_at, Delivery.id)
        if channel is not None:
            query = query.where(Delivery.channel == channel.value)
        return list(session.scalars(query))


def test_confirmation_then_news_and_one_click_unsubscribe(
    settings: TraceSettings, db: Database
) -> None:
    with smtp_sink() as smtp:
        settings = replace(settings, smtp_url=smtp.url, mail_from="Trace <trace@relief.example>")
        with db.session() as session:
            incident_id, person_id = make_incident(session)
            inquiry_id = make_inquiry(session, incident_id, person_id)
            make_event(
                session, incident_id, person_id, EventKind.INQUIRY_CREATED, inquiry_id=inquiry_id
            )
        worker = DeliveryWorker(db, settings)
        assert worker.drain().delivered == 1
        [confirmation] = smtp.inbox.wait_for(1)
        assert confirmation["To"] == ENQUIRER_EMAIL
        assert "confirm" in confirmation["Subject"].lower()
        assert confirmation["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        [delivery] = _deliveries(db)
        assert confirmation["Message-ID"] == f"<{delivery.id}@relief.example>"
        text = confirmation.get_payload(decode=True).decode()
        confirm_path = next(m for m in LINK.findall(text) if "/confirm/" in m)

        client = TestClient(create_app(settings, db=db), base_url="http://localhost")
        # a mail scanner's GET changes nothing
        assert client.get(confirm_path).status_code == 200
        with db.session() as session:
            assert session.get(Inquiry, inquiry_id).email_confirmed_at is None  # type: ignore[union-attr]
        page = client.get(confirm_path)
        token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
        assert token is not None
        answer = client.post(confirm_path, data={"csrf_token": token.group(1)})
        assert answer.status_code == 200, answer.text
        assert client.post(confirm_path, data={"csrf_token": token.group(1)}).status_code == 404

        # the person is found safe: the confirmed enquirer gets the news
        with db.session() as session:
            make_event(session, incident_id, person_id, status="safe", previous="missing")
        assert worker.drain().delivered == 1
        news = smtp.inbox.wait_for(2)[1]
        body = news.get_payload(decode=True).decode()
        assert "Bikash Shrestha" in news["Subject"] and "Safe" in news["Subject"]
        assert "Someone reported this person safe." in body
        assert "Date: " in body and inquiry_id in body
        unsubscribe = news["List-Unsubscribe"]
        match = LINK.search(unsubscribe)
        assert match is not None and unsubscribe.startswith("<") and "/unsubscribe/" in unsubscribe
        assert match.group(1) in body

        # RFC 8058: the provider's one-click POST, with no cookie and no form token, twice
        provider = TestClient(create_app(settings, db=db), base_url="http://localhost")
        for _ in range(2):
            done = provider.post(
                match.group(1),
                content=b"List-Unsubscribe=One-Click",
                headers={"content-type": "application/x-www-form-urlencoded"},
            )
            assert done.status_code == 200, done.text
        with db.session() as session:
            assert session.get(Inquiry, inquiry_id).unsubscribed_at is not None  # type: ignore[union-attr]
            make_event(session, incident_id, person_id, status="seen", previous="safe")
        assert worker.drain().delivered == 0
        assert len(smtp.inbox.messages) == 2


def test_webhook_retry_keeps_its_id_and_the_signature_verifies(
    settings: TraceSettings, db: Database
) -> None:
    with webhook_receiver(answer=lambda n: 503 if n == 0 else 204) as receiver:
        with db.session() as session:
            incident_id, person_id = make_incident(session)
            make_inquiry(session, incident_id, person_id, confirmed=True)
            make_endpoint(session, incident_id, receiver.url)
            event_id = make_event(session, incident_id, person_id, status="admitted")
        worker = DeliveryWorker(db, settings)
        first = worker.run_once()
        assert (first.failed, first.delivered) == (1, 0)
        time.sleep(0.05)  # past the first backoff step (0.01 s, plus up to a tenth)
        worker.drain()
        calls = receiver.wait_for(2)
        assert [c.status for c in calls] == [503, 204]
        assert {c.headers["webhook-id"] for c in calls} == {event_id}
        for call in calls:
            document = Webhook(SECRET).verify(call.body, call.headers)
            assert document["data"]["person_id"] == person_id
            assert document["data"]["status"] == "admitted"
            assert document["type"] == "status.changed"
        # never an enquirer's contacts
        assert ENQUIRER_EMAIL.encode() not in calls[1].body and b"Anil" not in calls[1].body
        [webhook] = _deliveries(db, DeliveryChannel.WEBHOOK)
        assert (webhook.state, webhook.attempts) == (DeliveryState.DELIVERED.value, 2)
        # the mail waits (no mail server set), it is not lost
        [email] = _deliveries(db, DeliveryChannel.EMAIL)
        assert (email.state, email.attempts) == (DeliveryState.PENDING.value, 0)
        with db.session() as session:
            assert mail_waiting(session, settings, incident_id) == 1


def test_dead_letter_after_the_last_attempt(settings: TraceSettings, db: Database) -> None:
    with webhook_receiver(answer=lambda _n: 500) as receiver:
        with db.session() as session:
            incident_id, person_id = make_incident(session)
            make_endpoint(session, incident_id, receiver.url)
            make_event(session, incident_id, person_id)
        worker = DeliveryWorker(db, settings)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            worker.run_once()
            [delivery] = _deliveries(db)
            if delivery.state != DeliveryState.PENDING.value:
                break
            time.sleep(0.02)
        assert delivery.state == DeliveryState.DEAD.value
        assert delivery.attempts == settings.delivery_max_attempts == 3
        assert delivery.last_error == "the receiver answered HTTP 500"
        assert len(receiver.calls) == 3


def test_a_death_is_sent_to_webhooks_and_never_mailed(
    settings: TraceSettings, db: Database
) -> None:
    with smtp_sink() as smtp, webhook_receiver() as receiver:
        settings = replace(settings, smtp_url=smtp.url)
        with db.session() as session:
            incident_id, person_id = make_incident(session)
            make_inquiry(session, incident_id, person_id, confirmed=True)
            make_endpoint(session, incident_id, receiver.url)
            make_event(session, incident_id, person_id, status="deceased", previous="missing")
        DeliveryWorker(db, settings).drain()
        assert [d.channel for d in _deliveries(db)] == [DeliveryChannel.WEBHOOK.value]
        assert len(receiver.wait_for(1)) == 1
        assert smtp.inbox.messages == []


def test_a_commit_in_this_process_wakes_the_idle_worker(
    settings: TraceSettings, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_module, "POLL_S", 5.0)  # its own look would come much later
    settings = replace(settings, delivery_retry_seconds=30)
    with webhook_receiver() as receiver:
        with db.session() as session:
            incident_id, person_id = make_incident(session)
            make_endpoint(session, incident_id, receiver.url)
        thread, stop = worker_module.start_thread(db, settings)
        try:
            time.sleep(0.3)  # idle: nothing to do, waiting
            committed = time.monotonic()
            with db.session() as session:
                event_id = make_event(session, incident_id, person_id)
            calls = receiver.wait_for(1, timeout=4)
            assert [c.headers["webhook-id"] for c in calls] == [event_id]
            assert time.monotonic() - committed < 2
        finally:
            stop.set()
            worker_module.WAKE.set()
            thread.join(5)


def test_mail_for_contacts_erased_after_the_fan_out_is_skipped(
    settings: TraceSettings, db: Database
) -> None:
    with smtp_sink() as smtp:
        settings = replace(settings, smtp_url=smtp.url)
        with db.session() as session:
            incident_id, person_id = make_incident(session)
            inquiry_id = make_inquiry(session, incident_id, person_id, confirmed=True)
            make_event(session, incident_id, person_id, status="safe")
        with db.session() as session:
            assert fan_out.fan_out_pending(session) == 1
            inquiry = session.get(Inquiry, inquiry_id)
            assert inquiry is not None
            inquiry.email = inquiry.phone = inquiry.note = None  # erased on request
            inquiry.contacts_erased_at = inquiry.consent_at
        counts = DeliveryWorker(db, settings).drain()
        assert (counts.delivered, counts.skipped) == (0, 1)
        [delivery] = _deliveries(db)
        assert delivery.state == DeliveryState.SKIPPED.value
        assert smtp.inbox.messages == []


def test_mail_is_in_the_enquirers_language(settings: TraceSettings, db: Database) -> None:
    with smtp_sink() as smtp:
        settings = replace(settings, smtp_url=smtp.url)
        with db.session() as session:
            incident_id, person_id = make_incident(session)
            for language in ("es", "en"):
                make_inquiry(session, incident_id, person_id, confirmed=True, language=language)
            make_event(session, incident_id, person_id, status="safe")
        assert DeliveryWorker(db, settings).drain().delivered == 2
        received = smtp.inbox.wait_for(2)
        by_language = {m["Content-Language"]: m for m in received}
        english, spanish = by_language["en"], by_language["es"]
        assert english["Subject"] == "News about Bikash Shrestha: Safe"
        assert spanish["Subject"] != english["Subject"] and "Bikash Shrestha" in spanish["Subject"]
        assert "Hola" in spanish.get_payload(decode=True).decode()


def test_one_change_one_mail_an_alert_alone_is_mailed(
    settings: TraceSettings, db: Database
) -> None:
    with smtp_sink() as smtp:
        settings = replace(settings, smtp_url=smtp.url)
        with db.session() as session:
            incident_id, person_id = make_incident(session)
            make_inquiry(session, incident_id, person_id, confirmed=True)
            # a safe report: the status changes and the alert closes, in one transaction
            make_event(session, incident_id, person_id, status="safe")
            make_event(session, incident_id, person_id, EventKind.ALERT_CLOSED, status="safe")
        assert DeliveryWorker(db, settings).drain().delivered == 1
        with db.session() as session:
            opened = make_event(
                session, incident_id, person_id, EventKind.ALERT_OPENED, status="seen"
            )
            session.get(OutboxEvent, opened).created_at += timedelta(minutes=5)  # type: ignore[union-attr]
        assert DeliveryWorker(db, settings).drain().delivered == 1
        subjects = [m["Subject"] for m in smtp.inbox.wait_for(2)]
        assert subjects == ["News about Bikash Shrestha: Safe", "News about Bikash Shrestha: Seen"]
        body = smtp.inbox.messages[1].get_payload(decode=True).decode()
        assert "People are still looking for this person." in body


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_a_dead_workers_claim_is_taken_again_and_fan_out_is_once(
    backend: str, settings: TraceSettings, request: pytest.FixtureRequest
) -> None:
    url = settings.database_url
    if backend == "postgres":
        url = request.getfixturevalue("pg_schema_url")
    db = Database(make_engine(url))
    migrate(db.engine)
    settings = replace(settings, database_url=url, delivery_lease_seconds=0.3)
    try:
        with webhook_receiver() as receiver:
            with db.session() as session:
                incident_id, person_id = make_incident(session)
                make_endpoint(session, incident_id, receiver.url)
                make_endpoint(session, incident_id, receiver.url + "?second")
                event_id = make_event(session, incident_id, person_id)
            for _ in range(2):  # a second fan-out (another replica) adds nothing
                with db.session() as session:
                    assert fan_out.fan_out_pending(session) == 1
                with db.session() as session:
                    session.get(OutboxEvent, event_id).fanned_out_at = None  # type: ignore[union-attr]
            assert len(_deliveries(db)) == 2
            dying, other = DeliveryWorker(db, settings), DeliveryWorker(db, settings)
            claimed = dying.claim()  # ...and the process is killed before it sends
            assert len(claimed) == 2 and other.claim() == []
            time.sleep(0.35)
            counts = other.drain()
            assert counts.delivered == 2
            assert {c.headers["webhook-id"] for c in receiver.wait_for(2)} == {event_id}
            assert [d.attempts for d in _deliveries(db)] == [2, 2]
    finally:
        db.dispose()


# --- where webhooks may go (notifications.destinations) ---------------------------------
def test_an_address_inside_the_servers_network_is_never_posted_to(
    settings: TraceSettings, db: Database
) -> None:
    """``127.1`` reads as no address (so registration's check lets it by) but resolves to
    127.0.0.1: the worker looks the name up and refuses, dead at once, nothing sent; with
    TRACE_WEBHOOK_PRIVATE_ADDRESSES=allow the same delivery goes."""
    with webhook_receiver() as receiver:
        hidden = receiver.url.replace("127.0.0.1", "127.1")
        with db.session() as session:
            incident_id, person_id = make_incident(session)
            make_endpoint(session, incident_id, hidden)
            make_event(session, incident_id, person_id, status="safe")
        refusing = replace(settings, webhook_private_addresses=False)
        DeliveryWorker(db, refusing).drain()
        [webhook] = _deliveries(db, DeliveryChannel.WEBHOOK)
        assert (webhook.state, webhook.attempts) == (DeliveryState.DEAD.value, 1)
        assert "inside this server's network" in (webhook.last_error or "")
        assert receiver.calls == []

        with db.session() as session:
            make_event(session, incident_id, person_id, status="missing")
        DeliveryWorker(db, settings).drain()  # allowed
        assert len(receiver.wait_for(1)) == 1


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/in",
        "http://localhost/in",
        "http://api.localhost/in",
        "http://10.1.2.3/in",
        "http://192.168.0.5/in",
        "http://100.64.0.1/in",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/in",
        "http://[::ffff:127.0.0.1]/in",
        "http://0.0.0.0/in",
        "http://224.0.0.1/in",
    ],
)
def test_registering_an_address_inside_is_refused_in_words(url: str, web: TestClient) -> None:
    incident_id = web.get("/api/incidents").json()["items"][0]["id"]
    answer = web.post(f"/api/incidents/{incident_id}/webhooks", json={"url": url})
    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == "invalid_webhook"
    assert "inside its own network" in answer.json()["detail"]


def test_a_public_destination_is_taken(web: TestClient) -> None:
    incident_id = web.get("/api/incidents").json()["items"][0]["id"]
    answer = web.post(
        f"/api/incidents/{incident_id}/webhooks", json={"url": "https://8.8.8.8/hook"}
    )
    assert answer.status_code == 201, answer.text
    assert destinations.resolved_inside("https://8.8.8.8/hook") is None
    assert destinations.resolved_inside("http://127.1:9/") == "127.0.0.1"
