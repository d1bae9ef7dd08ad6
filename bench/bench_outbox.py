"""Notifications (issue 41): what the outbox costs a publish, how soon a change reaches a
partner and an enquirer, and whether deliveries survive failures and a SIGKILL.

1. **Publish latency with the outbox against without it**: ``publish_and_commit`` of a
   report that changes the person's status (missing, safe, missing, ...), timed with the
   outbox (``domain/status_events`` reads the group before and writes the events in the
   same transaction) and without it (those two calls replaced by no-ops), interleaved in
   one run. Prints both medians and the ratio (target <= 1.15x).
2. **Change to delivered**: a delivery worker runs in a thread (as in ``trace serve``,
   default settings) with a real SMTP server (aiosmtpd) and a real HTTP receiver on
   127.0.0.1; for each change, the time from its commit to the first webhook and to the
   first mail of its events, p50 and p95: first found by the worker's look every 0.25 s
   (a change made by another process), then woken by the commit (the same process).
3. **Durability**: 1,000 changes published while ``trace worker`` runs as its own process,
   to a receiver that fails 20% of calls (HTTP 500, at random), with one SIGKILL of the
   worker part-way and a new worker started. Counts events lost (no successful call),
   events delivered under two different webhook-ids, and repeats under the same id.

    .venv/bin/python bench/bench_outbox.py [--rounds 200] [--changes 1000]
        [--database-url postgresql+psycopg://postgres@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from email import message_from_bytes
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from fastapi.testclient import TestClient
from sqlalchemy import func, select, text

from signin import BENCH, admin_headers
from trace_app.domain import status_events
from trace_app.domain.audit import require_audit
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_and_commit
from trace_app.domain.text import name_key
from trace_app.notifications.worker import DeliveryWorker, wake_on_commit
from trace_app.settings import TraceSettings
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import ClaimStatus, Incident, Person
from trace_app.store.notification_models import (
    Delivery,
    DeliveryState,
    Inquiry,
    OutboxEvent,
    WebhookEndpoint,
)
from trace_app.store.types import new_id
from trace_app.web.app import create_app

ROOT = Path(__file__).resolve().parent.parent
SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
STATUSES = [ClaimStatus.MISSING, ClaimStatus.SAFE]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


# --- real parts ------------------------------------------------------------------------
class Receiver:
    """Webhook receiver: each call's (webhook-id, data, status, arrival time)."""

    def __init__(self, fail_share: float = 0.0, seed: int = 41) -> None:
        self.calls: list[tuple[str, dict[str, Any], int, float]] = []
        self.lock = threading.Lock()
        self.random = random.Random(seed)
        self.fail_share = fail_share

    @contextmanager
    def serving(self) -> Iterator[str]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                arrived = time.perf_counter()
                with receiver.lock:
                    status = 500 if receiver.random.random() < receiver.fail_share else 204
                    data = json.loads(body)["data"]
                    receiver.calls.append((self.headers["webhook-id"], data, status, arrived))
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *_args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/hook"
        finally:
            server.shutdown()
            server.server_close()


class Inbox:
    def __init__(self) -> None:
        self.arrivals: list[tuple[str, float]] = []  # (Message-ID, arrival)

    async def handle_DATA(self, _server: Any, _session: Any, envelope: Any) -> str:
        message = message_from_bytes(envelope.content)
        self.arrivals.append((str(message["Message-ID"]), time.perf_counter()))
        return "250 OK"

    @contextmanager
    def serving(self) -> Iterator[str]:
        port = free_port()
        controller = Controller(self, hostname="127.0.0.1", port=port)
        controller.start()
        try:
            yield f"smtp://127.0.0.1:{port}"
        finally:
            controller.stop()


# --- data ------------------------------------------------------------------------------
def database(url: str | None, folder: Path, name: str) -> tuple[Database, str]:
    if url is None:
        url = f"sqlite:///{folder / name}.db"
    else:
        schema = f"bench_outbox_{name}_{new_id('x')[-8:]}"
        admin = make_engine(url)
        with admin.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        admin.dispose()
        url = f"{url}?options=-csearch_path%3D{schema},trace_pg_trgm,public"
    db = Database(make_engine(url))
    migrate(db.engine)
    return db, url


