"""Listing functions run a fixed number of statements whatever the data size."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from trace_app.domain import (
    PersonInput,
    PublishReportInput,
    alert_queries,
    people_queries,
    publish_report,
    queries,
    report_queries,
)
from trace_app.store.db import Database
from trace_app.store.models import ClaimStatus


def add_reports(database: Database, incident_id: str, n: int, people: int) -> None:
    start = datetime(2026, 8, 1, tzinfo=UTC)
    statuses = list(ClaimStatus)
    with database.session() as s:
        for i in range(n):
            publish_report(
                s,
                PublishReportInput(
                    incident_id=incident_id,
                    source=f"Source {i % 7}",
                    summary=f"Report {i}",
                    original_text=f"Text of report {i}.",
                    reported_at=start + timedelta(minutes=i),
                    # one age per person: reports that disagree on it are about two people
                    person=PersonInput(name=f"Person {i % people:04d}", age=(i % people) % 90),
                    status=statuses[i % len(statuses)],
                    location=f"Place {i % 11}",
                ),
            )


def measure(database: Database, incident_id: str, counter_cls: Any) -> dict[str, int]:
    result: dict[str, int] = {}
    calls = {
        "incidents": lambda s: queries.list_incidents(s),
        "people": lambda s: people_queries.people_page(s, incident_id),
        "alerts": lambda s: alert_queries.open_alerts(s, incident_id),
        "reports": lambda s: [
            (r.organization.name, r.person.name, [c.id for c in r.claims])
            for r in report_queries.reports_page(s, incident_id).items
        ],
    }
    for name, call in calls.items():
        with database.sessions() as s, counter_cls(database.engine) as counter:
            call(s)
        result[name] = counter.count
    return result


def test_listing_statements_do_not_grow_with_reports(
    database: Database, seeded: str, count_statements: Any
) -> None:
    small = measure(database, seeded, count_statements)
    add_reports(database, seeded, n=300, people=120)
    large = measure(database, seeded, count_statements)
    assert small == large
    assert large["incidents"] == 1
    assert large["people"] == 4  # count, rows, the listed groups' other records, claims
    assert large["alerts"] == 3  # count, rows, the sources that joined them
    assert large["reports"] <= 3


def test_people_page_is_paged_and_ordered(database: Database, seeded: str) -> None:
    add_reports(database, seeded, n=130, people=110)
    with database.sessions() as s:
        first = people_queries.people_page(s, seeded, offset=0, limit=50)
        last = people_queries.people_page(s, seeded, offset=100, limit=50)
        assert first.total == 24 + 110
        assert len(first.items) == 50 and len(last.items) == first.total - 100
        assert first.pages == 3 and first.has_next and not first.has_previous
        assert last.number == 3 and not last.has_next
        keys = [p.name.casefold() for p in first.items]
        assert keys == sorted(keys)


def test_open_alerts_newest_first(database: Database, seeded: str) -> None:
    with database.sessions() as s:
        page = alert_queries.open_alerts(s, seeded)
        # six missing reports; two of those people are later reported safe (closed by rule);
        # Maya Gurung's police report and its relay are one alert with two sources
        assert page.total == 3
        times = [a.raised_at for a in page.items]
        assert times == sorted(times, reverse=True)
        assert {a.state for a in page.items} == {"open"}
        assert "Maya Gurung" in {a.person_name for a in page.items}
        maya = next(a for a in page.items if a.person_name == "Maya Gurung")
        assert len(maya.other_sources) == 1 and maya.other_sources[0] != maya.source
