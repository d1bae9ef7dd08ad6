"""Two requests publishing about the same new person at once end with one person."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import func, select

from trace_app.domain import PersonInput, PublishReportInput, publish_and_commit, publish_report
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import ClaimStatus, Incident, Person, Report
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
                    publish_and_commit(s, data("Second Source"))
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
