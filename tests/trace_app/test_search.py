"""People search: scripts, accents, typos, ranking, natural order and the filters, on
SQLite and PostgreSQL, through the domain and the API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.domain.search import AlertFilter, natural_key, search_key, search_people
from trace_app.store.db import Database
from trace_app.store.models import ClaimStatus, Incident
from trace_app.store.types import new_id

START = datetime(2026, 7, 15, 8, 0, tzinfo=UTC)


def make_incident(database: Database, people: list[tuple[str, str, str]]) -> str:
    """people: (name, status, source); published in order, a minute apart."""
    with database.session() as s:
        incident = Incident(id=new_id("inc"), name="Search Test Incident")
        s.add(incident)
        s.flush()
        for minute, (name, status, source) in enumerate(people):
            publish_report(
                s,
                PublishReportInput(
                    incident_id=incident.id,
                    source=source,
                    summary=f"{name}: {status}.",
                    original_text=f"A volunteer reports {name} as {status}.",
                    reported_at=START + timedelta(minutes=minute),
                    person=PersonInput(name=name),
                    status=ClaimStatus(status),
                ),
            )
        return incident.id


def names(database: Database, incident_id: str, **kwargs: Any) -> list[str]:
    with database.sessions() as s:
        return [m.name for m in search_people(s, incident_id, **kwargs)]


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("सुनिता राई", "sunita rai"),
        ("  SÚNITA   Rai ", "sunita rai"),
        ("Ｓｕｎｉｔａ", "sunita"),  # full-width letters (NFKC)
        ("Сунита", "sunita"),  # Cyrillic
        ("O'Brien-Lama", "o brien lama"),
    ],
)
def test_search_key_ignores_case_accents_and_script(raw: str, key: str) -> None:
    assert search_key(raw) == key


def test_natural_key_orders_numbers_by_value() -> None:
    shuffled = ["Filler 10", "Filler 2", "filler 1", "Filler 21", "Alpha"]
    assert sorted(shuffled, key=natural_key) == [
        "Alpha",
        "filler 1",
        "Filler 2",
        "Filler 10",
        "Filler 21",
    ]


def test_devanagari_name_found_in_latin_and_with_a_typo(database: Database) -> None:
    incident_id = make_incident(
        database,
        [
            ("सुनिता राई", "missing", "Camp A"),
            ("Gita Rai", "safe", "Camp A"),
            ("Anil Shrestha", "safe", "Camp B"),
        ],
    )
    assert names(database, incident_id, q="sunita rai") == ["सुनिता राई"]
    assert names(database, incident_id, q="Sunitta") == ["सुनिता राई"]
    assert names(database, incident_id, q="SÚNITA") == ["सुनिता राई"]
    assert names(database, incident_id, q="zzzz") == []


def test_ranking_exact_then_prefix_then_fuzzy_then_natural(database: Database) -> None:
    incident_id = make_incident(
        database,
        [
            ("Maya Gurng", "missing", "Camp A"),
            ("Maya Gurung Thapa", "missing", "Camp A"),
            ("Maya Gurung", "missing", "Camp A"),
            ("Filler 10", "safe", "Camp A"),
            ("Filler 2", "safe", "Camp A"),
        ],
    )
    assert names(database, incident_id, q="maya gurung") == [
        "Maya Gurung",
        "Maya Gurung Thapa",  # begins with the query
        "Maya Gurng",  # a typo: closer as a whole, but no prefix
    ]
    assert names(database, incident_id, q="filler") == ["Filler 2", "Filler 10"]
    assert names(database, incident_id)[:2] == ["Filler 2", "Filler 10"]


def test_filters_status_alert_and_organization(database: Database) -> None:
    incident_id = make_incident(
        database,
        [
            ("Asha Lama", "missing", "Youth Network"),
            ("Binod Magar", "missing", "Youth Network"),
            ("Asha Lama", "safe", "Relief Camp"),  # closes Asha's alert by rule
            ("Deepak Rai", "seen", "Relief Camp"),
        ],
    )
    assert names(database, incident_id, status="safe") == ["Asha Lama"]
    assert names(database, incident_id, status="missing") == ["Binod Magar"]
    assert names(database, incident_id, alert=AlertFilter.OPEN) == ["Binod Magar"]
    assert names(database, incident_id, alert=AlertFilter.CLOSED) == ["Asha Lama"]
    assert names(database, incident_id, organization=" relief CAMP ") == [
        "Asha Lama",
        "Deepak Rai",
    ]
    assert names(database, incident_id, organization="Relief Camp", q="binod") == []


def test_api_search_and_filters(web: TestClient, incident_id: str) -> None:
    url = f"/api/incidents/{incident_id}/people"
    found = web.get(url, params={"q": "asha lamma"}).json()
    assert [p["name"] for p in found["items"]] == ["Asha Lama"] and found["total"] == 1
    safe = web.get(url, params={"status": "safe", "limit": 5, "offset": 1}).json()
    assert safe["total"] > 5 and len(safe["items"]) == 5 and safe["offset"] == 1
    open_alert = web.get(url, params={"alert": "open"}).json()
    assert "Maya Gurung" in {p["name"] for p in open_alert["items"]}
    assert "Asha Lama" not in {p["name"] for p in open_alert["items"]}
    for bad in ({"status": "lost"}, {"alert": "maybe"}, {"q": "x" * 201}, {"q": "a\x00b"}):
        response = web.get(url, params=bad)
        assert response.status_code == 422, bad


def test_people_page_search_box_and_filters(web: TestClient, incident_id: str) -> None:
    url = f"/incidents/{incident_id}/people"
    page = web.get(url, params={"q": "binod magr"})
    assert page.status_code == 200
    assert 'role="search"' in page.text and 'value="binod magr"' in page.text
    assert page.text.count('class="person"') == 1 and "Binod Magar" in page.text
    assert "1 person matches" in page.text
    filtered = web.get(url, params={"status": "deceased"})
    assert filtered.text.count('class="person"') >= 1 and "Deepak Rai" in filtered.text
    for bad in ({"status": "lost"}, {"alert": "maybe"}, {"q": "x" * 201}):
        assert web.get(url, params=bad).status_code == 422, bad
