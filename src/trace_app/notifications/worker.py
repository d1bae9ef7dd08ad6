"""The delivery worker: fans out outbox events, then sends due deliveries (issue 41).

One pass (:meth:`DeliveryWorker.run_once`):

1. **Fan out** new events (:mod:`trace_app.notifications.fan_out`).
2. **Claim** due deliveries in one short transaction: ``pending``, ``next_attempt_at``
   reached, and no live lease. On PostgreSQL the rows are read ``FOR UPDATE SKIP LOCKED``,
   so replicas claim different rows; on SQLite the transaction starts with ``BEGIN
   IMMEDIATE``. A claim counts an attempt and sets ``lease_until``; a worker killed while
   sending leaves the lease to expire, and the delivery is claimed again (at least once).
   A delivery whose attempts are used up while its lease expired goes to the dead letters.
   Mail is not claimed while ``TRACE_SMTP_URL`` is unset: it waits, pending, and
   :func:`mail_waiting` says so.
3. **Send** each claimed delivery outside any transaction, then record the outcome:
   ``delivered``; or, after a failure, the next attempt ``TRACE_DELIVERY_RETRY_SECONDS``
   x 2^(attempts-1) later (capped at six hours, plus up to a tenth at random); or ``dead``
   after ``TRACE_DELIVERY_MAX_ATTEMPTS`` attempts or a permanent refusal. A delivery whose
   target went away meanwhile (a webhook removed, an enquirer unsubscribed or erased) is
   ``skipped``.

``trace serve`` runs one worker in a thread (``TRACE_DELIVERY_WORKER=0`` or
``--no-worker`` turns it off), woken as soon as the server commits an event; ``trace
worker`` runs one as its own process, which looks for work every 0.25 s. ADR 0181.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import httpx
from sqlalchemy import event, func, or_, select
from sqlalchemy.orm import Session, object_session

from trace_app.notifications import destinations, fan_out, mail, smtp, webhooks
from trace_app.notifications.webhooks import SendError
from trace_app.settings import TraceSettings
from trace_app.store.db import WRITE_TRANSACTION, Database
from trace_app.store.notification_models import (
    Delivery,
    DeliveryChannel,
    DeliveryState,
    Inquiry,
    OutboxEvent,
    WebhookEndpoint,
)

log = logging.getLogger(__name__)

CLAIM_BATCH = 20
MAX_BACKOFF_S = 6 * 3600.0
# the longest wait between two looks for due work when there was none (an indexed query)
POLL_S = 0.25
STOPPED_WHILE_SENDING = "the worker stopped while sending"
MailSender = Callable[[str, EmailMessage], None]


def backoff_s(retry_seconds: float, attempts: int) -> float:
    """The wait after the ``attempts``-th failed attempt (1, 2, ...), before jitter."""
    return float(min(retry_seconds * 2 ** max(attempts - 1, 0), MAX_BACKOFF_S))


def mail_waiting(session: Session, settings: TraceSettings, incident_id: str) -> int:
    """Mail of the incident waiting because no mail server is set (0 when one is)."""
    if settings.smtp_url:
        return 0
    count = session.scalar(
        select(func.count())
        .select_from(Delivery)
        .join(OutboxEvent, OutboxEvent.id == Delivery.event_id)
        .where(
            OutboxEvent.incident_id == incident_id,
            Delivery.channel == DeliveryChannel.EMAIL.value,
            Delivery.state == DeliveryState.PENDING.value,
        )
    )
    return int(count or 0)


@dataclass(slots=True)
class Prepared:
    """What one claimed delivery sends, read in a short transaction."""

    delivery_id: str
    channel: str
    url: str = ""
    secret: str = ""
    event_id: str = ""
    body: bytes = b""
    message: EmailMessage | None = None


@dataclass(slots=True)
class PassCounts:
    fanned_out: int = 0
    delivered: int = 0
    failed: int = 0
    dead: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def claimed(self) -> int:
        return self.delivered + self.failed + self.dead + self.skipped


class DeliveryWorker:
    def __init__(
        self,
        db: Database,
        settings: TraceSettings,
        *,
        mail_sender: MailSender | None = None,
        http_client: httpx.Client | None = None,
        batch: int = CLAIM_BATCH,
    ) -> None:
        self.db = db
        self.settings = settings
        self.mail_sender: MailSender = mail_sender or smtp.send
        # one client for the worker's life: its connection pool and TLS context are reused
        self.http_client = http_client or httpx.Client(
            timeout=webhooks.TIMEOUT_S, follow_redirects=False
        )
        self.batch = batch

    # --- one pass ------------------------------------------------------------------
    def has_work(self) -> bool:
        """Is an event waiting for fan-out, or a delivery due? One read without locks, so
        an idle worker never takes SQLite's write lock (or a PostgreSQL row lock)."""
        now = datetime.now(UTC)
        due = select(Delivery.id).where(
            Delivery.state == DeliveryState.PENDING.value,
            Delivery.next_attempt_at <= now,
            or_(Delivery.lease_until.is_(None), Delivery.lease_until <= now),
        )
        if not self.settings.smtp_url:
            due = due.where(Delivery.channel != DeliveryChannel.EMAIL.value)
        new = select(OutboxEvent.id).where(OutboxEvent.fanned_out_at.is_(None))
        with self.db.sessions() as session:
            found = session.scalar(select(or_(new.exists(), due.exists())))
        return bool(found)

    def run_once(self) -> PassCounts:
        counts = PassCounts()
        if not self.has_work():
            return counts
        while True:
            with self.db.session() as session:
                handled = fan_out.fan_out_pending(session)
            counts.fanned_out += handled
            if handled < fan_out.BATCH:
                break
        for delivery_id in self.claim():
            self.deliver(delivery_id, counts)
        return counts

    def drain(self, max_passes: int = 1000) -> PassCounts:
        """Passes until nothing is due (tests, ``trace worker --once``)."""
        total = PassCounts()
        for _ in range(max_passes):
            counts = self.run_once()
            for name in ("fanned_out", "delivered", "failed", "dead", "skipped"):
                setattr(total, name, getattr(total, name) + getattr(counts, name))
            if counts.claimed == 0 and counts.fanned_out == 0:
                break
        return total

    def claim(self) -> list[str]:
        now = datetime.now(UTC)
        lease = timedelta(seconds=self.settings.delivery_lease_seconds)
        with self.db.session() as session:
            session.connection(execution_options=WRITE_TRANSACTION)  # SQLite: BEGIN IMMEDIATE
            query = (
                select(Delivery)
                .where(
                    Delivery.state == DeliveryState.PENDING.value,
                    Delivery.next_attempt_at <= now,
                    or_(Delivery.lease_until.is_(None), Delivery.lease_until <= now),
                )
                .order_by(Delivery.next_attempt_at, Delivery.id)
                .limit(self.batch)
            )
            if not self.settings.smtp_url:
                query = query.where(Delivery.channel != DeliveryChannel.EMAIL.value)
            if fan_out.is_postgres(session):
                query = query.with_for_update(skip_locked=True)
            claimed = []
            for delivery in session.scalars(query):
                if delivery.attempts >= self.settings.delivery_max_attempts:
                    delivery.state = DeliveryState.DEAD.value
                    delivery.lease_until = None
                    delivery.last_error = delivery.last_error or STOPPED_WHILE_SENDING
                    continue
                delivery.attempts += 1
                delivery.lease_until = now + lease
                claimed.append(delivery.id)
        return claimed

    # --- one delivery --------------------------------------------------------------
    def deliver(self, delivery_id: str, counts: PassCounts) -> None:
        try:
            prepared = self._prepare(delivery_id)
        except Exception as exc:  # a message that cannot be built is a failed attempt
            log.exception("delivery %s could not be prepared", delivery_id)
            self._record(delivery_id, SendError(f"could not be prepared ({type(exc).__name__})"))
            counts.failed += 1
            return
        if prepared is None:
            counts.skipped += 1
            return
        try:
            if prepared.channel == DeliveryChannel.WEBHOOK.value:
                if not self.settings.webhook_private_addresses:
                    inside = destinations.resolved_inside(prepared.url)
                    if inside is not None:
                        raise SendError(
                            f"the partner's address ({inside}) is inside this server's "
                            "network, where Trace sends nothing",
                            permanent=True,
                        )
                webhooks.send(
                    prepared.url,
                    prepared.secret,
                    prepared.event_id,
                    prepared.body,
                    client=self.http_client,
                )
            else:
                assert prepared.message is not None and self.settings.smtp_url
                self.mail_sender(self.settings.smtp_url, prepared.message)
        except SendError as exc:
            state = self._record(delivery_id, exc)
            if state == DeliveryState.DEAD.value:
                counts.dead += 1
            else:
                counts.failed += 1
            counts.errors.append(str(exc))
            return
        self._record(delivery_id, None)
        counts.delivered += 1

    def _prepare(self, delivery_id: str) -> Prepared | None:
        """What to send; None (and the delivery ``skipped``) when its target is gone."""
        with self.db.session() as session:
            delivery = session.get(Delivery, delivery_id)
            assert delivery is not None
            event = session.get(OutboxEvent, delivery.event_id)
            assert event is not None
            if delivery.channel == DeliveryChannel.WEBHOOK.value:
                endpoint = session.get(WebhookEndpoint, delivery.target_id)
                if endpoint is None or endpoint.removed_at is not None:
                    return self._skip(delivery, "the webhook was removed")
                return Prepared(
                    delivery_id,
                    delivery.channel,
                    url=endpoint.url,
                    secret=endpoint.secret,
                    event_id=event.id,
                    body=webhooks.body_of(event.kind, event.payload),
                )
            inquiry = session.get(Inquiry, delivery.target_id)
            if (
                inquiry is None
                or not inquiry.email
                or inquiry.contacts_erased_at is not None
                or inquiry.unsubscribed_at is not None
            ):
                return self._skip(delivery, "the enquirer unsubscribed or was erased")
            try:
                message = mail.compose(
                    session, self.settings, delivery, event.kind, event.payload, inquiry
                )
            except mail.DeathByMailError:
                return self._skip(delivery, "a death is told in person")
            return Prepared(delivery_id, delivery.channel, message=message)

    @staticmethod
    def _skip(delivery: Delivery, why: str) -> None:
        delivery.state = DeliveryState.SKIPPED.value
        delivery.lease_until = None
        delivery.last_error = why
        return None

    def _record(self, delivery_id: str, error: SendError | None) -> str:
        now = datetime.now(UTC)
        with self.db.session() as session:
            delivery = session.get(Delivery, delivery_id)
            assert delivery is not None
            if error is None:
                delivery.state = DeliveryState.DELIVERED.value
                delivery.delivered_at = delivery.delivered_at or now
                delivery.last_error = None
            elif delivery.state == DeliveryState.PENDING.value:
                delivery.last_error = str(error)[:500]
                if error.permanent or delivery.attempts >= self.settings.delivery_max_attempts:
                    delivery.state = DeliveryState.DEAD.value
                else:
                    wait = backoff_s(self.settings.delivery_retry_seconds, delivery.attempts)
                    wait *= 1 + random.random() / 10
                    delivery.next_attempt_at = now + timedelta(seconds=wait)
            delivery.lease_until = None
            return delivery.state

    # --- running -------------------------------------------------------------------
    def poll_interval_s(self) -> float:
        return min(POLL_S, max(0.02, self.settings.delivery_retry_seconds / 2))

    def run_forever(self, stop: threading.Event) -> None:
        """Passes until ``stop`` is set; a pass with nothing to do waits a poll interval,
        or less when this process commits an event (:func:`wake_on_commit`). A failing
        pass (the database away) is logged and retried, never fatal."""
        while not stop.is_set():
            WAKE.clear()  # before the pass: an event committed during it wakes the next
            try:
                counts = self.run_once()
            except Exception:
                log.exception("delivery pass failed; retrying")
                stop.wait(max(1.0, self.poll_interval_s()))
                continue
            if counts.claimed == 0 and counts.fanned_out == 0:
                WAKE.wait(self.poll_interval_s())


