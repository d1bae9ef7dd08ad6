"""Two ``trace serve`` replicas on PostgreSQL, each with its in-process delivery worker
(issue 41): every event reaches every subscriber once; a SIGKILL of the servers while a
delivery is being sent loses nothing (it is sent again, same webhook-id, after restart)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from accounts_helpers import make_token, make_user
from delivery_helpers import free_port, make_endpoint, make_incident, webhook_receiver
from sqlalchemy import func, select

from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.notification_models import Delivery, DeliveryState, OutboxEvent

pytestmark = pytest.mark.postgres
ORGANIZATION = "Central Hospital Demo"
STATUSES = ["missing", "safe"]


class Replica:
    def __init__(self, env: dict[str, str], home: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = home / f"serve-{self.port}.log"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "trace_app", "serve", "--port", str(self.port)],
            env=env,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, timeout: float = 40.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()[-2000:]
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"trace serve did not start: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def world(pg_schema_url: str, tmp_path: Path) -> Iterator[tuple[Database, dict[str, str], str]]:
    db = Database(make_engine(pg_schema_url))
    migrate(db.engine)
    make_user(db, "desk", "admin", ORGANIZATION)
    token = make_token(db, "desk", ["read", "reports:write"])
    env = {
        **os.environ,
        "DATABASE_URL": pg_schema_url,
        "TRACE_HOME": str(tmp_path),
        "TRACE_DELIVERY_RETRY_SECONDS": "0.05",
        "TRACE_DELIVERY_LEASE_SECONDS": "1",
        "TRACE_WEBHOOK_PRIVATE_ADDRESSES": "allow",  # the receivers listen on 127.0.0.1
        "TRACE_PUBLISH_LIMIT": "10000/minute",
    }
    env.pop("TRACE_SMTP_URL", None)
    yield db, env, token
    db.dispose()


def _publish(url: str, token: str, incident_id: str, person_id: str, status: str) -> None:
    answer = httpx.post(
        f"{url}/api/reports",
        headers={"authorization": f"Bearer {token}"},
        json={
            "incident_id": incident_id,
            "summary": f"Reported {status} at the school shelter.",
            "original_text": f"Our volunteer says Bikash is {status}, seen this morning.",
            "person": {"name": "Bikash Shrestha", "person_id": person_id},
            "status": status,
        },
        timeout=20,
    )
    assert answer.status_code == 201, answer.text


def _all_settled(db: Database, timeout: float = 20.0) -> list[Delivery]:
    deadline = time.monotonic() + timeout
    while True:
        with db.session() as session:
            waiting = session.scalar(
                select(func.count()).where(OutboxEvent.fanned_out_at.is_(None))
            )
            rows = list(session.scalars(select(Delivery)))
        if not waiting and all(d.state != DeliveryState.PENDING.value for d in rows):
            return rows
        if time.monotonic() > deadline:
            raise AssertionError(f"not delivered: {[(d.id, d.state, d.last_error) for d in rows]}")
        time.sleep(0.05)


def test_two_replicas_send_each_event_once_and_a_sigkill_loses_nothing(
    world: tuple[Database, dict[str, str], str], tmp_path: Path
) -> None:
    db, env, token = world
    release = threading.Event()
    hang_from: list[int] = []  # the call number from which the receiver hangs

    def answer(number: int) -> int:
        if hang_from and number >= hang_from[0] and not release.is_set():
            release.wait(8)  # the server is killed meanwhile; its connection drops
        return 200

    with webhook_receiver(answer) as receiver:
        with db.session() as session:
            incident_id, person_id = make_incident(session)
            make_endpoint(session, incident_id, receiver.url + "?partner=a")
            make_endpoint(session, incident_id, receiver.url + "?partner=b")
        replicas = [Replica(env, tmp_path), Replica(env, tmp_path)]
        try:
            for replica in replicas:
                replica.wait_ready()
            for n in range(8):  # missing, safe, missing, ... through both replicas
                _publish(replicas[n % 2].url, token, incident_id, person_id, STATUSES[n % 2])
            rows = _all_settled(db)
            with db.session() as session:
                events = set(session.scalars(select(OutboxEvent.id)))
            assert len(events) >= 8
            assert {d.state for d in rows} == {DeliveryState.DELIVERED.value}
            assert len(rows) == 2 * len(events)
            calls = receiver.wait_for(len(rows))
            # each event reached each partner once: no duplicate from the two workers
            sent = Counter((c.headers["webhook-id"], c.path) for c in calls)
            assert len(calls) == len(rows) == 2 * len(events)
            assert set(sent.values()) == {1}
            assert {c.headers["webhook-id"] for c in calls} == events

            # the next change: its delivery is being sent when every server is SIGKILLed
            hang_from.append(len(calls))
            _publish(replicas[0].url, token, incident_id, person_id, "missing")
            receiver.wait_for(len(calls) + 1, timeout=10)
            for replica in replicas:
                replica.kill()
            release.set()
            with db.session() as session:
                pending = session.scalar(
                    select(func.count()).where(Delivery.state == DeliveryState.PENDING.value)
                )
            assert pending, "the killed servers left their deliveries pending"
            replicas.append(Replica(env, tmp_path))
            replicas[-1].wait_ready()
            rows = _all_settled(db)
            assert {d.state for d in rows} == {DeliveryState.DELIVERED.value}
            with db.session() as session:
                events = set(session.scalars(select(OutboxEvent.id)))
            delivered_ids = {c.headers["webhook-id"] for c in receiver.calls}
            assert delivered_ids == events  # nothing lost
            # the interrupted call was made again under the same id (a repeat the receiver
            # deduplicates); both claims of the killed worker were taken again
            repeats = Counter((c.headers["webhook-id"], c.path) for c in receiver.calls)
            assert sorted(repeats.values())[-2:] == [1, 2]
            assert sorted(d.attempts for d in rows)[-2:] == [2, 2]
        finally:
            release.set()
            for replica in replicas:
                replica.stop()