def people(
    db: Database, count: int, receiver_url: str | None = None, *, enquirers: bool = True
) -> tuple[str, list[str]]:
    incident_id = new_id("inc")
    ids = [new_id("per") for _ in range(count)]
    now = datetime.now(UTC)
    with db.session() as s:
        s.add(Incident(id=incident_id, name=f"Bench Outbox {incident_id[-6:]}"))
        s.flush()
        for i, pid in enumerate(ids):
            name = f"Bench Person {i}"
            s.add(Person(id=pid, incident_id=incident_id, name=name, name_key=name_key(name)))
        s.flush()
        for pid in ids if enquirers else []:
            s.add(
                Inquiry(
                    id=new_id("inq"),
                    incident_id=incident_id,
                    person_id=pid,
                    enquirer_name="Bench Enquirer",
                    email="enquirer@example.org",
                    consent_at=now,
                    email_confirmed_at=now,
                )
            )
        if receiver_url:
            s.add(
                WebhookEndpoint(
                    id=new_id("whk"), incident_id=incident_id, url=receiver_url, secret=SECRET
                )
            )
    return incident_id, ids


def publish(db: Database, incident_id: str, person_id: str, n: int) -> None:
    data = PublishReportInput(
        incident_id=incident_id,
        source="Bench Desk",
        summary=f"Bench change {n}",
        original_text=f"A volunteer's note number {n} about the person.",
        person=PersonInput(name="x", person_id=person_id),
        status=STATUSES[n % 2],
    )
    with require_audit(db.sessions()) as session:
        publish_and_commit(session, data, actor=BENCH)


# what the change sites call into the outbox (those present in this version)
OUTBOX_CALLS = {"before": None, "record_changes": [], "record_published": []}


@contextmanager
def without_outbox() -> Iterator[None]:
    """The change sites' calls into ``domain/status_events`` made no-ops: a publish as it
    was before the outbox."""
    saved = {
        name: getattr(status_events, name) for name in OUTBOX_CALLS if hasattr(status_events, name)
    }
    for name in saved:
        setattr(status_events, name, lambda *_a, _r=OUTBOX_CALLS[name], **_k: _r)
    try:
        yield
    finally:
        for name, call in saved.items():
            setattr(status_events, name, call)


def event_count(db: Database) -> int:
    with db.session() as s:
        return int(s.scalar(select(func.count()).select_from(OutboxEvent)) or 0)


# --- 1. publish latency ----------------------------------------------------------------
POOL = 20  # people per side: each gets rounds / POOL claims, as a busy record might


def publish_latency(url: str | None, folder: Path, rounds: int) -> None:
    """Interleaved rounds: the domain call, then the API call (``POST /api/reports``
    through an in-process client with a bearer token), each with and without the outbox,
    on two pools of people (each publish changes its person's status)."""
    db, db_url = database(url, folder, "latency")
    incident_id, ids = people(db, 4 * POOL, enquirers=False)
    pools = {key: ids[i * POOL : (i + 1) * POOL] for i, key in enumerate(POOL_KEYS)}
    settings = TraceSettings(home=folder, database_url=db_url, publish_limit="100000/minute")
    app = create_app(settings, db=db)
    headers = admin_headers(db)
    times: dict[tuple[str, str], list[float]] = {key: [] for key in POOL_KEYS}
    events = dict.fromkeys(POOL_KEYS, 0)
    with TestClient(app, base_url="http://localhost") as client:

        def over_api(person_id: str, n: int) -> None:
            answer = client.post(
                "/api/reports",
                headers=headers,
                json={
                    "incident_id": incident_id,
                    "summary": f"Bench change {n}",
                    "original_text": f"A volunteer's note number {n} about the person.",
                    "person": {"name": "x", "person_id": person_id},
                    "status": STATUSES[n % 2].value,
                },
            )
            assert answer.status_code == 201, answer.text[:300]

        order = random.Random(41)
        for n in range(rounds + 2):
            # each level's two calls back to back, in a random order: a busy machine's
            # slow moments fall on both (the ratio is taken per round)
            keys = [
                (level, outbox)
                for level in ("domain", "api")
                for outbox in order.sample(["with", "without"], 2)
            ]
            for key in keys:
                level, outbox = key
                person = pools[key][n % POOL]
                call = n // POOL  # each person alternates missing, safe, ...
                before = event_count(db)
                started = time.perf_counter()
                with contextlib.nullcontext() if outbox == "with" else without_outbox():
                    if level == "domain":
                        publish(db, incident_id, person, call)
                    else:
                        over_api(person, call)
                took = (time.perf_counter() - started) * 1000
                events[key] += event_count(db) - before
                if n >= 2:  # two warm-up rounds
                    times[key].append(took)
    db.dispose()
    print(f"1. publish latency, a status change each time, {rounds} rounds interleaved")
    for level, what in (("domain", "publish_and_commit"), ("api", "POST /api/reports")):
        with_ms, without_ms = times[(level, "with")], times[(level, "without")]
        w, wo = statistics.median(with_ms), statistics.median(without_ms)
        paired = statistics.median(a / b for a, b in zip(with_ms, without_ms, strict=True))
        print(
            f"   {what}: with the outbox {w:.2f} ms ({events[(level, 'with')]} events), "
            f"without {wo:.2f} ms ({events[(level, 'without')]} events)"
        )
        print(
            f"     ratio of medians {w / wo:.3f}x, median of per-round ratios {paired:.3f}x "
            f"(target <= 1.15x)"
        )


