"""The edge: Host names, forwarded headers, the publish limit, bounded uploads, strict
types, and spreadsheet formulas in what is written out."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from accounts_helpers import app_database, client_for, csrf, make_user, sign_in, signed_in
from fastapi import FastAPI

from trace_app.interchange.formulas import neutralize
from trace_app.web.app import create_app


def _app(settings: Any, **changes: Any) -> FastAPI:
    return create_app(dataclasses.replace(settings, **changes))


@pytest.fixture
def app(sqlite_settings: Any) -> Iterator[FastAPI]:
    made = create_app(sqlite_settings)
    yield made
    made.state.db.dispose()


def test_an_unknown_host_header_is_refused(app: FastAPI) -> None:
    client = signed_in(app)
    assert client.get("/api/incidents").status_code == 200
    rebinding = client.get("/api/incidents", headers={"host": "attacker.example"})
    assert rebinding.status_code == 400
    assert client_for(app, base_url="http://evil.example").get("/login").status_code == 400


def test_allowed_hosts_come_from_the_settings(sqlite_settings: Any) -> None:
    app = _app(sqlite_settings, allowed_hosts=("trace.example.org",))
    assert client_for(app, base_url="http://trace.example.org").get("/login").status_code == 200
    assert client_for(app).get("/login").status_code == 400  # localhost is not listed now
    app.state.db.dispose()


def _throttled_after(app: FastAPI, headers: dict[str, str], attempts: int) -> int:
    """How many failed sign-ins from one client pass before the address is throttled."""
    client = client_for(app)
    for n in range(attempts):
        response = client.post(
            "/login",
            data={"name": f"name-{n}", "password": "x" * 12, "csrf_token": _csrf(client)},
            headers=headers(n) if callable(headers) else headers,
        )
        if response.status_code == 429:
            return n
    return attempts


def _csrf(client: Any) -> str:
    return csrf(client)


def test_a_spoofed_forwarded_for_changes_nothing_without_a_trusted_proxy(
    sqlite_settings: Any,
) -> None:
    app = _app(sqlite_settings, login_limit_address="3/minute")
    # a new X-Forwarded-For on every try would be a new address if it were believed
    passed = _throttled_after(app, lambda n: {"x-forwarded-for": f"10.0.0.{n}"}, 6)  # type: ignore[arg-type]
    assert passed == 3
    app.state.db.dispose()


def test_a_trusted_proxy_forwards_the_real_client(sqlite_settings: Any) -> None:
    # the TestClient's peer is "testclient"; trust it as the proxy
    app = _app(sqlite_settings, login_limit_address="3/minute", trusted_proxies=("*",))
    passed = _throttled_after(app, lambda n: {"x-forwarded-for": f"10.0.0.{n}"}, 6)  # type: ignore[arg-type]
    assert passed == 6  # six different clients behind the proxy
    make_user(app_database(app), "via-proxy", "viewer", "Camp")
    client = client_for(app)
    response = client.post(
        "/login",
        data={"name": "via-proxy", "password": "correct horse battery staple", "next": "/"},
        headers={
            "x-forwarded-for": "203.0.113.9",
            "x-forwarded-proto": "https",
            "x-csrf-token": _csrf(client),
        },
    )
    assert response.status_code == 303
    assert "Secure" in response.headers["set-cookie"]  # the proxy said HTTPS
    app.state.db.dispose()


def test_publishing_is_limited_per_account(sqlite_settings: Any) -> None:
    app = _app(sqlite_settings, publish_limit="3/minute")
    client = signed_in(app, role="reporter", organization="Central Hospital Demo")
    incident_id = client.get("/api/incidents").json()["items"][0]["id"]
    body = {
        "incident_id": incident_id,
        "summary": "Seen.",
        "original_text": "Seen at the camp by our nurse.",
        "person": {"name": "Limit Person"},
        "status": "seen",
    }
    codes = [client.post("/api/reports", json=body).status_code for _ in range(4)]
    assert codes == [201, 201, 201, 429]
    other = signed_in(app, role="reporter", organization="Central Hospital Demo")
    assert other.post("/api/reports", json=body).status_code == 201  # per account
    app.state.db.dispose()


def test_age_true_is_not_an_age(app: FastAPI) -> None:
    client = signed_in(app)
    incident_id = client.get("/api/incidents").json()["items"][0]["id"]
    body = {
        "incident_id": incident_id,
        "summary": "Seen.",
        "original_text": "Seen at the camp.",
        "person": {"name": "Bool Age", "age": True},
        "status": "seen",
    }
    refused = client.post("/api/reports", json=body)
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["loc"][-1] == "age"


def test_an_oversized_pfif_upload_is_refused_while_it_streams(sqlite_settings: Any) -> None:
    app = _app(sqlite_settings, pfif_max_bytes=64 * 1024)
    client = signed_in(app)
    incident_id = client.get("/api/incidents").json()["items"][0]["id"]

    def chunks() -> Iterator[bytes]:
        for _ in range(1500):  # 1.5 MiB with no Content-Length, past the 1 MiB body limit
            yield b"<!-- " + b"x" * 1014 + b" -->\n"

    response = client.post(
        f"/api/incidents/{incident_id}/pfif",
        content=chunks(),
        headers={"content-type": "application/xml"},
    )
    assert response.status_code == 413
    assert response.json()["code"] == "http_413"  # counted as it streamed
    app.state.db.dispose()


def test_a_pfif_upload_past_the_import_limit_saves_nothing(sqlite_settings: Any) -> None:
    app = _app(sqlite_settings, pfif_max_bytes=64 * 1024)
    client = signed_in(app)
    incident_id = client.get("/api/incidents").json()["items"][0]["id"]
    people = client.get(f"/api/incidents/{incident_id}/people").json()["total"]
    body = b"<!-- " + b"x" * (200 * 1024) + b" -->"
    response = client.post(
        f"/api/incidents/{incident_id}/pfif",
        content=body,
        headers={"content-type": "application/xml"},
    )
    assert response.status_code == 413
    assert response.json()["code"] == "pfif_too_large"
    assert client.get(f"/api/incidents/{incident_id}/people").json()["total"] == people
    app.state.db.dispose()


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+1", "'+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("Sunita Rai", "Sunita Rai"),
        ("", ""),
        ("a=b", "a=b"),
    ],
)
def test_formulas_are_neutralised(value: str, written: str) -> None:
    assert neutralize(value) == written


def test_the_pfif_export_writes_no_formula(app: FastAPI) -> None:
    client = signed_in(app, organization="=cmd|' /C calc'!A0")
    incident_id = client.get("/api/incidents").json()["items"][0]["id"]
    body = {
        "incident_id": incident_id,
        "summary": "Seen.",
        "original_text": "=1+1 seen at the camp",
        "person": {"name": "@Formula Person"},
        "status": "seen",
        "location": "-Camp 3",
    }
    assert client.post("/api/reports", json=body).status_code == 201
    exported = client.get(f"/api/incidents/{incident_id}/pfif").text
    assert "<pfif:full_name>'@Formula Person</pfif:full_name>" in exported
    assert "<pfif:text>'=1+1 seen at the camp</pfif:text>" in exported
    assert "<pfif:last_known_location>'-Camp 3</pfif:last_known_location>" in exported
    assert "<pfif:author_name>'=cmd|&apos; /C calc&apos;!A0</pfif:author_name>" in exported or (
        "<pfif:author_name>'=cmd|' /C calc'!A0</pfif:author_name>" in exported
    )
    assert ">=" not in exported and ">@" not in exported and ">+" not in exported


def test_sign_in_page_says_when_there_are_no_accounts(app: FastAPI) -> None:
    page = client_for(app).get("/login")
    assert "no accounts yet" in page.text
    assert "trace user create NAME --role admin" in page.text
    make_user(app_database(app), "first-admin", "admin")
    assert "no accounts yet" not in client_for(app).get("/login").text
    signed = client_for(app)
    assert sign_in(signed, "first-admin").status_code == 303
    home = signed.get("/")
    assert "Signed in as" in home.text and "first-admin (admin)" in home.text
