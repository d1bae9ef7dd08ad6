"""Two requests publishing about the same new person at once end with one person."""

from __future__ import annotations

import threading
import time

import pytest
from accounts_helpers import TEST_OPERATOR
from sqlalchemy import func, select

from trace_app.domain import PersonInput, PublishReportInput, publish_and_commit, publish_report
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import ClaimStatus, Incident, Organization, Person, Report
from trace_app.store.types import new_id


@pytest.mark.postgres
def test_concurrent_new_person_is_created_once(pg_schema_url: str) -> None:
    db = Database(make_engine(pg_schema_url))
    migrate(db.engine)
    try:
        with db.session() as s:
            incident = Incident(id=new_id("inc"), name="Race")
            s.add(incident)
            incident_id = incident.id

        def data(source: str) -> PublishReportInput:
            return PublishReportInput(
                incident_id=incident_id,
                source=source,
                summary="s",
                original_text="t",
                person=PersonInput(name="Same Person"),
                status=ClaimStatus.SEEN,
            )

        errors: list[BaseException] = []
        first = db.sessions()
        publish_report(first, data("First Source"))  # flushed, not committed

        def second() -> None:
            try:
                with db.sessions() as s:
                    publish_and_commit(s, data("Second Source"), actor=TEST_OPERATOR)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.5)  # the second insert now waits on the first one's unique key
        first.commit()
        first.close()
        thread.join(timeout=30)
        assert not thread.is_alive() and errors == []
        with db.sessions() as s:
            assert s.scalar(select(func.count()).select_from(Person)) == 1
            assert s.scalar(select(func.count()).select_from(Report)) == 2
    finally:
        db.dispose()


def test_many_writers_lose_nothing_and_number_reports_in_turn(db_url: str) -> None:
    # Eight threads publish at once about the same few new people and organisations:
    # every report lands, each person and organisation exists once, and the reports of
    # the incident are numbered 1..120 without a repeat (each publication reads the
    # next position inside its turn: BEGIN IMMEDIATE on SQLite, the incident's row lock
    # on PostgreSQL)
    db = Database(make_engine(db_url))
    migrate(db.engine)
    try:
        with db.session() as s:
            incident = Incident(id=new_id("inc"), name="Race")
            s.add(incident)
            incident_id = incident.id
        errors: list[BaseException] = []

        def writer() -> None:
            for i in range(15):
                data = PublishReportInput(
                    incident_id=incident_id,
                    source=f"Shelter {i % 3}",
                    summary="s",
                    original_text="t",
                    person=PersonInput(name=f"Person {i}"),
                    status=ClaimStatus.MISSING,
                )
                try:
                    with db.sessions() as s:
                        publish_and_commit(s, data, actor=TEST_OPERATOR)
                except BaseException as exc:  # pragma: no cover - reported below
                    errors.append(exc)

        threads = [threading.Thread(target=writer) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == []
        with db.sessions() as s:
            assert s.scalar(select(func.count()).select_from(Person)) == 15
            assert s.scalar(select(func.count()).select_from(Organization)) == 3
            assert s.scalar(select(func.count()).select_from(Report)) == 120
            positions = s.scalars(select(Report.position)).all()
            assert sorted(positions) == list(range(1, 121))
    finally:
        db.dispose()