POOL_KEYS = [(level, outbox) for level in ("domain", "api") for outbox in ("with", "without")]


# --- 2. change to delivered ------------------------------------------------------------
def delivery_latency(url: str | None, folder: Path, changes: int, *, wake: bool) -> None:
    """``wake``: the worker is woken by this process's commit (``trace serve``, a change
    made on the same server); without, it finds the change at its next look (a change
    made on another replica, or ``trace worker``)."""
    if wake:
        wake_on_commit()
    receiver, inbox = Receiver(), Inbox()
    with receiver.serving() as hook_url, inbox.serving() as smtp_url:
        db, db_url = database(url, folder, "delivery")
        incident_id, ids = people(db, 1, hook_url)
        settings = TraceSettings(
            home=folder,
            database_url=db_url,
            smtp_url=smtp_url,
            public_url="http://localhost",
            webhook_private_addresses=True,  # the receiver listens on 127.0.0.1
        )
        worker = DeliveryWorker(db, settings)
        stop = threading.Event()
        thread = threading.Thread(target=worker.run_forever, args=(stop,), daemon=True)
        thread.start()
        to_hook: list[float] = []
        to_mail: list[float] = []
        for n in range(changes):
            calls, mails = len(receiver.calls), len(inbox.arrivals)
            publish(db, incident_id, ids[0], n)
            committed = time.perf_counter()
            deadline = committed + 10
            while (len(receiver.calls) == calls or len(inbox.arrivals) == mails) and (
                time.perf_counter() < deadline
            ):
                time.sleep(0.002)
            to_hook.append((receiver.calls[calls][3] - committed) * 1000)
            to_mail.append((inbox.arrivals[mails][1] - committed) * 1000)
            time.sleep(random.random() * worker.poll_interval_s())  # arrive at any moment
        stop.set()
        thread.join(5)
        db.dispose()
    how = "woken by the commit (same process)" if wake else "no wake-up: its 0.25 s look"
    print(f"2. change -> delivered, {changes} changes, worker in a thread, {how}")
    print(
        f"   webhook: p50 {percentile(to_hook, 0.5):.0f} ms, p95 {percentile(to_hook, 0.95):.0f} ms"
    )
    print(
        f"   mail:    p50 {percentile(to_mail, 0.5):.0f} ms, p95 {percentile(to_mail, 0.95):.0f} ms"
    )


