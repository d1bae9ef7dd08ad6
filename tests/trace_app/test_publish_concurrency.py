"""Eight simultaneous publishes about the same new person on SQLite: all succeed, one person.

"database is locked" used to end some of them: a publish whose BEGIN IMMEDIATE waited
longer than SQLite's busy timeout (another writer held the lock: a reset, a migration,
a slow disk) got ``OperationalError`` instead of its turn. The write transaction is now
retried with backoff for a bounded time.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest
from accounts_helpers import TEST_OPERATOR
from sqlalchemy import func, select

from trace_app.domain import PersonInput, PublishReportInput, publish_and_commit
from trace_app.store import db as store_db
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import ClaimStatus, Incident, Person, Report
from trace_app.store.types import new_id

THREADS = 8
ROUNDS = 3


def test_eight_threads_publish_about_one_new_person(tmp_path: Path) -> None:
    db = Database(make_engine(f"sqlite:///{tmp_path / 'trace.db'}"))
    migrate(db.engine)
    try:
        with db.session() as s:
            incident = Incident(id=new_id("inc"), name="Race")
            s.add(incident)
            incident_id = incident.id
        errors: list[BaseException] = []
        for round_number in range(ROUNDS):
            barrier = threading.Barrier(THREADS)
            name = f"Same Person {round_number}"

            def publish(n: int, name: str = name, barrier: threading.Barrier = barrier) -> None:
                data = PublishReportInput(
                    incident_id=incident_id,
                    source=f"Source {n}",
                    summary=f"report {n}",
                    original_text="text " * 200,
                    person=PersonInput(name=name),
                    status=ClaimStatus.MISSING,
                )
                barrier.wait()
                try:
                    with db.sessions() as session:
                        publish_and_commit(session, data, actor=TEST_OPERATOR)
                except BaseException as exc:
                    errors.append(exc)

            threads = [threading.Thread(target=publish, args=(n,)) for n in range(THREADS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
        assert errors == []
        with db.sessions() as s:
            assert s.scalar(select(func.count()).select_from(Person)) == ROUNDS
            assert s.scalar(select(func.count()).select_from(Report)) == THREADS * ROUNDS
            positions = s.scalars(select(Report.position).order_by(Report.position)).all()
            assert positions == list(range(1, THREADS * ROUNDS + 1))
    finally:
        db.dispose()


def test_publishes_wait_out_a_writer_that_holds_the_lock_past_the_busy_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_db, "SQLITE_BUSY_TIMEOUT_MS", 100)
    path = tmp_path / "trace.db"
    db = Database(make_engine(f"sqlite:///{path}"))
    migrate(db.engine)
    try:
        with db.session() as s:
            incident = Incident(id=new_id("inc"), name="Locked")
            s.add(incident)
            incident_id = incident.id
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another writer, for ten busy timeouts
        errors: list[BaseException] = []

        def publish(n: int) -> None:
            data = PublishReportInput(
                incident_id=incident_id,
                source="Source",
                summary=f"report {n}",
                original_text="text",
                person=PersonInput(name="Waiting Person"),
                status=ClaimStatus.SEEN,
            )
            try:
                with db.sessions() as session:
                    publish_and_commit(session, data, actor=TEST_OPERATOR)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=publish, args=(n,)) for n in range(THREADS)]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        holder.execute("COMMIT")
        holder.close()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == []
        with db.sessions() as s:
            assert s.scalar(select(func.count()).select_from(Person)) == 1
            assert s.scalar(select(func.count()).select_from(Report)) == THREADS
    finally:
        db.dispose()
