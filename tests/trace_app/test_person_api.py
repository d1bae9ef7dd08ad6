"""The person API and page: POST /api/reports' person_id, GET /api/people/{id}, links.

Runs on SQLite and PostgreSQL (the app is built on the ``database`` fixture).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from accounts_helpers import csrf, member_of, signed_in
from fastapi.testclient import TestClient

from trace_app.domain.person_view import StatusClaim, current_status
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.store.models import ClaimStatus
from trace_app.web.app import create_app

CLINIC = "Hill Clinic Test"
REVIEWER = "clinic-reviewer"


@pytest.fixture
def client(database: Database, tmp_path: Path) -> Iterator[TestClient]:
    home = tmp_path / "home"
    settings = TraceSettings(home=home, database_url=f"sqlite:///{home / 'unused.db'}", demo=True)
    # a reviewer of the clinic: publishes for it and decides duplicates
    app = create_app(settings, db=database)
    with signed_in(app, role="reviewer", organization=CLINIC, name=REVIEWER) as web:
        yield web


@pytest.fixture
def incident(client: TestClient) -> str:
    items = client.get("/api/incidents").json()["items"]
    found: str = next(i["id"] for i in items if i["name"] == "Flood Relief Demo")
    return found


def report(incident_id: str, name: str, age: int | None, **extra: Any) -> dict[str, Any]:
    person: dict[str, Any] = {"name": name, "age": age}
    person.update(extra.pop("person", {}))
    data: dict[str, Any] = {
        "incident_id": incident_id,
        "source": extra.pop("source", CLINIC),
        "summary": f"{name} at the clinic.",
        "original_text": f"Our nurse saw {name} at the clinic.",
        "reported_at": extra.pop("reported_at", "2026-07-15T08:00:00Z"),
        "person": person,
        "status": extra.pop("status", "seen"),
    }
    data.update(extra)
    return data


def post(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    """Published by a member of the body's source (the clinic's reviewer, or a reporter of
    another organisation: a member publishes for their own organisation only)."""
    publisher = client if body["source"] == CLINIC else member_of(client.app, body["source"])
    answer = publisher.post("/api/reports", json=body)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def test_publish_returns_the_person_id_it_used(client: TestClient, incident: str) -> None:
    first = post(client, report(incident, "Kamala Test", 40))
    again = post(client, report(incident, "kamala test", 41))
    other = post(client, report(incident, "Kamala Test", 9))
    assert first["person_id"] == again["person_id"] == first["person"]["id"]
    assert other["person_id"] != first["person_id"]
    chosen = post(client, report(incident, "K. Test", 9, person={"person_id": first["person_id"]}))
    assert chosen["person_id"] == first["person_id"]


def test_wrong_person_id_is_a_typed_error(client: TestClient, incident: str) -> None:
    unknown = client.post(
        "/api/reports", json=report(incident, "Kamala Test", 40, person={"person_id": "per_nope"})
    )
    assert unknown.status_code == 404 and unknown.json()["code"] == "not_found"
    bad = client.post(
        "/api/reports", json=report(incident, "Kamala Test", 40, person={"person_id": "a b"})
    )
    assert bad.status_code == 422
    blank = client.post(
        "/api/reports", json=report(incident, "Kamala Test", 40, person={"alternate_names": [" "]})
    )
    assert blank.status_code == 422 and blank.json()["code"] == "invalid_report"
    assert "blank" in blank.json()["detail"]


def test_person_api_shows_everything(client: TestClient, incident: str) -> None:
    first = post(
        client,
        report(
            incident,
            "Sunita Rai",
            30,
            status="missing",
            reported_at="2026-07-15T08:00:00Z",
            person={"alternate_names": ["सुनिता राई"]},
        ),
    )
    pid = first["person_id"]
    post(
        client,
        report(
            incident,
            "Sunita Rai",
            30,
            status="safe",
            source="Camp Test",
            reported_at="2026-07-15T10:00:00Z",
        ),
    )
    look_alike = post(client, report(incident, "Sunit\u0430 Rai", 30))
    person = client.get(f"/api/people/{pid}")
    assert person.status_code == 200, person.text
    data = person.json()
    assert data["name"] == "Sunita Rai" and data["alternate_names"] == ["सुनिता राई"]
    assert data["age"] == 30
    assert [c["status"] for c in data["claims"]] == ["missing", "safe"]
    assert data["status"]["status"] == "safe"
    assert data["status"]["disputed_by"] == [data["claims"][0]["id"]]
    assert [c["source"] for c in data["claims"]] == ["Hill Clinic Test", "Camp Test"]
    assert all(c["investigation"] is None for c in data["claims"])
    assert [a["state"] for a in data["alerts"]] == ["closed"]
    (dup,) = data["possible_duplicates"]
    assert dup["person_id"] == look_alike["person_id"]
    # the Latin name looks the same; the Devanagari alternate name reads the same
    assert [r["code"] for r in dup["reasons"]] == ["confusable_characters", "transliteration"]
    assert client.get("/api/people/per_nope").status_code == 404


def test_link_decisions_over_the_api(client: TestClient, incident: str) -> None:
    a = post(client, report(incident, "Maya Tamang", 30))["person_id"]
    b = post(client, report(incident, "Maya Tamnag", 31))["person_id"]
    assert [
        d["person_id"] for d in client.get(f"/api/people/{a}").json()["possible_duplicates"]
    ] == [b]
    decided = client.post(
        f"/api/people/{a}/links",
        json={"other_person_id": b, "decision": "different", "note": "Different mothers."},
    )
    assert decided.status_code == 201, decided.text
    link = decided.json()
    assert link["decision"] == "different" and link["recorded_by"] == REVIEWER
    assert link["current"] and link["other_person_id"] == b
    # shown on both people, no longer offered
    for me, other in ((a, b), (b, a)):
        data = client.get(f"/api/people/{me}").json()
        assert data["possible_duplicates"] == []
        assert [(link["other_person_id"], link["decision"]) for link in data["links"]] == [
            (other, "different")
        ]
    # reversed
    same = client.post(
        f"/api/people/{b}/links",
        json={"other_person_id": a, "decision": "same", "note": "Camp checked the card."},
    )
    assert same.status_code == 201
    data = client.get(f"/api/people/{a}").json()
    assert [link["decision"] for link in data["links"]] == ["same"]
    assert [(x["decision"], x["current"]) for x in data["link_history"]] == [
        ("same", True),
        ("different", False),
    ]
    assert [p["id"] for p in data["same_people"]] == [b]
    assert data["same_people"][0]["claims"]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"other_person_id": "per_nope", "decision": "same", "note": "x"}, 404, "not_found"),
        ({"other_person_id": "SELF", "decision": "same", "note": "x"}, 422, "invalid_input"),
        ({"other_person_id": "OTHER", "decision": "undecided", "note": "x"}, 422, "invalid_input"),
        ({"other_person_id": "OTHER", "decision": "merge", "note": "x"}, 422, "invalid_body"),
        ({"other_person_id": "OTHER", "decision": "same", "note": "  "}, 422, "invalid_body"),
        ({"other_person_id": "OTHER", "decision": "same"}, 422, "invalid_body"),
    ],
)
def test_bad_link_requests(
    client: TestClient, incident: str, body: dict[str, str], status: int, code: str
) -> None:
    a = post(client, report(incident, "Gita Test", 30))["person_id"]
    b = post(client, report(incident, "Gita Tset", 30))["person_id"]
    filled = {k: {"SELF": a, "OTHER": b}.get(v, v) for k, v in body.items()}
    answer = client.post(f"/api/people/{a}/links", json=filled)
    assert answer.status_code == status, answer.text
    assert answer.json()["code"] == code
    assert client.get(f"/api/people/{a}").json()["link_history"] == []
    missing = client.post(
        "/api/people/per_nope/links", json={"other_person_id": b, "decision": "same", "note": "x"}
    )
    assert missing.status_code == 404


def test_person_page_and_its_forms(client: TestClient, incident: str) -> None:
    a = post(client, report(incident, "Asha Gurung", 30))
    b = post(client, report(incident, "Asha Gurung\u200b", 30))
    page = client.get(f"/people/{a['person_id']}")
    assert page.status_code == 200
    assert "Asha Gurung" in page.text and "invisible_characters" in page.text
    assert f'id="duplicate-{b["person_id"]}"' in page.text
    # linked from the report page and the People page
    assert f'href="/people/{a["person_id"]}"' in client.get(f"/reports/{a['id']}").text
    people = client.get(f"/incidents/{incident}/people", params={"q": "asha gurung"}).text
    assert f'href="/people/{a["person_id"]}"' in people
    token = csrf(client)
    form = {"other_person_id": b["person_id"], "decision": "different", "note": "Two cousins"}
    assert client.post(f"/people/{a['person_id']}/links", data=form).status_code == 403
    done = client.post(f"/people/{a['person_id']}/links", data={**form, "csrf_token": token})
    assert done.status_code == 303
    after = client.get(done.headers["location"]).text
    assert 'id="decided"' in after and f'id="duplicate-{b["person_id"]}"' not in after
    assert f"recorded by {REVIEWER}" in after and "Two cousins" in after
    # shown on the other person too, with a form to reverse
    other = client.get(f"/people/{b['person_id']}").text
    assert "Two cousins" in other and f'id="same-{a["person_id"]}"' in other
    blank = client.post(
        f"/people/{a['person_id']}/links", data={**form, "note": " ", "csrf_token": token}
    )
    assert blank.status_code == 422
    assert client.get("/people/per_nope").status_code == 404


def test_publish_form_takes_a_chosen_person(client: TestClient, incident: str) -> None:
    a = post(client, report(incident, "Dil Test", 50))
    old = client.get(
        "/organizations", params={"incident_id": incident, "person_id": a["person_id"]}
    )
    assert old.status_code == 308 and old.headers["location"].startswith("/publish?")
    form = client.get(old.headers["location"])
    assert f'value="{a["person_id"]}"' in form.text and 'value="Dil Test"' in form.text
    token = csrf(client)
    sent = client.post(
        "/organizations/reports",
        data={
            "csrf_token": token,
            "incident_id": incident,
            "source": "Hill Clinic Test",
            "summary": "Seen again.",
            "original_text": "Seen again at the clinic.",
            "person_name": "Dil B. Test",
            "person_age": "",
            "person_alternate_names": "Dil Bahadur Test\n",
            "person_id": a["person_id"],
            "status": "seen",
        },
    )
    assert sent.status_code == 303, sent.text
    data = client.get(f"/api/people/{a['person_id']}").json()
    assert data["alternate_names"] == ["Dil B. Test", "Dil Bahadur Test"]
    assert len(data["claims"]) == 2
    wrong = client.post(
        "/organizations/reports",
        data={
            "csrf_token": token,
            "incident_id": incident,
            "source": "Hill Clinic Test",
            "summary": "Seen again.",
            "original_text": "Seen again at the clinic.",
            "person_name": "Dil Test",
            "person_id": "per_nope",
            "status": "seen",
        },
    )
    assert wrong.status_code == 422 and "No person with id" in wrong.text


T0 = datetime(2026, 7, 15, 8, 0, tzinfo=UTC)


def claim(
    cid: str, status: ClaimStatus, hours: float, position: int, source: str = "A"
) -> StatusClaim:
    return StatusClaim(cid, status, T0 + timedelta(hours=hours), position, source)


def test_status_rule_latest_moment_wins() -> None:
    assert current_status([]).status is None
    # published later but about an earlier moment: does not undo the newer news
    late_old = current_status(
        [claim("safe", ClaimStatus.SAFE, 5, 1), claim("missing", ClaimStatus.MISSING, 1, 2)]
    )
    assert late_old.status is ClaimStatus.SAFE and late_old.claim_id == "safe"
    # the same moment: the later publication wins
    tie = current_status(
        [claim("a", ClaimStatus.SEEN, 1, 1), claim("b", ClaimStatus.ADMITTED, 1, 2)]
    )
    assert tie.claim_id == "b"
    # deceased is not special: later news shows
    after = current_status(
        [claim("d", ClaimStatus.DECEASED, 1, 1), claim("s", ClaimStatus.SEEN, 30, 2)]
    )
    assert after.status is ClaimStatus.SEEN and after.disputed_by == ()


def test_status_rule_marks_disputes_from_other_sources() -> None:
    result = current_status(
        [
            claim("m", ClaimStatus.MISSING, 0, 1, source="Police"),
            claim("same-source", ClaimStatus.MISSING, 1, 2, source="Camp"),
            claim("old", ClaimStatus.DECEASED, -10, 3, source="Radio"),
            claim("s", ClaimStatus.SAFE, 2, 4, source="Camp"),
        ]
    )
    assert result.status is ClaimStatus.SAFE
    assert result.disputed_by == ("m",)