# --- 3. durability ---------------------------------------------------------------------
def start_worker(db_url: str, folder: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "TRACE_HOME": str(folder),
        "TRACE_DELIVERY_RETRY_SECONDS": "0.05",
        "TRACE_DELIVERY_LEASE_SECONDS": "2",
        "TRACE_DELIVERY_MAX_ATTEMPTS": "12",
        "TRACE_WEBHOOK_PRIVATE_ADDRESSES": "allow",  # the receiver listens on 127.0.0.1
    }
    env.pop("TRACE_SMTP_URL", None)  # the mail waits; this part counts webhooks
    log = (folder / "worker.log").open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "trace_app", "worker"], env=env, stdout=log, stderr=log
    )


def durability(url: str | None, folder: Path, changes: int) -> None:
    receiver = Receiver(fail_share=0.2)
    with receiver.serving() as hook_url:
        db, db_url = database(url, folder, "durability")
        incident_id, ids = people(db, 50, hook_url, enquirers=False)
        worker = start_worker(db_url, folder)
        killed_at = None
        target = changes // 2  # successful calls before the SIGKILL: part-way through

        def ok_calls() -> int:
            with receiver.lock:
                return sum(1 for c in receiver.calls if c[2] < 300)

        def kill_and_restart() -> subprocess.Popen[bytes]:
            nonlocal killed_at
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)
            killed_at = ok_calls()
            return start_worker(db_url, folder)

        started = time.perf_counter()
        for n in range(changes):
            publish(db, incident_id, ids[n % len(ids)], n // len(ids))
            if killed_at is None and ok_calls() >= target:
                worker = kill_and_restart()
        while killed_at is None and time.perf_counter() - started < 300:
            if ok_calls() >= target:
                worker = kill_and_restart()
            time.sleep(0.01)
        published = time.perf_counter() - started
        deadline = time.perf_counter() + 300
        while time.perf_counter() < deadline:
            with db.session() as s:
                open_rows = s.scalar(
                    select(func.count()).where(Delivery.state == DeliveryState.PENDING.value)
                )
                unfanned = s.scalar(select(func.count()).where(OutboxEvent.fanned_out_at.is_(None)))
            if not open_rows and not unfanned:
                break
            time.sleep(0.2)
        settled = time.perf_counter() - started
        worker.terminate()
        worker.wait(10)
        with db.session() as s:
            events = {
                eid: (kind, json.loads(payload))
                for eid, kind, payload in s.execute(
                    select(OutboxEvent.id, OutboxEvent.kind, OutboxEvent.payload)
                )
            }
            states = Counter(s.scalars(select(Delivery.state)))
        db.dispose()
    succeeded = [c for c in receiver.calls if c[2] < 300]
    ids_ok = Counter(c[0] for c in succeeded)
    lost = [eid for eid in events if eid not in ids_ok]
    by_change: dict[tuple[Any, ...], set[str]] = defaultdict(set)
    for eid, data in ((c[0], c[1]) for c in succeeded):
        kind = events[eid][0] if eid in events else "?"
        by_change[(kind, data.get("person_id"), data.get("report_id"))].add(eid)
    two_ids = sum(1 for found in by_change.values() if len(found) > 1)
    repeats = sum(n - 1 for n in ids_ok.values())
    failed = sum(1 for c in receiver.calls if c[2] >= 300)
    print(
        f"3. {changes} changes ({len(events)} events), receiver failing 20% "
        f"({failed} refused calls), one SIGKILL of `trace worker` after {killed_at} "
        f"successful calls"
    )
    print(f"   published in {published:.1f} s, all settled after {settled:.1f} s: {dict(states)}")
    print(f"   events lost: {len(lost)} (must be 0)")
    print(f"   events delivered under two different webhook-ids: {two_ids} (must be 0)")
    print(f"   repeats under the same webhook-id: {repeats}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--latency-changes", type=int, default=60)
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--database-url", default=None, help="PostgreSQL (default: SQLite)")
    parser.add_argument("--parts", default="123")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        print(f"database: {'PostgreSQL' if args.database_url else 'SQLite'}")
        if "1" in args.parts:
            publish_latency(args.database_url, folder, args.rounds)
        if "2" in args.parts:
            delivery_latency(args.database_url, folder, args.latency_changes, wake=False)
            delivery_latency(args.database_url, folder, args.latency_changes, wake=True)
        if "3" in args.parts:
            durability(args.database_url, folder, args.changes)


if __name__ == "__main__":
    main()
