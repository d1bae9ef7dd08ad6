"""The outbox's writer (trace_app.domain.status_events): each change of a group's status or
alert writes exactly its events in the change's transaction; a non-change writes none; a
rolled-back change leaves none; a death writes a follow-up. The whole story runs on
SQLite and PostgreSQL; the single cases on SQLite (a copy of a migrated file)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from accounts_helpers import TEST_OPERATOR
from sqlalchemy import select

from conftest import copy_sqlite
from trace_app.domain import alert_actions, status_events
from trace_app.domain.links import decide_link
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.store.db import Database, make_engine
from trace_app.store.models import Alert, AlertCloseReason, ClaimStatus, Incident, LinkDecision
from trace_app.store.notification_models import FollowUp, OutboxEvent
from trace_app.store.types import new_id

START = datetime(2026, 7, 15, 8, 0, tzinfo=UTC)


@pytest.fixture
def lite(tmp_path: Path, migrated_sqlite: Path) -> Iterator[Database]:
    copy_sqlite(migrated_sqlite, tmp_path / "trace.db")
    db = Database(make_engine(f"sqlite:///{tmp_path / 'trace.db'}"))
    yield db
    db.dispose()


def make_incident(db: Database) -> str:
    with db.session() as s:
        incident = Incident(id=new_id("inc"), name="Outbox Test Incident")
        s.add(incident)
        return incident.id


def publish(
    db: Database,
    incident_id: str,
    name: str,
    status: str,
    minutes: int,
    person_id: str | None = None,
) -> tuple[str, str]:
    """Publish one report; return (person id, report id)."""
    with db.session() as s:
        report = publish_report(
            s,
            PublishReportInput(
                incident_id=incident_id,
                source="Outbox Test Clinic",
                summary=f"{status} report",
                original_text=f"A volunteer says the person is {status}.",
                reported_at=START + timedelta(minutes=minutes),
                person=PersonInput(name=name, person_id=person_id),
                status=ClaimStatus(status),
            ),
        )
        return report.person_id, report.id


def events(db: Database) -> list[tuple[str, str, dict[str, object]]]:
    """Every event so far, in order: (kind, person id, payload); the table is emptied so
    that the next call shows what the next change wrote."""
    with db.session() as s:
        rows = list(s.scalars(select(OutboxEvent).order_by(OutboxEvent.created_at)))
        found = [(e.kind, e.person_id, json.loads(e.payload)) for e in rows]
        for row in rows:
            s.delete(row)
    # an ordering within one change: status first, then the alert
    return sorted(found, key=lambda e: (e[1], e[0] != "status.changed"))


def kinds(found: list[tuple[str, str, dict[str, object]]]) -> list[tuple[str, str]]:
    return [(kind, person) for kind, person, _ in found]


def test_each_change_writes_its_events_and_a_death_a_follow_up(database: Database) -> None:
    incident_id = make_incident(database)
    person, missing_report = publish(database, incident_id, "Bikash Outbox", "missing", 0)
    found = events(database)
    assert kinds(found) == [("status.changed", person), ("alert.opened", person)]
    payload = found[0][2]
    assert payload["incident_id"] == incident_id
    assert payload["person_name"] == "Bikash Outbox"
    assert payload["status"] == "missing" and payload["previous_status"] is None
    assert payload["report_id"] == missing_report
    assert str(payload["at"]).endswith("Z")
    assert "alert_id" in found[1][2]

    publish(database, incident_id, "Bikash Outbox", "missing", 10, person_id=person)
    assert events(database) == []  # joins the open alert: nothing a subscriber sees changed

    _, safe_report = publish(database, incident_id, "Bikash Outbox", "safe", 20, person)
    found = events(database)
    assert kinds(found) == [("status.changed", person), ("alert.closed", person)]
    assert found[0][2]["previous_status"] == "missing"
    assert found[0][2]["status"] == "safe" and found[0][2]["report_id"] == safe_report

    publish(database, incident_id, "Bikash Outbox", "safe", 30, person)
    assert events(database) == []  # the same status again

    publish(database, incident_id, "Bikash Outbox", "seen", 5, person)
    assert events(database) == []  # an older claim: the status stays "safe"

    publish(database, incident_id, "Bikash Outbox", "deceased", 40, person)
    found = events(database)
    assert kinds(found) == [("status.changed", person)]
    with database.sessions() as s:
        [follow_up] = s.scalars(select(FollowUp)).all()
    assert follow_up.person_id == person and follow_up.kind == "inform_in_person"
    assert follow_up.done_at is None and follow_up.incident_id == incident_id


def test_a_rolled_back_change_leaves_no_event(lite: Database) -> None:
    incident_id = make_incident(lite)
    with lite.sessions() as s:
        publish_report(
            s,
            PublishReportInput(
                incident_id=incident_id,
                source="Outbox Test Clinic",
                summary="missing",
                original_text="missing since the flood",
                reported_at=START,
                person=PersonInput(name="Rolled Back"),
                status=ClaimStatus.MISSING,
            ),
        )
        assert s.scalars(select(OutboxEvent)).all() != []  # written in the change's session
        s.rollback()
    with lite.sessions() as s:
        assert s.scalars(select(OutboxEvent)).all() == []


def test_linking_and_unlinking_write_events_for_the_group_that_changed(lite: Database) -> None:
    incident_id = make_incident(lite)
    missing, _ = publish(lite, incident_id, "Anil Link", "missing", 0)
    safe, _ = publish(lite, incident_id, "Anil Linked", "safe", 60)
    events(lite)
    lead = min(missing, safe)
    with lite.session() as s:
        decide_link(s, missing, safe, LinkDecision.SAME, "same family", actor=TEST_OPERATOR)
    found = events(lite)
    assert kinds(found) == [("status.changed", lead), ("alert.closed", lead)]
    assert found[0][2]["status"] == "safe" and found[0][2]["previous_status"] == "missing"

    with lite.session() as s:
        decide_link(s, missing, safe, LinkDecision.DIFFERENT, "not him", actor=TEST_OPERATOR)
    found = events(lite)
    # the missing record's group is missing again with its alert open; the safe one
    # looks as it did before the split (safe, no alert): no event for it
    assert kinds(found) == [("status.changed", missing), ("alert.opened", missing)]
    assert found[0][2]["previous_status"] == "safe"


def test_a_hand_close_and_its_reopen_write_alert_events_only(lite: Database) -> None:
    incident_id = make_incident(lite)
    person, _ = publish(lite, incident_id, "Maya Hand", "missing", 0)
    events(lite)
    with lite.session() as s:
        alert_id = s.scalars(select(Alert.id)).one()
        alert_actions.close_alert(
            s, alert_id, AlertCloseReason.WITHDRAWN, "family withdrew it", actor=TEST_OPERATOR
        )
    assert kinds(events(lite)) == [("alert.closed", person)]
    with lite.session() as s:
        alert_actions.reopen_alert(s, alert_id, "closed by mistake", actor=TEST_OPERATOR)
    assert kinds(events(lite)) == [("alert.opened", person)]


def test_a_second_death_report_keeps_one_open_follow_up(lite: Database) -> None:
    incident_id = make_incident(lite)
    person, _ = publish(lite, incident_id, "Hari Once", "deceased", 0)
    publish(lite, incident_id, "Hari Once", "seen", 10, person)
    publish(lite, incident_id, "Hari Once", "deceased", 20, person)
    assert [k for k, _ in kinds(events(lite))] == ["status.changed"] * 3
    with lite.sessions() as s:
        assert len(s.scalars(select(FollowUp)).all()) == 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_publication_writes_what_reading_before_and_after_finds(
    lite: Database, seed: int
) -> None:
    """A publication writes its events from what the alert rule read and changed, with no
    read before it; here the groups are also read before and after each publication, and
    the events must be exactly their differences: random reports (some about earlier
    moments, arriving late) about two records, linked and unlinked on the way."""
    rng = random.Random(seed)
    incident_id = make_incident(lite)
    a, _ = publish(lite, incident_id, "Random One", "missing", 0)
    b, _ = publish(lite, incident_id, "Random Two", "seen", 5)
    events(lite)
    for step in range(24):
        if step % 8 == 7:
            decision = LinkDecision.SAME if step % 16 == 7 else LinkDecision.DIFFERENT
            with lite.session() as s:
                decide_link(s, a, b, decision, "random", actor=TEST_OPERATOR)
            events(lite)
            continue
        person = rng.choice([a, b])
        status = rng.choice(["missing", "missing", "seen", "safe", "admitted", "deceased"])
        with lite.session() as s:
            seen = status_events.before(s, [a, b])
        publish(lite, incident_id, "Random", status, rng.randint(0, 300), person_id=person)
        with lite.sessions() as s:
            now = status_events.read_groups(s, [a, b])
        expected = []
        for key in sorted(set(now.group_of.values())):
            members = [p for p, k in now.group_of.items() if k == key]
            state = now.groups[key]
            earlier = [seen.groups[seen.group_of[p]] for p in members]
            if any(e.status != state.status for e in earlier):
                expected.append(("status.changed", key))
            has_open = state.open_alert_id is not None
            if any((e.open_alert_id is not None) != has_open for e in earlier):
                expected.append(("alert.opened" if has_open else "alert.closed", key))
        assert kinds(events(lite)) == expected, (seed, step, status)
