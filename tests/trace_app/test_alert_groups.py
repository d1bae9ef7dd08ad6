"""Linked groups are one person; one alert per person, with its sources; closing by
hand says what the person knows, and an alert closed by mistake reopens. Both backends
(the ``database`` fixture runs on SQLite and on PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from accounts_helpers import TEST_OPERATOR
from sqlalchemy import select

from trace_app.domain import alert_actions, alert_queries, people_queries, queries, search
from trace_app.domain.errors import AlertClosedError, InvalidInputError
from trace_app.domain.links import decide_link
from trace_app.domain.person_view import person_detail
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.store.account_models import AuditEvent
from trace_app.store.db import Database
from trace_app.store.models import (
    Alert,
    AlertCloseReason,
    AlertState,
    ClaimStatus,
    Incident,
    LinkDecision,
    Person,
)
from trace_app.store.types import new_id

START = datetime(2026, 7, 15, 8, 0, tzinfo=UTC)
DEVANAGARI = "कमला थापा"  # a made-up person, in Devanagari
LATIN = "Kamala Thapa"  # the same made-up name in Latin letters


def make_incident(database: Database) -> str:
    with database.session() as s:
        incident = Incident(id=new_id("inc"), name="Group Test Incident")
        s.add(incident)
        return incident.id


def report(
    database: Database,
    incident_id: str,
    name: str,
    status: str,
    minutes: int,
    source: str = "Hill Clinic Test",
    person_id: str | None = None,
) -> str:
    """Publish one report; return the person id it is about."""
    with database.session() as s:
        published = publish_report(
            s,
            PublishReportInput(
                incident_id=incident_id,
                source=source,
                summary=f"{status} report",
                original_text=f"A volunteer says the person is {status}.",
                reported_at=START + timedelta(minutes=minutes),
                person=PersonInput(name=name, person_id=person_id),
                status=ClaimStatus(status),
            ),
        )
        return published.person_id


def decide(database: Database, a: str, b: str, decision: LinkDecision) -> None:
    with database.session() as s:
        decide_link(s, a, b, decision, "checked with the family", actor=TEST_OPERATOR)


def open_alerts(database: Database, incident_id: str) -> list[alert_queries.AlertListing]:
    with database.sessions() as s:
        return alert_queries.open_alerts(s, incident_id, limit=500).items


def status_of(database: Database, person_id: str) -> ClaimStatus | None:
    with database.sessions() as s:
        return person_detail(s, person_id).combined_status.status


def test_same_decision_closes_the_alert_and_its_undo_reopens_it(database: Database) -> None:
    incident_id = make_incident(database)
    missing = report(database, incident_id, DEVANAGARI, "missing", 0, source="Police Test")
    safe = report(database, incident_id, LATIN, "safe", 60, source="Camp Test")
    [alert] = open_alerts(database, incident_id)
    assert status_of(database, missing) is ClaimStatus.MISSING

    decide(database, missing, safe, LinkDecision.SAME)
    assert open_alerts(database, incident_id) == []
    assert status_of(database, missing) is ClaimStatus.SAFE
    assert status_of(database, safe) is ClaimStatus.SAFE
    with database.sessions() as s:
        row = s.get(Alert, alert.id)
        assert row is not None and row.state == AlertState.CLOSED.value
        assert row.closed_by_claim_id is not None
        detail = person_detail(s, safe)
        assert {c.person_id for p in detail.same_people for c in p.claims} == {missing}
        assert DEVANAGARI in detail.group_names and LATIN in detail.group_names
        assert [a.id for a in detail.alerts] == [alert.id]  # the group's alert, on either page

    for undo in (LinkDecision.DIFFERENT, LinkDecision.UNDECIDED):
        decide(database, missing, safe, undo)
        assert [a.id for a in open_alerts(database, incident_id)] == [alert.id]
        assert status_of(database, missing) is ClaimStatus.MISSING
        with database.sessions() as s:
            reopened = s.get(Alert, alert.id)
            assert reopened is not None and reopened.closed_by_claim_id is None
        if undo is LinkDecision.DIFFERENT:
            decide(database, missing, safe, LinkDecision.SAME)
            assert open_alerts(database, incident_id) == []


def test_an_earlier_safe_claim_on_a_linked_record_closes_nothing(database: Database) -> None:
    incident_id = make_incident(database)
    safe = report(database, incident_id, LATIN, "safe", 0)
    missing = report(database, incident_id, DEVANAGARI, "missing", 60)
    decide(database, missing, safe, LinkDecision.SAME)
    assert len(open_alerts(database, incident_id)) == 1
    assert status_of(database, safe) is ClaimStatus.MISSING


def test_groups_are_transitive_and_split_again(database: Database) -> None:
    incident_id = make_incident(database)
    a = report(database, incident_id, "Rita Test", "missing", 0)
    b = report(database, incident_id, "Reeta Test", "seen", 10)
    c = report(database, incident_id, "Rita T. Test", "admitted", 20)
    decide(database, a, b, LinkDecision.SAME)
    decide(database, c, b, LinkDecision.SAME)
    with database.sessions() as s:
        assert {p.group_id for p in s.scalars(select(Person))} == {min(a, b, c)}
        assert sorted(p.id for p in person_detail(s, a).same_people) == sorted([b, c])
    assert open_alerts(database, incident_id) == []  # c's admission closes a's alert
    decide(database, a, b, LinkDecision.DIFFERENT)  # a leaves; b and c stay together
    with database.sessions() as s:
        groups = {p.id: p.group_id for p in s.scalars(select(Person))}
    assert groups[a] is None and groups[b] == groups[c] == min(b, c)
    assert [x.person_id for x in open_alerts(database, incident_id)] == [a]


def test_a_second_missing_report_joins_the_open_alert_as_a_source(database: Database) -> None:
    incident_id = make_incident(database)
    person = report(database, incident_id, "Maya Test", "missing", 0, source="Police Test")
    report(database, incident_id, "Maya Test", "missing", 30, "Relay Test", person_id=person)
    [alert] = open_alerts(database, incident_id)
    assert alert.source == "Police Test" and alert.other_sources == ("Relay Test",)
    with database.sessions() as s:
        [summary] = [x for x in queries.list_incidents(s) if x.incident.id == incident_id]
        assert summary.open_alerts == 1 and summary.people == 1
        rows = s.scalars(select(Alert).order_by(Alert.position)).all()
        assert [r.joined_alert_id for r in rows] == [None, alert.id]
    # a safe report closes the alert and both its sources
    report(database, incident_id, "Maya Test", "safe", 90, person_id=person)
    assert open_alerts(database, incident_id) == []
    with database.sessions() as s:
        assert {r.state for r in s.scalars(select(Alert))} == {AlertState.CLOSED.value}


def test_linking_two_open_alerts_leaves_one_and_the_undo_two(database: Database) -> None:
    incident_id = make_incident(database)
    a = report(database, incident_id, DEVANAGARI, "missing", 0, source="Police Test")
    b = report(database, incident_id, LATIN, "missing", 30, source="Relay Test")
    report(database, incident_id, "Somebody Else Test", "missing", 40)
    with database.sessions() as s:
        assert next(iter(queries.list_incidents(s))).open_alerts == 3
    decide(database, a, b, LinkDecision.SAME)
    with database.sessions() as s:
        [summary] = [x for x in queries.list_incidents(s) if x.incident.id == incident_id]
        assert summary.open_alerts == 2 and summary.people == 2  # counted as people
        listed = people_queries.people_page(s, incident_id)
        assert listed.total == 2 and len(listed.items) == 2
        group_row = next(p for p in listed.items if p.id == min(a, b))
        assert len(group_row.claims) == 2 and len(group_row.other_names) == 1
        found = search.search_page(s, incident_id, q="kamala")
        assert [p.id for p in found.items] == [min(a, b)] and found.total == 1
    mine = next(x for x in open_alerts(database, incident_id) if x.person_id in (a, b))
    assert mine.other_sources == ("Relay Test",)
    decide(database, a, b, LinkDecision.UNDECIDED)
    assert len(open_alerts(database, incident_id)) == 3


def test_closing_as_found_safe_publishes_a_claim_and_is_audited(database: Database) -> None:
    incident_id = make_incident(database)
    person = report(database, incident_id, "Sita Test", "missing", 0)
    [alert] = open_alerts(database, incident_id)
    with database.session() as s, pytest.raises(alert_actions.NoOrganizationError):
        alert_actions.close_alert(
            s, alert.id, AlertCloseReason.FOUND_SAFE, "she called", actor=TEST_OPERATOR
        )
    with database.session() as s:
        alert_actions.close_alert(
            s,
            alert.id,
            AlertCloseReason.FOUND_SAFE,
            "She called the help desk.",
            actor=TEST_OPERATOR,
            source="Help Desk Test",
        )
    assert open_alerts(database, incident_id) == []
    with database.sessions() as s:
        detail = person_detail(s, person)
        assert detail.status.status is ClaimStatus.SAFE
        assert detail.claims[-1].source == "Help Desk Test"
        row = s.get(Alert, alert.id)
        assert row is not None and row.closed_by_claim_id == detail.claims[-1].id
        [event] = s.scalars(select(AuditEvent).where(AuditEvent.action == "alert.close")).all()
        assert event.after is not None and event.after["reason"] == "found_safe"
        assert event.after["claim"] == detail.claims[-1].id


@pytest.mark.parametrize(
    ("reason", "status"),
    [(AlertCloseReason.ADMITTED, ClaimStatus.ADMITTED), (AlertCloseReason.DECEASED, "deceased")],
)
def test_admitted_and_deceased_publish_their_status(
    database: Database, reason: AlertCloseReason, status: str
) -> None:
    incident_id = make_incident(database)
    person = report(database, incident_id, "Hari Test", "missing", 0)
    [alert] = open_alerts(database, incident_id)
    with database.session() as s:
        alert_actions.close_alert(s, alert.id, reason, "ward list", actor=TEST_OPERATOR, source="W")
    assert open_alerts(database, incident_id) == []
    assert status_of(database, person) == ClaimStatus(status)


def test_duplicate_close_keeps_its_note_and_reopens_with_a_note(database: Database) -> None:
    incident_id = make_incident(database)
    person = report(database, incident_id, "Gita Test", "missing", 0, source="Police Test")
    report(database, incident_id, "Gita Test", "missing", 5, "Relay Test", person_id=person)
    [alert] = open_alerts(database, incident_id)
    with database.session() as s:
        # closing through a joined source closes the person's alert
        joined = s.scalars(select(Alert.id).where(Alert.joined_alert_id == alert.id)).one()
        alert_actions.close_alert(
            s, joined, AlertCloseReason.DUPLICATE, "entered twice", actor=TEST_OPERATOR
        )
    assert open_alerts(database, incident_id) == []
    assert status_of(database, person) is ClaimStatus.MISSING  # nobody said otherwise
    with database.session() as s, pytest.raises(InvalidInputError):
        alert_actions.reopen_alert(s, alert.id, "  ", actor=TEST_OPERATOR)
    with database.session() as s:
        alert_actions.reopen_alert(s, alert.id, "not a duplicate after all", actor=TEST_OPERATOR)
    [again] = open_alerts(database, incident_id)
    assert again.id == alert.id and again.other_sources == ("Relay Test",)
    assert again.reopen_note == "not a duplicate after all" and again.close_note is None
    with database.session() as s, pytest.raises(AlertClosedError):
        alert_actions.reopen_alert(s, alert.id, "again", actor=TEST_OPERATOR)


def test_reopening_an_alert_closed_by_a_claim_publishes_missing(database: Database) -> None:
    incident_id = make_incident(database)
    person = report(database, incident_id, "Ram Test", "missing", 0)
    report(database, incident_id, "Ram Test", "safe", 30, person_id=person)
    assert open_alerts(database, incident_id) == []
    with database.sessions() as s:
        closed = s.scalars(select(Alert.id)).one()
    with database.session() as s:
        alert_actions.reopen_alert(
            s, closed, "the safe report was about his brother", actor=TEST_OPERATOR, source="HQ"
        )
    [alert] = open_alerts(database, incident_id)
    assert status_of(database, person) is ClaimStatus.MISSING
    assert alert.reopen_note == "the safe report was about his brother"
    with database.sessions() as s:
        events = s.scalars(select(AuditEvent.action).where(AuditEvent.action == "alert.reopen"))
        assert list(events) == ["alert.reopen"]
