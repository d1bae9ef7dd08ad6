"""The review queue in priority order, its filters and "assign to me" (issue 40, item 5),
on SQLite and PostgreSQL.

The order is the rule of ``trace_app.domain.reviews.priority``: a report whose person (or
a record linked to it) has an open alert first, then one about a child or an older
person, then the oldest report. The queue must hold the same items as before (ADR 0084),
page across its two lanes without a gap or a repeat, and set the keys of runs saved
without them on its next read.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from accounts_helpers import TEST_OPERATOR, csrf, signed_in
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update
from test_reviews import START, UNCLEAR_TEXT, save_run

from trace_app.domain import links, reviews
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.domain.reviews import Priority
from trace_app.investigation import review_queue
from trace_app.investigation.review_queue import QueueFilter, ReviewReason
from trace_app.settings import TraceSettings
from trace_app.store.account_models import AuditEvent
from trace_app.store.db import Database
from trace_app.store.models import (
    Alert,
    AlertState,
    ClaimStatus,
    Incident,
    InvestigationRun,
    LinkDecision,
    Organization,
    Person,
    Report,
)
from trace_app.store.types import new_id


@pytest.fixture
def incident(database: Database) -> str:
    with database.session() as s:
        row = Incident(id=new_id("inc"), name="Priority Test Incident")
        s.add(row)
        return row.id


def report(
    database: Database,
    incident_id: str,
    name: str,
    minutes: int,
    *,
    age: int | None = 30,
    status: ClaimStatus = ClaimStatus.SEEN,
    source: str = "River Clinic Test",
) -> tuple[str, str]:
    """A published report (a missing one opens an alert): (report id, person id)."""
    with database.session() as s:
        row = publish_report(
            s,
            PublishReportInput(
                incident_id=incident_id,
                source=source,
                summary=f"{name} at {minutes}",
                original_text=f"{UNCLEAR_TEXT} {name} {minutes}.",
                reported_at=START + timedelta(minutes=minutes),
                person=PersonInput(name=name, age=age),
                status=status,
            ),
        )
        return row.id, row.person_id


def ids(database: Database, incident_id: str, limit: int = 100, **only: Any) -> list[str]:
    with database.sessions() as s:
        page = review_queue.review_queue(
            s, incident_id, offset=0, limit=limit, only=QueueFilter(**only)
        )
        return [item.report.id for item in page.items]


def test_the_rule() -> None:
    assert reviews.priority(True, reviews.age_rank(8)) is Priority.ALERT_CHILD_OR_OLDER
    assert reviews.priority(True, reviews.age_rank(30)) is Priority.OPEN_ALERT
    assert reviews.priority(False, reviews.age_rank(60)) is Priority.CHILD_OR_OLDER
    assert reviews.priority(False, reviews.age_rank(17)) is Priority.CHILD_OR_OLDER
    assert reviews.priority(False, reviews.age_rank(18)) is Priority.OTHER
    assert reviews.priority(False, reviews.age_rank(59)) is Priority.OTHER
    assert reviews.priority(False, reviews.age_rank(None)) is Priority.OTHER
    assert reviews.priority(True, None) is Priority.OPEN_ALERT
    assert sorted(Priority) == [Priority(n) for n in range(4)]


def test_open_alert_first_then_children_and_older_people_then_the_oldest_report(
    database: Database, incident: str
) -> None:
    adult, _ = report(database, incident, "Adult Old", 1)
    child, _ = report(database, incident, "Child Later", 5, age=7)
    elder, _ = report(database, incident, "Elder Later", 6, age=81)
    missing, _ = report(database, incident, "Missing Adult", 9, status=ClaimStatus.MISSING)
    missing_child, _ = report(
        database, incident, "Missing Child", 10, age=4, status=ClaimStatus.MISSING
    )
    newer_adult, _ = report(database, incident, "Adult New", 12, age=None)
    for n, report_id in enumerate([newer_adult, missing, adult, elder, child, missing_child]):
        save_run(database, report_id, minutes=n)  # run order is not the queue's order
    expected = [missing_child, missing, child, elder, adult, newer_adult]
    assert ids(database, incident) == expected
    # paged across the two lanes: no gap, no repeat
    for limit in (1, 2, 4):
        seen: list[str] = []
        while True:
            with database.sessions() as s:
                page = review_queue.review_queue(s, incident, offset=len(seen), limit=limit)
            seen += [item.report.id for item in page.items]
            assert page.total == len(expected)
            if len(page.items) < limit:
                break
        assert seen == expected, limit
    with database.sessions() as s:
        first = review_queue.review_queue(s, incident, offset=0, limit=3).items
    assert [i.priority for i in first] == [
        Priority.ALERT_CHILD_OR_OLDER,
        Priority.OPEN_ALERT,
        Priority.CHILD_OR_OLDER,
    ]

    # the alert closes (a safe report): the person drops back to their age's place
    report(database, incident, "Missing Adult", 20, status=ClaimStatus.SAFE)
    assert ids(database, incident) == [missing_child, child, elder, adult, missing, newer_adult]


def test_a_linked_record_with_an_open_alert_puts_the_report_first(
    database: Database, incident: str
) -> None:
    first, _ = report(database, incident, "Ram Test", 1)
    seen, seen_person = report(database, incident, "Ram Tset", 2)
    _missing, missing_person = report(
        database, incident, "Ram Thapa Test", 3, status=ClaimStatus.MISSING
    )
    save_run(database, first)
    save_run(database, seen)
    assert ids(database, incident) == [first, seen]
    with database.sessions() as s:
        links.decide_link_and_commit(
            s, seen_person, missing_person, LinkDecision.SAME, "same phone", actor=TEST_OPERATOR
        )
    assert ids(database, incident) == [seen, first]


def test_filters(database: Database, incident: str) -> None:
    clinic, _ = report(database, incident, "Clinic Person", 1)
    camp, _ = report(database, incident, "Camp Person", 2, source="Hill Camp Test")
    relay, _ = report(database, incident, "Relay Person", 3)
    save_run(database, clinic)
    save_run(database, camp)
    save_run(database, relay, attribution="RELAY", source="Hill Camp Test")
    with database.sessions() as s:
        camp_org = s.scalar(select(Organization.id).where(Organization.name == "Hill Camp Test"))
        offered = review_queue.queue_organizations(s, incident)
    assert [name for _, name in offered] == ["Hill Camp Test", "River Clinic Test"]
    assert ids(database, incident, organization_id=camp_org) == [camp]
    assert ids(database, incident, reason=ReviewReason.RELAY) == [relay]
    assert ids(database, incident, reason=ReviewReason.UNCLEAR) == [clinic, camp]
    assert ids(database, incident, reason=ReviewReason.FIRST_HAND_DOUBTED) == []
    assert ids(database, incident, assigned_to="nobody-yet") == []
    with database.sessions() as s:
        review_queue.assign(s, relay, True, actor=TEST_OPERATOR)
    assert ids(database, incident, assigned_to=TEST_OPERATOR.name) == [relay]
    with database.sessions() as s:
        page = review_queue.review_queue(
            s, incident, offset=0, limit=1, only=QueueFilter(organization_id=camp_org)
        )
    assert page.total == 1 and not page.total_at_least


def test_a_filtered_total_stops_counting_at_the_cap(
    database: Database, incident: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filter's total counts at most FILTERED_TOTAL_CAP rows (or just past the page
    asked for), and says so; every row is still reached page by page."""
    reports = [report(database, incident, f"Person {n}", n + 1)[0] for n in range(5)]
    for report_id in reports:
        save_run(database, report_id)
    monkeypatch.setattr(review_queue, "FILTERED_TOTAL_CAP", 3)
    only = QueueFilter(reason=ReviewReason.UNCLEAR)
    seen: list[str] = []
    with database.sessions() as s:
        first = review_queue.review_queue(s, incident, offset=0, limit=2, only=only)
        assert (first.total, first.total_at_least, first.has_next) == (3, True, True)
        seen += [item.report.id for item in first.items]
        second = review_queue.review_queue(s, incident, offset=2, limit=2, only=only)
        assert (second.total, second.total_at_least) == (5, True)  # just past this page
        seen += [item.report.id for item in second.items]
        last = review_queue.review_queue(s, incident, offset=4, limit=2, only=only)
        assert (last.total, last.total_at_least, last.has_next) == (5, False, False)
        seen += [item.report.id for item in last.items]
        unfiltered = review_queue.review_queue(s, incident, offset=0, limit=2)
        assert (unfiltered.total, unfiltered.total_at_least) == (5, False)
    assert sorted(seen) == sorted(reports)


