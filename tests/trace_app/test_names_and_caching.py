"""Names: bidi controls refused, NFC before matching, joiners kept. Report times not in
the future. Pages and API answers with personal data are never cached."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from accounts_helpers import csrf
from fastapi.testclient import TestClient

RLO = "\u202e"


def body(incident_id: str, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "incident_id": incident_id,
        "source": "Central Hospital Demo",
        "summary": "Admitted.",
        "original_text": "Admission note.",
        "person": {"name": "Maya Gurung", "age": 24},
        "status": "admitted",
        "location": "Emergency ward",
    }
    data.update(overrides)
    return data


def people(web: TestClient, incident_id: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = web.get(
        f"/api/incidents/{incident_id}/people", params={"limit": 500}
    ).json()["items"]
    return items


@pytest.mark.parametrize("char", ["\u202a", "\u202b", "\u202c", "\u202d", RLO, "\u2066", "\u2069"])
@pytest.mark.parametrize("field", ["person", "source", "location"])
def test_bidi_controls_are_refused_in_names(
    web: TestClient, incident_id: str, field: str, char: str
) -> None:
    before = len(people(web, incident_id))
    value = f"Maya {char}gnuruG"
    data = body(incident_id, person={"name": value}) if field == "person" else None
    data = data or body(incident_id, **{field: value})
    response = web.post("/api/reports", json=data)
    assert response.status_code == 422
    answer = response.json()
    assert answer["code"] == "invalid_report"
    assert "override or isolate" in answer["detail"] and field in answer["detail"]
    assert len(people(web, incident_id)) == before


def test_bidi_control_on_the_form_is_tied_to_the_name_field(
    web: TestClient, incident_id: str
) -> None:
    web.get("/publish")
    response = web.post(
        "/organizations/reports",
        data={
            "csrf_token": csrf(web),
            "incident_id": incident_id,
            "source": "Central Hospital Demo",
            "summary": "s",
            "original_text": "t",
            "person_name": f"Maya {RLO}gnuruG",
            "status": "seen",
        },
    )
    assert response.status_code == 422
    assert 'id="person_name-error"' in response.text
    assert "override or isolate" in response.text
    assert 'aria-describedby="person_name-error"' in response.text


def test_names_are_nfc_before_matching(web: TestClient, incident_id: str) -> None:
    decomposed = "Zoe\u0308 Tamang"
    precomposed = "Zoë Tamang"
    assert decomposed != precomposed
    first = web.post("/api/reports", json=body(incident_id, person={"name": decomposed})).json()
    second = web.post("/api/reports", json=body(incident_id, person={"name": precomposed})).json()
    assert first["person"]["id"] == second["person"]["id"]
    assert first["person"]["name"] == precomposed == unicodedata.normalize("NFC", decomposed)


@pytest.mark.parametrize(
    "name", ["क\u094d\u200dष Sharma", "می\u200cخواهم Rahimi", "\u0dc1\u0dca\u200d\u0dbb\u0dd3"]
)
def test_zero_width_joiners_are_kept(web: TestClient, incident_id: str, name: str) -> None:
    created = web.post("/api/reports", json=body(incident_id, person={"name": name}))
    assert created.status_code == 201, created.text
    assert created.json()["person"]["name"] == unicodedata.normalize("NFC", name)
    assert ("\u200d" in name) == ("\u200d" in created.json()["person"]["name"])
    assert ("\u200c" in name) == ("\u200c" in created.json()["person"]["name"])


def test_a_report_time_in_the_future_is_refused(web: TestClient, incident_id: str) -> None:
    ahead = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    refused = web.post("/api/reports", json=body(incident_id, reported_at=ahead))
    assert refused.status_code == 422 and "reported_at is in the future" in refused.json()["detail"]
    skew = (datetime.now(UTC) + timedelta(minutes=2)).isoformat()
    assert web.post("/api/reports", json=body(incident_id, reported_at=skew)).status_code == 201


def test_a_report_time_in_the_future_is_refused_on_the_form(
    web: TestClient, incident_id: str
) -> None:
    web.get("/publish")
    ahead = (datetime.now(UTC) + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    response = web.post(
        "/organizations/reports",
        data={
            "csrf_token": csrf(web),
            "incident_id": incident_id,
            "source": "Central Hospital Demo",
            "summary": "s",
            "original_text": "t",
            "person_name": "Maya Gurung",
            "reported_at": ahead,
            "status": "seen",
        },
    )
    assert response.status_code == 422
    assert 'id="reported_at-error"' in response.text and "in the future" in response.text


def test_personal_data_is_never_cached(web: TestClient, incident_id: str) -> None:
    report = web.get(f"/api/incidents/{incident_id}/reports").json()["items"][0]["id"]
    for path in (
        "/",
        f"/incidents/{incident_id}/people",
        f"/incidents/{incident_id}/reports",
        f"/reports/{report}",
        "/publish",
        "/api/incidents",
        f"/api/incidents/{incident_id}/people",
        f"/api/reports/{report}",
        "/api/ledger",
        "/api/reports/rep_nope",
    ):
        assert web.get(path).headers.get("cache-control") == "no-store", path
    assert web.get("/static/trace.css").headers.get("cache-control") != "no-store"
