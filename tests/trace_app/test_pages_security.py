"""Pages, escaping, cross-site protection, body limits and headers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from accounts_helpers import BASE_URL, client_for, csrf, member_of, signed_in, signed_in_with
from fastapi.testclient import TestClient

from trace_app.settings import TraceSettings
from trace_app.web.app import create_app

MESSAGE = "Enter a summary and the original report text."
SCRIPT = '<script>alert("x")</script><b onmouseover="steal()">bold</b>'


def form(incident_id: str, token: str | None, **overrides: str) -> dict[str, str]:
    data = {
        "incident_id": incident_id,
        "source": "Tatopani Relief Camp Demo",
        "summary": "Registered at camp",
        "original_text": "Registration desk entry for Pasang Test, 31.",
        "reported_at": "2026-07-16T10:15",
        "references": "line 1\nline 2",
        "person_name": "Pasang Test",
        "person_age": "31",
        "status": "safe",
        "location": "Camp",
    }
    if token is not None:
        data["csrf_token"] = token
    data.update(overrides)
    return data


def token(web: TestClient) -> str:
    web.get("/")
    value = csrf(web)
    assert value
    return value


def report_total(web: TestClient, incident_id: str) -> int:
    total: int = web.get(f"/api/incidents/{incident_id}/reports").json()["total"]
    return total


def test_every_page_renders(web: TestClient, incident_id: str) -> None:
    report_id = web.get(f"/api/incidents/{incident_id}/reports").json()["items"][0]["id"]
    for url in (
        "/",
        "/publish",
        f"/incidents/{incident_id}/people",
        f"/incidents/{incident_id}/reports",
        f"/reports/{report_id}",
    ):
        response = web.get(url)
        assert response.status_code == 200, url
        assert "Trace" in response.text
    assert web.get("/reports/rep_nope").status_code == 404


def test_report_view_has_investigate_slot(web: TestClient, incident_id: str) -> None:
    report_id = web.get(f"/api/incidents/{incident_id}/reports").json()["items"][0]["id"]
    page = web.get(f"/reports/{report_id}").text
    assert '<section id="investigate-panel"' in page


def test_publish_through_form_then_people(web: TestClient, incident_id: str) -> None:
    response = web.post("/organizations/reports", data=form(incident_id, token(web)))
    assert response.status_code == 303
    report_id = response.headers["location"].split("/reports/")[1].split("?")[0]
    report = web.get(f"/api/reports/{report_id}").json()
    assert report["references"] == ["line 1", "line 2"]
    assert report["reported_at"].startswith("2026-07-16T10:15")
    people = web.get(f"/incidents/{incident_id}/people").text
    assert "Pasang Test" in people


def test_empty_form_shows_message_keeps_values_saves_nothing(
    web: TestClient, incident_id: str
) -> None:
    before = report_total(web, incident_id)
    response = web.post(
        "/organizations/reports",
        data=form(incident_id, token(web), summary="  ", original_text="kept <text>"),
    )
    assert response.status_code == 422
    assert MESSAGE in response.text
    assert "kept &lt;text&gt;</textarea>" in response.text
    assert 'value="Pasang Test"' in response.text
    assert report_total(web, incident_id) == before


def test_form_bad_age(web: TestClient, incident_id: str) -> None:
    response = web.post(
        "/organizations/reports", data=form(incident_id, token(web), person_age="ten")
    )
    assert (
        response.status_code == 422 and "Age must be a whole number from 0 to 150." in response.text
    )


def test_hospital_example_fills_form(web: TestClient) -> None:
    page = web.get("/publish", params={"example": "hospital"}).text
    # the source is the member's organisation, shown (the admin publishes for the hospital)
    assert "<strong>Central Hospital Demo</strong>" in page and 'name="source"' not in page
    assert 'value="Maya Gurung"' in page
    assert '<option value="admitted" selected>' in page


def test_script_in_report_is_escaped_everywhere(web: TestClient, incident_id: str) -> None:
    evil = "Evil <i>Org</i>"  # an organisation's name is escaped too: its reporter publishes
    created = (
        member_of(web.app, evil)
        .post(
            "/api/reports",
            json={
                "incident_id": incident_id,
                "source": evil,
                "summary": SCRIPT,
                "original_text": SCRIPT,
                "person": {"name": "<img src=x onerror=alert(1)>"},
                "status": "missing",
                "location": SCRIPT,
                "references": [SCRIPT],
            },
        )
        .json()
    )
    pages = [
        web.get(f"/reports/{created['id']}").text,
        web.get(f"/incidents/{incident_id}/people").text,
        web.get(f"/incidents/{incident_id}/reports", params={"page": 1}).text,
    ]
    for html in pages:
        assert "<script>alert" not in html
        assert "<img src=x" not in html
        assert "<i>Org</i>" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in pages[0]
    assert "&lt;img src=x onerror=alert(1)&gt;" in pages[1]


def test_form_post_without_or_with_wrong_token_is_refused(
    web: TestClient, incident_id: str
) -> None:
    before = report_total(web, incident_id)
    token(web)
    assert web.post("/organizations/reports", data=form(incident_id, None)).status_code == 403
    wrong = web.post("/organizations/reports", data=form(incident_id, "forged"))
    assert wrong.status_code == 403
    assert web.post("/demo/reset", data={"csrf_token": "forged"}).status_code == 403
    assert report_total(web, incident_id) == before


def test_token_without_cookie_is_refused(sqlite_settings: TraceSettings, tmp_path: Path) -> None:
    app = create_app(sqlite_settings)
    with signed_in(app) as first, signed_in(app) as attacker:
        stolen = token(first)
        attacker.cookies.delete("trace_csrf")  # signed in, but without the token's cookie
        response = attacker.post("/demo/reset", data={"csrf_token": stolen})
        assert response.status_code == 403


def test_cross_site_requests_are_refused(web: TestClient, incident_id: str) -> None:
    good = token(web)
    for headers in (
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
    ):
        response = web.post("/demo/reset", data={"csrf_token": good}, headers=headers)
        assert response.status_code == 403, headers
        api = web.post("/api/demo/reset", json={}, headers=headers)
        assert api.status_code == 403
    same = web.post(
        "/demo/reset",
        data={"csrf_token": good},
        headers={"Origin": BASE_URL, "Sec-Fetch-Site": "same-origin"},
    )
    assert same.status_code == 303


def test_htmx_header_token_is_accepted(web: TestClient) -> None:
    response = web.post("/demo/reset", headers={"X-CSRF-Token": token(web)})
    assert response.status_code == 303


def test_api_requires_json(web: TestClient, incident_id: str) -> None:
    response = web.post("/api/reports", data={"incident_id": incident_id})
    assert response.status_code == 415
    assert web.post("/api/demo/reset").status_code == 415


def test_oversized_requests_get_413(tmp_path: Path) -> None:
    home = tmp_path / "h"
    settings = TraceSettings(
        home=home, database_url=f"sqlite:///{home / 'trace.db'}", max_body_bytes=4096
    )
    with signed_in(create_app(settings)) as web:
        big = {"summary": "x" * 5000}
        response = web.post("/api/reports", json=big)
        assert response.status_code == 413
        assert "too large" in response.json()["detail"]
        html = web.post("/organizations/reports", data={"original_text": "y" * 5000})
        assert html.status_code == 413 and "too large" in html.text

        def chunks() -> Any:
            for _ in range(10):
                yield b"z" * 1000

        streamed = web.post(
            "/api/reports", content=chunks(), headers={"Content-Type": "application/json"}
        )
        assert streamed.status_code == 413


def test_security_headers(web: TestClient) -> None:
    response = web.get("/")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    # the CSRF cookie comes with a browser's first page (the login page)
    with client_for(web.app) as fresh:
        first = fresh.get("/login")
    assert "HttpOnly" in first.headers["set-cookie"]
    assert "SameSite=Strict" in first.headers["set-cookie"]
    # pages use no inline scripts or styles (the CSP would block them)
    assert not re.search(r"<script(?![^>]*\bsrc=)", response.text)
    assert " style=" not in response.text


def test_static_htmx_is_vendored(web: TestClient) -> None:
    response = web.get("/static/htmx.min.js")
    assert response.status_code == 200 and 'version:"2.' in response.text
    assert web.get("/static/htmx-LICENSE.txt").status_code == 200


def test_people_pager(web: TestClient, incident_id: str) -> None:
    pager = member_of(web.app, "Pager Source")
    for i in range(60):
        pager.post(
            "/api/reports",
            json={
                "incident_id": incident_id,
                "source": "Pager Source",
                "summary": f"s{i}",
                "original_text": "t",
                "person": {"name": f"Zz Pager {i:02d}"},
                "status": "seen",
            },
        )
    first = web.get(f"/incidents/{incident_id}/people").text
    second = web.get(f"/incidents/{incident_id}/people", params={"page": 2}).text
    assert "Page 1 of 2" in first and 'rel="next"' in first
    assert "Zz Pager 59" in second and "Zz Pager 59" not in first


def test_empty_database_when_seeding_is_off(tmp_path: Path) -> None:
    home = tmp_path / "h"
    settings = TraceSettings(home=home, database_url=f"sqlite:///{home / 'trace.db'}", demo=False)
    with signed_in_with(create_app(settings), follow_redirects=True) as web:
        assert web.get("/api/incidents").json() == {"items": []}
        assert "No incident yet" in web.get("/").text
