"""The incident-wide Duplicates queue (issue 23): the pairs a person page offers, oldest
first, side by side with age, status, place, source and alert; decided from the queue;
kept between views and computed again only when people, names or decisions change."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from accounts_helpers import TEST_OPERATOR, csrf, signed_in
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from trace_app.domain import duplicate_queue
from trace_app.domain.duplicate_queue import duplicates_page, person_facts
from trace_app.domain.identity import possible_duplicates
from trace_app.domain.links import decide_link_and_commit
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_and_commit
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.store.models import AlertState, ClaimStatus, Incident, LinkDecision, Person
from trace_app.store.types import new_id

START = datetime(2026, 7, 15, 8, 0, tzinfo=UTC)


def _incident(database: Database) -> str:
    with database.session() as s:
        incident = Incident(id=new_id("inc"), name="Queue Incident " + new_id("x"))
        s.add(incident)
        return incident.id


def _report(
    database: Database,
    incident_id: str,
    name: str,
    age: int | None,
    status: ClaimStatus,
    hours: int,
    source: str = "Hill Clinic Test",
    location: str = "",
) -> str:
    with database.sessions() as s:
        report = publish_and_commit(
            s,
            PublishReportInput(
                incident_id=incident_id,
                source=source,
                summary=f"{name} {status.value}",
                original_text=f"A report about {name}.",
                reported_at=START + timedelta(hours=hours),
                person=PersonInput(name=name, age=age),
                status=status,
                location=location,
            ),
            actor=TEST_OPERATOR,
        )
        return report.person_id


def test_the_queue_holds_the_pairs_person_pages_offer_oldest_first(database: Database) -> None:
    incident = _incident(database)
    sunita = _report(
        database, incident, "सुनिता राई", 34, ClaimStatus.MISSING, 0, "Nepal Police Test"
    )
    maya = _report(database, incident, "Maya Gurung", 40, ClaimStatus.MISSING, 1)
    _report(database, incident, "Ram Thapa", 50, ClaimStatus.SEEN, 2)
    maya2 = _report(database, incident, "Maya Gurnug", 41, ClaimStatus.ADMITTED, 3)
    sunita2 = _report(
        database, incident, "Sunita Rai", 34, ClaimStatus.SAFE, 4, "Camp Test", "Camp 3"
    )
    with database.sessions() as s:
        page = duplicates_page(s, incident)
        pairs = [(p.first.person_id, p.second.person_id) for p in page.items]
        assert pairs == [(maya, maya2), (sunita, sunita2)]  # by the later record
        assert page.total == 2
        # the same pairs a person page offers
        for pid in (sunita, maya, maya2, sunita2):
            person = s.get(Person, pid)
            assert person is not None
            offered = {d.person_id for d in possible_duplicates(s, person)}
            in_queue = {b if a == pid else a for a, b in pairs if pid in (a, b)}
            assert offered == in_queue, pid
        second = page.items[1]
        assert second.first.status is ClaimStatus.MISSING
        assert second.first.alert is AlertState.OPEN and second.first.source == "Nepal Police Test"
        assert second.second.status is ClaimStatus.SAFE and second.second.location == "Camp 3"
        assert second.second.age == 34 and second.second.alert is None
        assert {r.code for r in second.reasons} == {"transliteration"}
        assert duplicates_page(s, incident, offset=1, limit=1).items[0] == second
    decide_link_and_commit(
        database.sessions(), maya2, maya, LinkDecision.DIFFERENT, "two women", actor=TEST_OPERATOR
    )
    with database.sessions() as s:
        left = duplicates_page(s, incident)
        assert [(p.first.person_id, p.second.person_id) for p in left.items] == [(sunita, sunita2)]


def test_a_view_reuses_the_pairs_until_the_incident_changes(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    incident = _incident(database)
    _report(database, incident, "Hari Lama", 20, ClaimStatus.MISSING, 0)
    _report(database, incident, "Hari Lamma", 20, ClaimStatus.SEEN, 1)
    computed: list[str] = []
    real = duplicate_queue._compute_pairs

    def counting(session: Any, incident_id: str) -> Any:
        computed.append(incident_id)
        return real(session, incident_id)

    monkeypatch.setattr(duplicate_queue, "_compute_pairs", counting)
    with database.sessions() as s:
        assert duplicates_page(s, incident).total == 1
        assert duplicates_page(s, incident).total == 1
    assert computed == [incident]  # the second view read the kept pairs
    _report(database, incident, "Hari Laama", 20, ClaimStatus.SAFE, 2)
    with database.sessions() as s:
        assert duplicates_page(s, incident).total == 3
    assert computed == [incident, incident]


def test_person_facts_follow_the_status_rule(database: Database) -> None:
    incident = _incident(database)
    pid = _report(database, incident, "Facts Person", 60, ClaimStatus.MISSING, 0, "Police Test")
    with database.sessions() as s:
        facts = person_facts(s, [pid, "per_unknown"])
    assert set(facts) == {pid}
    assert facts[pid].status is ClaimStatus.MISSING and facts[pid].alert is AlertState.OPEN
    assert facts[pid].source == "Police Test" and facts[pid].reported_at == START


@pytest.fixture
def web(database: Database, tmp_path: Path) -> Iterator[TestClient]:
    home = tmp_path / "home"
    settings = TraceSettings(home=home, database_url=f"sqlite:///{home / 'unused.db'}", demo=True)
    app = create_app_for(settings, database)
    with signed_in(app) as client:
        yield client


def create_app_for(settings: TraceSettings, database: Database) -> Any:
    from trace_app.web.app import create_app

    return create_app(settings, db=database)


def _two_spellings(web: TestClient, incident_id: str) -> None:
    for name, status, location in (
        ("Bishnu Shrestha", "missing", ""),
        ("Bishnu Shresta", "safe", "Chautara camp"),
    ):
        body = {
            "incident_id": incident_id,
            "summary": f"{name}: {status}.",
            "original_text": f"A report that {name} is {status}.",
            "person": {"name": name, "age": 29},
            "status": status,
            "location": location,
        }
        assert web.post("/api/reports", json=body).status_code == 201


def test_the_queue_page_and_api_show_pairs_and_take_a_decision(web: TestClient) -> None:
    incident_id = next(
        i["id"]
        for i in web.get("/api/incidents").json()["items"]
        if i["name"] == "Flood Relief Demo"
    )
    _two_spellings(web, incident_id)
    api = web.get(f"/api/incidents/{incident_id}/duplicates").json()
    assert api["total"] >= 1 and api["offset"] == 0
    first = api["items"][0]
    assert set(first["first"]) >= {"name", "age", "status", "location", "source", "alert"}
    page = web.get(f"/incidents/{incident_id}/duplicates").text
    assert "Possible duplicates" in page and 'class="pair"' in page
    assert first["first"]["name"] in page and first["second"]["name"] in page
    decided = web.post(
        f"/incidents/{incident_id}/duplicates/decisions",
        data={
            "csrf_token": csrf(web),
            "person_id": first["second"]["person_id"],
            "other_person_id": first["first"]["person_id"],
            "decision": "different",
            "note": "different fathers' names",
        },
    )
    assert decided.status_code == 303
    assert "duplicates?page=1&decided=different&person=" in decided.headers["location"]
    after = web.get(f"/api/incidents/{incident_id}/duplicates").json()
    assert after["total"] == api["total"] - 1
    # bad input: a typed refusal, nothing recorded
    for data, status in (
        ({"decision": "maybe"}, 422),
        ({"decision": "same", "note": ""}, 422),
        ({"decision": "same", "person_id": "per_nope"}, 404),
    ):
        body = {
            "csrf_token": csrf(web),
            "person_id": first["second"]["person_id"],
            "other_person_id": first["first"]["person_id"],
            "note": "n",
            **data,
        }
        refused = web.post(f"/incidents/{incident_id}/duplicates/decisions", data=body)
        assert refused.status_code == status, (data, refused.status_code)
    assert web.get(f"/api/incidents/{incident_id}/duplicates").json()["total"] == after["total"]
    assert web.get("/api/incidents/inc_nope/duplicates").status_code in (403, 404)
    assert web.get(f"/incidents/{incident_id}/duplicates?page=0").status_code == 422


def test_an_incident_too_large_for_the_queue_is_told_so_and_not_compared(
    web: TestClient, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    incident_id = next(
        i["id"]
        for i in web.get("/api/incidents").json()["items"]
        if i["name"] == "Flood Relief Demo"
    )
    _two_spellings(web, incident_id)
    with database.sessions() as s:
        total = s.scalar(
            select(func.count()).select_from(Person).where(Person.incident_id == incident_id)
        )
    assert total is not None
    compared: list[str] = []
    monkeypatch.setattr(duplicate_queue, "MAX_QUEUE_PEOPLE", total - 1)
    monkeypatch.setattr(duplicate_queue, "_compute_pairs", lambda _s, i: compared.append(i))
    refused = web.get(f"/api/incidents/{incident_id}/duplicates")
    assert refused.status_code == 409
    assert refused.json()["code"] == "too_many_people"
    assert f"holds {total:,} people" in refused.json()["detail"]
    page = web.get(f"/incidents/{incident_id}/duplicates")
    assert page.status_code == 409
    assert 'id="queue-too-large"' in page.text and 'class="pair"' not in page.text
    assert compared == []
    # each person's page still offers its look-alikes
    found = web.get(f"/api/incidents/{incident_id}/people?q=Bishnu Shresta").json()["items"]
    person = web.get(f"/api/people/{found[0]['id']}").json()
    assert {d["name"] for d in person["possible_duplicates"]} >= {"Bishnu Shrestha"}
    # at the bound itself the queue is listed
    monkeypatch.setattr(duplicate_queue, "MAX_QUEUE_PEOPLE", total)
    monkeypatch.setattr(duplicate_queue, "_compute_pairs", lambda _s, i: compared.append(i) or [])
    assert web.get(f"/api/incidents/{incident_id}/duplicates").status_code == 200
    assert compared == [incident_id]


def test_the_person_panel_shows_what_to_compare(web: TestClient) -> None:
    incident_id = next(
        i["id"]
        for i in web.get("/api/incidents").json()["items"]
        if i["name"] == "Flood Relief Demo"
    )
    _two_spellings(web, incident_id)
    pair = web.get(f"/api/incidents/{incident_id}/duplicates").json()["items"][0]
    page = web.get(f"/people/{pair['second']['person_id']}").text
    panel = page.split('id="duplicates-heading"')[1].split("</section>")[0]
    for fact in ("fact-age", "fact-status", "fact-place", "fact-source", "fact-alert"):
        assert fact in panel
    assert pair["first"]["name"] in panel
    if pair["first"]["source"]:
        assert pair["first"]["source"] in panel


def test_every_reason_reaches_the_queue_as_on_person_pages(database: Database) -> None:
    """The queue's first pass stops at the close-spelling score; every other reason makes
    the Latin readings equal, so it finds exactly what person pages offer."""
    incident = _incident(database)
    names = [
        ("Maya Gurung", 24),
        ("M\u0430ya Gurung", 24),  # a Cyrillic a
        ("Ram Thapa", 40),
        ("Ram Tha\u200bpa", 40),  # a zero-width space
        ("Hari Lama", 20),
        ("Hari Lama", 70),  # the same name, ages far apart
        ("\uff33ita Rai", 30),  # a full-width S
        ("Sita Rai", 30),
        ("सुनिता राई", 34),
        ("Sunita Rai", 34),
        ("Bishnu Shrestha", 50),
        ("Bisnu Shrestha", 50),
        ("Dawa Sherpa", 45),
    ]
    ids = [
        _report(database, incident, name, age, ClaimStatus.SEEN, hour)
        for hour, (name, age) in enumerate(names)
    ]
    with database.sessions() as s:
        page = duplicates_page(s, incident, limit=100)
        pairs = {frozenset((p.first.person_id, p.second.person_id)) for p in page.items}
        codes = {c for p in page.items for c in (r.code for r in p.reasons)}
        offered = set()
        for pid in ids:
            person = s.get(Person, pid)
            assert person is not None
            offered |= {frozenset((pid, d.person_id)) for d in possible_duplicates(s, person)}
    assert pairs == offered
    assert {"same_name", "invisible_characters", "confusable_characters"} <= codes
    assert {"transliteration", "close_spelling"} <= codes


def test_a_same_person_decision_says_which_alert_closed_and_links_the_person(
    web: TestClient,
) -> None:
    incident_id = next(
        i["id"]
        for i in web.get("/api/incidents").json()["items"]
        if i["name"] == "Flood Relief Demo"
    )
    _two_spellings(web, incident_id)
    pair = next(
        p
        for p in web.get(f"/api/incidents/{incident_id}/duplicates").json()["items"]
        if {p["first"]["name"], p["second"]["name"]} == {"Bishnu Shrestha", "Bishnu Shresta"}
    )
    missing = next(s for s in (pair["first"], pair["second"]) if s["name"] == "Bishnu Shrestha")
    safe = pair["second"] if pair["first"] is missing else pair["first"]
    decided = web.post(
        f"/incidents/{incident_id}/duplicates/decisions",
        data={
            "csrf_token": csrf(web),
            "person_id": missing["person_id"],
            "other_person_id": safe["person_id"],
            "decision": "same",
            "note": "same age, same village",
        },
        follow_redirects=True,
    )
    notice = decided.text.split('id="pair-decided"')[1].split("</div>")[0]
    assert f'href="/people/{missing["person_id"]}"' in notice
    assert 'class="alert-closed-by-decision"' in notice and "Bishnu Shrestha" in notice
