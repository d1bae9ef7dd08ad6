"""No input gives HTTP 500: each bad value is a 4xx naming its field, and nothing is saved."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from accounts_helpers import csrf, member_of, signed_in
from fastapi.testclient import TestClient

from trace_app.domain import queries
from trace_app.domain.text import (
    MAX_LOCATION_CHARACTERS,
    MAX_NAME_CHARACTERS,
    MAX_ORIGINAL_TEXT_CHARACTERS,
    MAX_SUMMARY_CHARACTERS,
)

BIG = 2**63


def body(incident_id: str, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "incident_id": incident_id,
        "source": "Central Hospital Demo",
        "summary": "Maya Gurung admitted.",
        "original_text": "Admission note: Maya Gurung, 24, admitted, stable.",
        "reported_at": "2026-07-15T07:30:00Z",
        "references": ["CH-1"],
        "person": {"name": "Maya Gurung", "age": 24},
        "status": "admitted",
        "location": "Emergency ward",
    }
    data.update(overrides)
    return data


def raw_post(web: TestClient, text: str) -> Any:
    return web.post("/api/reports", content=text, headers={"Content-Type": "application/json"})


def totals(web: TestClient, incident_id: str) -> tuple[int, int]:
    reports = web.get(f"/api/incidents/{incident_id}/reports").json()["total"]
    people = web.get(f"/api/incidents/{incident_id}/people").json()["total"]
    return reports, people


def assert_refused(response: Any, field: str) -> None:
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    detail = response.json()["detail"]
    assert isinstance(detail, str) and field in detail, detail


@pytest.mark.parametrize("field", ["original_text", "source", "summary", "incident_id"])
def test_lone_surrogate_is_refused(web: TestClient, incident_id: str, field: str) -> None:
    before = totals(web, incident_id)
    text = json.dumps(body(incident_id)).replace(
        json.dumps(body(incident_id)[field]), '"bad \\ud800 text"', 1
    )
    assert "\\ud800" in text
    assert_refused(raw_post(web, text), field)
    assert totals(web, incident_id) == before


def test_lone_surrogate_in_person_name_is_refused(web: TestClient, incident_id: str) -> None:
    before = totals(web, incident_id)
    text = json.dumps(body(incident_id)).replace('"Maya Gurung"', '"Maya \\udfff"')
    assert_refused(raw_post(web, text), "person.name")
    assert totals(web, incident_id) == before


@pytest.mark.parametrize("age", ["1e400", "NaN", "-Infinity", "24.5"])
def test_unusable_age_is_refused(web: TestClient, incident_id: str, age: str) -> None:
    before = totals(web, incident_id)
    text = json.dumps(body(incident_id)).replace('"age": 24', f'"age": {age}')
    assert_refused(raw_post(web, text), "person.age")
    assert totals(web, incident_id) == before


@pytest.mark.parametrize("when", ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00"])
def test_reported_time_out_of_range_is_refused(
    web: TestClient, incident_id: str, when: str
) -> None:
    before = totals(web, incident_id)
    assert_refused(
        web.post("/api/reports", json=body(incident_id, reported_at=when)), "reported_at"
    )
    assert totals(web, incident_id) == before


@pytest.mark.parametrize("when", ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00"])
def test_reported_time_out_of_range_on_the_form(
    web: TestClient, incident_id: str, when: str
) -> None:
    web.get("/publish")
    before = totals(web, incident_id)
    form = {
        "csrf_token": csrf(web),
        "incident_id": incident_id,
        "source": "Central Hospital Demo",
        "summary": "s",
        "original_text": "t",
        "reported_at": when,
        "person_name": "Maya Gurung",
        "status": "seen",
    }
    response = web.post("/organizations/reports", data=form)
    assert response.status_code == 422
    assert "Reported time" in response.text
    assert totals(web, incident_id) == before


@pytest.mark.parametrize("kind", ["people", "reports"])
def test_huge_offset_is_refused(web: TestClient, incident_id: str, kind: str) -> None:
    response = web.get(f"/api/incidents/{incident_id}/{kind}", params={"offset": BIG})
    assert_refused(response, "offset")


@pytest.mark.parametrize("kind", ["people", "reports"])
def test_huge_page_number_is_refused(web: TestClient, incident_id: str, kind: str) -> None:
    response = web.get(f"/incidents/{incident_id}/{kind}", params={"page": BIG})
    assert response.status_code == 422 and "Page" in response.text


@pytest.mark.parametrize(
    ("field", "limit"),
    [
        ("summary", MAX_SUMMARY_CHARACTERS),
        ("original_text", MAX_ORIGINAL_TEXT_CHARACTERS),
        ("source", MAX_NAME_CHARACTERS),
        ("location", MAX_LOCATION_CHARACTERS),
    ],
)
def test_every_free_text_field_has_a_maximum(
    web: TestClient, incident_id: str, field: str, limit: int
) -> None:
    before = totals(web, incident_id)
    response = web.post("/api/reports", json=body(incident_id, **{field: "x" * (limit + 1)}))
    assert_refused(response, field)
    assert totals(web, incident_id) == before
    # a source is the member's own organisation: one named with the longest name publishes
    publisher = member_of(web.app, "y" * limit) if field == "source" else web
    at_limit = publisher.post("/api/reports", json=body(incident_id, **{field: "y" * limit}))
    assert at_limit.status_code == 201, at_limit.text


def test_a_900_kb_summary_is_refused(web: TestClient, incident_id: str) -> None:
    response = web.post("/api/reports", json=body(incident_id, summary="s" * 900_000))
    assert_refused(response, "summary")


def test_validation_error_never_echoes_the_input(web: TestClient, incident_id: str) -> None:
    response = web.post("/api/reports", json=body(incident_id, status="secret-status-xyz"))
    assert response.status_code == 422
    assert "secret-status-xyz" not in response.text
    assert response.json()["code"] == "invalid_body"
    assert response.json()["errors"][0]["loc"] == ["body", "status"]


def test_a_server_error_has_headers_and_an_error_id(
    sqlite_settings: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from trace_app.web.app import create_app

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("internal detail 8f3a")

    with signed_in(create_app(sqlite_settings)) as web:
        monkeypatch.setattr(queries, "list_incidents", broken)
        with caplog.at_level(logging.ERROR):
            api = web.get("/api/incidents")
            page = web.get("/")
    for response in (api, page):
        assert response.status_code == 500
        assert response.headers["x-content-type-options"] == "nosniff"
        assert "default-src 'self'" in response.headers["content-security-policy"]
        assert response.headers["cache-control"] == "no-store"
        assert "8f3a" not in response.text and "Traceback" not in response.text
    error_id = api.json()["error_id"]
    assert api.json()["code"] == "server_error" and error_id in api.json()["detail"]
    assert "error id" in page.text
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert error_id in logged and "8f3a" in logged


def test_openapi_states_the_limits(web: TestClient) -> None:
    schema = web.get("/openapi.json").json()
    publish = schema["components"]["schemas"]["ReportIn"]["properties"]
    assert publish["summary"]["maxLength"] == MAX_SUMMARY_CHARACTERS
    assert publish["original_text"]["maxLength"] == MAX_ORIGINAL_TEXT_CHARACTERS
    # the source is optional now (the member's organisation), limited when given
    given = next(s for s in publish["source"]["anyOf"] if s.get("type") == "string")
    assert given["maxLength"] == MAX_NAME_CHARACTERS and "pattern" in given
    people = schema["paths"]["/api/incidents/{incident_id}/people"]["get"]["parameters"]
    offset = next(p for p in people if p["name"] == "offset")
    assert offset["schema"]["maximum"] < BIG
    reset = schema["paths"]["/api/demo/reset"]["post"]
    assert reset["requestBody"]["required"] is True
    assert "403" in reset["responses"]


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"person_age": "ten"}, "person_age", "Age must be a whole number from 0 to 150."),
        ({"person_age": "151"}, "person_age", "Age must be a whole number from 0 to 150."),
        ({"summary": " "}, "summary", "Enter a summary and the original report text."),
        ({"person_name": " "}, "person_name", "Enter the name of the person the report is about."),
        ({"location": "bell\x07"}, "location", "Location contains a control character"),
        ({"reported_at": "soon"}, "reported_at", "Reported time must look like 2026-07-15T07:30."),
        ({"incident_id": "inc_nope"}, "incident_id", "No incident with id"),
    ],
)
def test_form_errors_are_tied_to_their_field_in_plain_words(
    web: TestClient, incident_id: str, changes: dict[str, str], field: str, message: str
) -> None:
    web.get("/publish")
    form = {
        "csrf_token": csrf(web),
        "incident_id": incident_id,
        "source": "Central Hospital Demo",
        "summary": "s",
        "original_text": "t",
        "person_name": "Maya Gurung",
        "status": "seen",
    } | changes
    before = totals(web, incident_id)
    response = web.post("/organizations/reports", data=form)
    assert response.status_code == 422
    page = response.text
    # the field names its error first (and may name its hint after it)
    assert (
        f'aria-describedby="{field}-error"' in page or f'aria-describedby="{field}-error ' in page
    )
    error = page.split(f'id="{field}-error">', 1)[1].split("</p>", 1)[0]
    assert error.startswith(message.replace("'", "&#39;")), error
    assert "Input should" not in page and "Value error" not in page
    assert totals(web, incident_id) == before


def test_the_form_takes_the_source_from_the_account(web: TestClient, incident_id: str) -> None:
    """The publish form has no source field (it shows the member's organisation); a posted
    ``source``, even one too long for any field, changes nothing."""
    page = web.get(f"/publish?incident_id={incident_id}").text
    assert 'name="source"' not in page and "Central Hospital Demo" in page
    form = {
        "csrf_token": csrf(web),
        "incident_id": incident_id,
        "source": "x" * 201,
        "summary": "s",
        "original_text": "t",
        "person_name": "Maya Gurung",
        "status": "seen",
    }
    response = web.post("/organizations/reports", data=form)
    assert response.status_code == 303, response.text
    report = web.get("/api/reports/" + response.headers["location"].split("/reports/")[1])
    assert report.json()["source"] == "Central Hospital Demo"