# Set when a session of this process commits an outbox event (trace serve's web requests):
# the worker thread beside them starts at once instead of at its next look. Events
# written by another process wait for that look (POLL_S at most).
WAKE = threading.Event()
_OUTBOX_WRITTEN = "trace_outbox_written"


def _event_inserted(_mapper: object, _connection: object, target: OutboxEvent) -> None:
    session = object_session(target)
    if session is not None:
        session.info[_OUTBOX_WRITTEN] = True


def _committed(session: Session) -> None:
    if session.info.pop(_OUTBOX_WRITTEN, False):
        WAKE.set()


def _rolled_back(session: Session) -> None:
    session.info.pop(_OUTBOX_WRITTEN, None)


def wake_on_commit() -> None:
    """Wake this process's worker when one of its sessions commits an outbox event
    (idempotent; ``start_thread`` calls it)."""
    if not event.contains(OutboxEvent, "after_insert", _event_inserted):
        event.listen(OutboxEvent, "after_insert", _event_inserted)
        event.listen(Session, "after_commit", _committed)
        event.listen(Session, "after_rollback", _rolled_back)


def start_thread(db: Database, settings: TraceSettings) -> tuple[threading.Thread, threading.Event]:
    """A worker in a daemon thread (``trace serve``); set the event to stop it."""
    wake_on_commit()
    stop = threading.Event()
    worker = DeliveryWorker(db, settings)
    thread = threading.Thread(
        target=worker.run_forever, args=(stop,), name="trace-delivery", daemon=True
    )
    thread.start()
    return thread, stop