def test_the_page_says_or_more_when_a_filtered_total_was_cut(
    database: Database, incident: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trace_app.web.reviews import routes as review_routes

    for n in range(5):
        save_run(database, report(database, incident, f"Person {n}", n + 1)[0])
    monkeypatch.setattr(review_queue, "FILTERED_TOTAL_CAP", 3)
    monkeypatch.setattr(review_routes, "REVIEWS_PER_PAGE", 2)
    settings = TraceSettings(home=tmp_path / "home", database_url="sqlite://unused")
    with signed_in(create_app_for(settings, database), role="reviewer") as http:
        cut = http.get(f"/incidents/{incident}/reviews?reason=unclear").text
        assert '<span class="count">3 or more</span>' in cut and "Page 1 of 2 or more" in cut
        whole = http.get(f"/incidents/{incident}/reviews").text
        assert '<span class="count">5</span>' in whole and "Page 1 of 3<" in whole
        spanish = http.get(f"/incidents/{incident}/reviews?reason=unclear&lang=es").text
        assert "3 o más" in spanish and "Página 1 de 2 o más" in spanish


def _audits(database: Database, action: str) -> list[AuditEvent]:
    with database.sessions() as s:
        return list(
            s.scalars(
                select(AuditEvent).where(AuditEvent.action == action).order_by(AuditEvent.sequence)
            )
        )


@pytest.fixture
def client(database: Database, tmp_path: Path) -> Iterator[Any]:
    settings = TraceSettings(home=tmp_path / "home", database_url="sqlite://unused")
    with signed_in(create_app_for(settings, database), role="reviewer", name="rita") as http:
        yield http


def create_app_for(settings: TraceSettings, database: Database) -> Any:
    from trace_app.web.app import create_app

    return create_app(settings, db=database)


def test_assign_to_me_is_stored_and_audited_once_per_change(
    database: Database, incident: str, client: TestClient
) -> None:
    report_id, _ = report(database, incident, "Assigned Person", 1)
    other, _ = report(database, incident, "Other Person", 2)
    save_run(database, report_id)
    save_run(database, other)

    taken = client.post(f"/api/reports/{report_id}/assignment", json={"mine": True})
    assert taken.status_code == 200, taken.text
    assert taken.json()["assigned_to"] == "rita"
    again = client.post(f"/api/reports/{report_id}/assignment", json={"mine": True})
    assert again.json()["assigned_to"] == "rita"
    rows = _audits(database, "review.assign")
    assert len(rows) == 1  # nothing changed the second time
    assert rows[0].before == {"assigned_to": None} and rows[0].after == {"assigned_to": "rita"}

    mine = client.get(f"/api/incidents/{incident}/reviews", params={"assigned_to_me": True})
    assert [i["report_id"] for i in mine.json()["items"]] == [report_id]
    assert mine.json()["total"] == 1
    everything = client.get(f"/api/incidents/{incident}/reviews").json()["items"]
    assert [(i["report_id"], i["assigned_to"]) for i in everything] == [
        (report_id, "rita"),
        (other, None),
    ]
    assert everything[0]["priority"] == 3 and everything[0]["waits_because"] == "unclear"

    # someone else takes it over, then releases it: one row each
    with database.sessions() as s:
        review_queue.assign(s, report_id, True, actor=TEST_OPERATOR)
        review_queue.assign(s, report_id, False, actor=TEST_OPERATOR)
    rows = _audits(database, "review.assign")
    assert [(r.before, r.after) for r in rows[1:]] == [
        ({"assigned_to": "rita"}, {"assigned_to": TEST_OPERATOR.name}),
        ({"assigned_to": TEST_OPERATOR.name}, {"assigned_to": None}),
    ]

    # the page's button: 303 back to the queue, the filters kept
    form = {"csrf_token": csrf(client), "mine": "1", "back": "mine=1&page=1"}
    answer = client.post(f"/reports/{other}/assignment", data=form, follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"].endswith(f"/reviews?mine=1&page=1#review-{other}")
    page = client.get(f"/incidents/{incident}/reviews?mine=1")
    assert page.status_code == 200
    assert page.text.count('class="review-item"') == 1 and "taken by you" in page.text
    assert client.post(f"/api/reports/{other}/assignment", json={}).status_code == 422
    missing = client.post("/api/reports/rep_nope/assignment", json={"mine": True})
    assert missing.status_code == 404


def test_runs_saved_without_keys_get_them_on_the_next_read(
    database: Database, incident: str
) -> None:
    child, _ = report(database, incident, "Key Child", 5, age=9)
    adult, _ = report(database, incident, "Key Adult", 1)
    save_run(database, child)
    save_run(database, adult)
    with database.session() as s:  # as before migration 0018, or a process without the rule
        s.execute(
            update(InvestigationRun)
            .where(InvestigationRun.incident_id == incident)
            .values(review_rank=None, report_reported_at=None)
        )
    assert ids(database, incident) == [child, adult]
    assert len(_audits(database, "review.order")) == 1
    assert ids(database, incident) == [child, adult]
    assert len(_audits(database, "review.order")) == 1  # the probe finds nothing to do
    with database.sessions() as s:
        unset = select(func.count()).where(InvestigationRun.review_rank.is_(None))
        assert s.scalar(unset) == 0  # the awaiting ones (both are)


def test_the_queue_holds_the_same_items_in_the_rules_order(
    database: Database, incident: str
) -> None:
    """Generated: ages, missing and safe reports, runs; the order equals sorting by the rule."""
    rng = random.Random(40)
    ages = [rng.choice([None, 3, 16, 30, 45, 70]) for _ in range(10)]
    for n in range(26):
        status = rng.choice([ClaimStatus.SEEN, ClaimStatus.MISSING, ClaimStatus.SAFE])
        # a person's age is known from their first report or never (a record's unknown age
        # filled in later does not move runs saved before: docs/trace.md, "Reviews")
        age = ages[n % 10] if n < 10 or rng.random() < 0.5 else None
        report_id, _ = report(database, incident, f"Gen Person {n % 10}", n, age=age, status=status)
        if rng.random() < 0.8:
            save_run(database, report_id, minutes=rng.choice([0, 5, 30]))
    got = ids(database, incident)  # runs saved straight into the store: decided on this look
    with database.sessions() as s:
        open_people = set(
            s.scalars(
                select(Alert.person_id).where(
                    Alert.incident_id == incident, Alert.state == AlertState.OPEN.value
                )
            )
        )
        age = func.coalesce(Report.person_age, Person.age).label("age")
        rows = s.execute(
            select(Report.id, Report.person_id, age, Report.reported_at)
            .join(Person, Person.id == Report.person_id)
            .join(InvestigationRun, InvestigationRun.report_id == Report.id)
            .where(InvestigationRun.awaiting_review.is_(True), Report.incident_id == incident)
        ).all()
        runs = {r.report_id: r.id for r in s.scalars(select(InvestigationRun))}

    def rank(r: Any) -> Priority:
        return reviews.priority(r.person_id in open_people, reviews.age_rank(r.age))

    expected = sorted(rows, key=lambda r: (rank(r), r.reported_at, runs[r.id]))
    assert len({rank(r) for r in expected}) == 4  # every lane has some
    assert got == [r.id for r in expected], [
        (r.id[-4:], r.person_id in open_people, r.age, r.reported_at.minute) for r in expected
    ]
    assert len(expected) > 8


def test_a_viewer_reads_the_queue_without_its_controls(
    database: Database, incident: str, tmp_path: Path
) -> None:
    report_id, _ = report(database, incident, "Viewer Person", 1)
    save_run(database, report_id)
    settings = TraceSettings(home=tmp_path / "home", database_url="sqlite://unused")
    with signed_in(create_app_for(settings, database), role="viewer") as viewer:
        page = viewer.get(f"/incidents/{incident}/reviews")
        assert page.status_code == 200 and f'id="review-{report_id}"' in page.text
        assert "Assign to me" not in page.text and "Record decision" not in page.text
        assert 'id="review-who-can"' in page.text
        taken = viewer.post(f"/api/reports/{report_id}/assignment", json={"mine": True})
        assert taken.status_code == 403
