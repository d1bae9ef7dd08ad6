"""The person API and page for names that reduce to a repeated short word or hold
FTS5 syntax ("Li Li", "=1+1": HTTP 500 on SQLite before, issue 38, hole 3), on both
databases; the domain's property test is ``test_search_syntax.py``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from accounts_helpers import signed_in
from fastapi.testclient import TestClient

from trace_app.domain.search import search_key
from trace_app.settings import TraceSettings
from trace_app.store.db import Database

CLINIC = "Hill Clinic Test"


@pytest.fixture
def client(database: Database, tmp_path: Path) -> Iterator[TestClient]:
    from trace_app.web.app import create_app  # the web layer, built when the test runs

    home = tmp_path / "home"
    app = create_app(
        TraceSettings(home=home, database_url=f"sqlite:///{home / 'unused.db'}", demo=True),
        db=database,
    )
    with signed_in(app, role="reviewer", organization=CLINIC, name="syntax-reviewer") as web:
        yield web


def publish(client: TestClient, incident_id: str, name: str) -> str:
    answer = client.post(
        "/api/reports",
        json={
            "incident_id": incident_id,
            "source": CLINIC,
            "summary": "Seen at the clinic.",
            "original_text": "Our nurse saw this person at the clinic.",
            "reported_at": "2026-07-15T08:00:00Z",
            "person": {"name": name, "age": 30},
            "status": "seen",
        },
    )
    assert answer.status_code == 201, answer.text
    person_id: str = answer.json()["person_id"]
    return person_id


def test_person_page_and_api_open_for_names_like_li_li(client: TestClient) -> None:
    """The reported hole: the person's API answer and page answered 500 on SQLite (one
    app for the three names: an app and a signed-in account cost about 2 s to set up)."""
    items = client.get("/api/incidents").json()["items"]
    incident_id = next(i["id"] for i in items if i["name"] == "Flood Relief Demo")
    publish(client, incident_id, "Lili")
    for name in ("Li Li", "=1+1", 'Li "Li" AND*'):
        person_id = publish(client, incident_id, name)
        api = client.get(f"/api/people/{person_id}")
        assert api.status_code == 200, (name, api.text)
        duplicates = [d["name"] for d in api.json()["possible_duplicates"]]
        assert ("Lili" in duplicates) == (search_key(name) == "li li"), (name, duplicates)
        assert client.get(f"/people/{person_id}").status_code == 200, name
        found = client.get(f"/api/incidents/{incident_id}/people", params={"q": name})
        assert found.status_code == 200, (name, found.text)
