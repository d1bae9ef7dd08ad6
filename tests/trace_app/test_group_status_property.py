"""Property: one status per person, the linked group's, everywhere (ADR 0160).

Random reports (who, what, when, from which source) and random same / different /
undecided decisions are published into a fresh incident; then every way a reader meets
a person's status must say what a plain model says (the claim about the latest moment
over the group, the group from the newest decision of each pair, followed through):

- the list (``GET /api/incidents/{id}/people``): one item per group, its ``group_status``;
- the filter (``?status=``): exactly the groups with that status, each once;
- the people CSV: every record's ``group_status``, and one ``group_record_id`` a group;
- the person API (``GET /api/people/{id}``): ``combined_status`` of every record;
- the alert: a group whose status is *missing* has one open alert, a group whose status
  is safe, admitted or deceased has none (no hand closes here).

The examples share one app and database (a fresh incident each), so they stay few and fast.
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from typing import Any

from accounts_helpers import TEST_OPERATOR, app_database
from hypothesis import HealthCheck, given, settings
from sqlalchemy.orm import Session
from test_alert_groups_property import NAMES, Decided, Event, Said, histories

from trace_app.domain.groups import groups_from_same_pairs
from trace_app.domain.links import decide_link
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.domain.search import people_search_key
from trace_app.domain.text import name_key
from trace_app.store.models import ClaimStatus, Incident, LinkDecision, Person
from trace_app.store.types import new_id

START = datetime(2026, 7, 15, 6, 0, tzinfo=UTC)
CLOSING = {ClaimStatus.SAFE, ClaimStatus.ADMITTED, ClaimStatus.DECEASED}


def expected(events: list[Event]) -> tuple[list[frozenset[int]], dict[int, ClaimStatus | None]]:
    """The model: groups from the newest decision of each pair, and each record's status
    as the newest report (distinct minutes) over its group."""
    newest: dict[tuple[int, int], LinkDecision] = {}
    for event in events:
        if isinstance(event, Decided):
            newest[event.pair] = event.decision
    same = [(str(a), str(b)) for (a, b), d in newest.items() if d is LinkDecision.SAME]
    key_of = groups_from_same_pairs(same)
    members: dict[str, set[int]] = {}
    for index in range(len(NAMES)):
        members.setdefault(key_of.get(str(index), str(index)), set()).add(index)
    groups = [frozenset(m) for m in members.values()]
    status: dict[int, ClaimStatus | None] = {}
    for group in groups:
        said = [e for e in events if isinstance(e, Said) and e.person in group]
        newest_said = max(said, key=lambda e: e.minute) if said else None
        for index in group:
            status[index] = newest_said.status if newest_said else None
    return groups, status


def publish(app: Any, events: list[Event], name: str = "") -> tuple[str, list[str]]:
    """A fresh incident with the four people, then the events in order."""
    incident_id = new_id("inc")
    ids = [new_id("per") for _ in NAMES]
    with Session(app_database(app).engine, expire_on_commit=False) as s:
        s.add(Incident(id=incident_id, name=name or f"Group status {incident_id[-8:]}"))
        for pid, name in zip(ids, NAMES, strict=True):
            s.add(
                Person(
                    id=pid,
                    incident_id=incident_id,
                    name=name,
                    name_key=name_key(name),
                    search_key=people_search_key([name]),
                )
            )
        s.commit()
        for event in events:
            if isinstance(event, Said):
                publish_report(
                    s,
                    PublishReportInput(
                        incident_id=incident_id,
                        source=event.source,
                        summary=f"r{event.minute}",
                        original_text=f"{NAMES[event.person]} is {event.status}.",
                        reported_at=START + timedelta(minutes=event.minute),
                        person=PersonInput(name=NAMES[event.person], person_id=ids[event.person]),
                        status=event.status,
                    ),
                )
            else:
                a, b = event.pair
                decide_link(s, ids[a], ids[b], event.decision, "prop", actor=TEST_OPERATOR)
            s.commit()
    return incident_id, ids


def value(status: ClaimStatus | None) -> str | None:
    return status.value if status is not None else None


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(events=histories())
def test_every_view_says_the_groups_status(web: Any, events: list[Event]) -> None:
    groups, status = expected(events)
    incident_id, ids = publish(web.app, events)
    index_of = {pid: i for i, pid in enumerate(ids)}
    group_of = {i: g for g in groups for i in g}

    # the list: one item per group, with the group's status
    listed = web.get(f"/api/incidents/{incident_id}/people", params={"limit": 500}).json()
    assert len(listed["items"]) == len(groups) == listed["total"]
    for item in listed["items"]:
        assert item["group_status"]["status"] == value(status[index_of[item["id"]]])

    # the filter: exactly the groups with that status, once each
    for wanted in ClaimStatus:
        found = web.get(
            f"/api/incidents/{incident_id}/people", params={"status": wanted.value}
        ).json()
        got = [group_of[index_of[item["id"]]] for item in found["items"]]
        assert len(got) == len(set(got))
        assert set(got) == {g for g in groups if status[min(g)] is wanted}, wanted
        assert all(item["group_status"]["status"] == wanted.value for item in found["items"])

    # the CSV: every record with its group's status, one group_record_id per group
    text = web.get(f"/api/incidents/{incident_id}/people.csv").content.decode("utf-8-sig")
    rows = {row["full_name"]: row for row in csv.DictReader(io.StringIO(text))}
    assert len(rows) == len(NAMES)
    for i, name in enumerate(NAMES):
        assert rows[name]["group_status"] == (value(status[i]) or "")
        same_key = {rows[NAMES[j]]["group_record_id"] for j in group_of[i]}
        assert len(same_key) == 1
    assert len({row["group_record_id"] for row in rows.values()}) == len(groups)

    # the person API: every record says its group's status
    for i, pid in enumerate(ids):
        person = web.get(f"/api/people/{pid}").json()
        assert person["combined_status"]["status"] == value(status[i])

    # the alert agrees with the status: missing has one open alert, closing ones none
    alerts = web.get(f"/api/incidents/{incident_id}/alerts", params={"limit": 500}).json()
    open_groups = [group_of[index_of[a["person_id"]]] for a in alerts["items"]]
    assert len(open_groups) == len(set(open_groups))  # one alert per person
    for group in groups:
        if status[min(group)] is ClaimStatus.MISSING:
            assert group in open_groups
        elif status[min(group)] in CLOSING:
            assert group not in open_groups
