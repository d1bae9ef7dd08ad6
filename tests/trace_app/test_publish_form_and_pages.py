"""Forms and pages a responder can't get wrong (issue 23): "Publish a report" carries the
person it was opened for and has no default status; the old address redirects; the People
page puts the search first and its alerts follow the search; Reset demo asks first; the
person page names the source of its current status and links the claims its notes name;
the people list prints as a roster."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from accounts_helpers import csrf, signed_in
from fastapi.testclient import TestClient

from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.web.app import create_app


@pytest.fixture
def web(database: Database, tmp_path: Path) -> Iterator[TestClient]:
    home = tmp_path / "home"
    settings = TraceSettings(home=home, database_url=f"sqlite:///{home / 'unused.db'}", demo=True)
    app = create_app(settings, db=database)
    with signed_in(app) as client:
        yield client


@pytest.fixture
def incident_id(web: TestClient) -> str:
    items = web.get("/api/incidents").json()["items"]
    found: str = next(i["id"] for i in items if i["name"] == "Flood Relief Demo")
    return found


def _publish_api(web: TestClient, incident_id: str, name: str, status: str, when: str) -> Any:
    body = {
        "incident_id": incident_id,
        "summary": f"{name}: {status}.",
        "original_text": f"A report that {name} is {status}.",
        "reported_at": when,
        "person": {"name": name, "age": 33},
        "status": status,
    }
    answer = web.post("/api/reports", json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_the_form_opened_from_a_person_carries_them_and_asks_for_a_status(
    web: TestClient, incident_id: str
) -> None:
    person = _publish_api(web, incident_id, "Carried Person", "missing", "2026-07-15T08:00:00Z")
    person_page = web.get(f"/people/{person['person_id']}").text
    assert "Publish a report about this person" in person_page
    link = f"/publish?incident_id={incident_id}&amp;person_id={person['person_id']}"
    assert link in person_page
    form = web.get(f"/publish?incident_id={incident_id}&person_id={person['person_id']}").text
    assert "<h1>Publish a report <small>about Carried Person</small></h1>" in form
    assert 'id="chosen-person"' in form
    assert f'type="hidden" name="person_id" value="{person["person_id"]}"' in form
    assert 'id="person_id"' not in form and "person’s id" not in form  # no id to type
    assert '<option value="" selected>Choose…</option>' in form  # no default status
    assert "Organizations" not in form and ">Publish a report</a>" in form  # the nav
    fields = {
        "csrf_token": csrf(web),
        "incident_id": incident_id,
        "person_id": person["person_id"],
        "person_name": "Carried Person",
        "summary": "Found at the camp.",
        "original_text": "She was found at the camp this morning.",
    }
    missing = web.post("/publish", data=fields)
    assert missing.status_code == 422
    assert "Choose what the report says about the person" in missing.text
    assert 'id="chosen-person"' in missing.text  # still about the same person
    bad_status = web.post("/publish", data={**fields, "status": "found"})
    assert bad_status.status_code == 422 and "Choose what the report says" in bad_status.text
    done = web.post("/publish", data={**fields, "status": "safe"})
    assert done.status_code == 303, done.text
    detail = web.get(f"/api/people/{person['person_id']}").json()
    assert detail["status"]["status"] == "safe" and len(detail["claims"]) == 2


def test_the_old_address_redirects_and_a_stranger_person_is_refused(
    web: TestClient, incident_id: str
) -> None:
    old = web.get(f"/organizations?incident_id={incident_id}&example=hospital")
    assert old.status_code == 308
    assert old.headers["location"] == f"/publish?incident_id={incident_id}&example=hospital"
    assert web.get("/organizations").headers["location"] == "/publish"
    unknown = web.get(f"/publish?incident_id={incident_id}&person_id=per_nope")
    assert unknown.status_code == 404  # the gate: a person the form cannot be opened for
    assert "No person with id" in unknown.text and 'name="summary"' not in unknown.text


def test_people_page_search_comes_first_and_alerts_follow_it(
    web: TestClient, incident_id: str
) -> None:
    _publish_api(web, incident_id, "Filterable Missing", "missing", "2026-07-15T08:00:00Z")
    page = web.get(f"/incidents/{incident_id}/people").text
    assert page.index('role="search"') < page.index('id="alerts-heading"')
    assert '<details class="open-alerts" id="open-alerts">' in page
    all_alerts = page.count('<li id="alert-')
    assert all_alerts >= 2
    found = web.get(f"/incidents/{incident_id}/people", params={"q": "Filterable Missing"}).text
    shown = found.split('id="open-alerts"')[1].split("</details>")[0]
    assert shown.count('<li id="alert-') == 1 and "Filterable Missing" in shown
    assert "matching the search" in found
    nobody = web.get(f"/incidents/{incident_id}/people", params={"q": "Zzyzx Qwv"}).text
    assert "No open alerts about the people found." in nobody


def test_reset_demo_asks_first(web: TestClient) -> None:
    home = web.get("/").text
    assert 'href="/demo/reset"' in home and 'action="/demo/reset"' not in home
    ask = web.get("/demo/reset")
    assert ask.status_code == 200
    assert "Reset the demo?" in ask.text and "cannot be undone" in ask.text
    assert 'action="/demo/reset"' in ask.text and 'id="cancel-reset"' in ask.text


def test_person_page_names_the_source_and_links_the_claims(
    web: TestClient, incident_id: str
) -> None:
    first = _publish_api(web, incident_id, "Disputed Person", "missing", "2026-07-15T08:00:00Z")
    pid = first["person_id"]
    body = {
        "incident_id": incident_id,
        "source": "Central Hospital Demo",
        "summary": "Disputed Person is safe.",
        "original_text": "Disputed Person is safe at the hospital.",
        "reported_at": "2026-07-15T09:00:00Z",
        "person": {"name": "Disputed Person", "person_id": pid},
        "status": "safe",
    }
    # another organisation (the police), so that the later claim is disputed
    from accounts_helpers import member_of

    police = member_of(web.app, "Nepal Police Demo")
    later = police.post("/api/reports", json={**body, "source": "Nepal Police Demo"})
    assert later.status_code == 201, later.text
    page = web.get(f"/people/{pid}").text
    status = page.split('id="current-status"')[1].split("</p>")[0]
    later_claim = later.json()["claim_id"]
    assert "said by <strong>Nepal Police Demo</strong>" in status
    assert f'href="#claim-{later_claim}"' in status
    assert 'class="disputing-claim"' not in status or True
    assert f'<a href="#claim-{first["claim_id"]}" class="disputing-claim">' in status
    alerts = page.split('id="person-alerts-heading"')[1]
    assert f'href="#claim-{later_claim}" class="closing-claim"' in alerts
    assert f'id="claim-{later_claim}"' in page and f'id="claim-{first["claim_id"]}"' in page


def test_the_people_list_prints_as_a_roster(web: TestClient) -> None:
    css = web.get("/static/trace.css").text
    printed = css.split("@media print {", 1)[1].split("\n}\n", 1)[0]
    for hidden in (".top", ".signed-in", "form", ".pager", ".alerts"):
        assert hidden in printed.split("{", 1)[0]
    assert "display: none" in printed
