"""Regression tests for the holes the attack walk of issue 38 found, each reproduced
through the real app (real accounts, sessions, CSRF tokens and audit trail)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from accounts_helpers import (
    PASSWORD,
    app_database,
    client_for,
    csrf,
    make_user,
    sign_in,
    signed_in,
)
from fastapi import FastAPI
from sqlalchemy import select

from trace_app.store.account_models import AuditEvent
from trace_app.web.app import create_app

OTHER_ORG = "Landslide Rescue Only"


@pytest.fixture
def app(sqlite_settings: Any) -> Iterator[FastAPI]:
    made = create_app(dataclasses.replace(sqlite_settings, publish_limit="1000/minute"))
    yield made
    made.state.db.dispose()


@pytest.fixture
def two_incidents(app: FastAPI) -> dict[str, str]:
    """The demo incident A, a second incident B with a person reported by an
    organisation that works in B only."""
    with signed_in(app) as admin:
        a = admin.get("/api/incidents").json()["items"][0]["id"]
        b = admin.post("/api/incidents", json={"name": "Landslide B"}).json()["id"]
    make_user(app_database(app), "b-reporter", "reporter", OTHER_ORG, incident_id=b)
    b_reporter = client_for(app)
    assert sign_in(b_reporter, "b-reporter").status_code == 303
    body = {
        "incident_id": b,
        "summary": "Missing since the slide.",
        "original_text": "Her brother came to the desk.",
        "person": {"name": "Secret Bistami", "age": 34},
        "status": "missing",
    }
    published = b_reporter.post("/api/reports", json=body)
    assert published.status_code == 201, published.text
    return {"a": a, "b": b, "b_person": published.json()["person_id"]}


def _audit(app: FastAPI, action: str) -> list[AuditEvent]:
    with app_database(app).sessions() as session:
        rows = session.scalars(select(AuditEvent).where(AuditEvent.action == action))
        return list(rows)


def test_1_publish_form_refuses_a_person_of_another_incident(
    app: FastAPI, two_incidents: dict[str, str]
) -> None:
    reporter = signed_in(
        app, role="reporter", organization="Central Hospital Demo", incident_id=two_incidents["a"]
    )
    page = reporter.get("/publish", params={"person_id": two_incidents["b_person"]})
    assert page.status_code == 403
    assert "Secret Bistami" not in page.text
    assert reporter.get("/publish", params={"person_id": "per_nobody"}).status_code == 404
    assert reporter.get("/publish").status_code == 200


def test_2_a_coordinator_cannot_touch_an_every_incident_admin(
    app: FastAPI, two_incidents: dict[str, str]
) -> None:
    a = two_incidents["a"]
    db = app_database(app)
    make_user(db, "coord-a", "coordinator", "Nepal Police Demo", incident_id=a)
    make_user(db, "boss", "admin", None, incident_id=None)  # every incident
    boss = client_for(app)
    assert sign_in(boss, "boss").status_code == 303
    coord = client_for(app)
    assert sign_in(coord, "coord-a").status_code == 303
    demote = coord.put(f"/api/incidents/{a}/members/boss", json={"role": "viewer"})
    assert demote.status_code == 403
    assert coord.post(f"/api/incidents/{a}/members/boss/remove", json={}).status_code == 403
    assert boss.get("/api/me").status_code == 200  # the admin's sessions go on
    assert _audit(app, "member.set") == []


def test_2_a_one_incident_change_records_the_real_earlier_role_and_ends_no_session(
    app: FastAPI, two_incidents: dict[str, str]
) -> None:
    a = two_incidents["a"]
    db = app_database(app)
    make_user(db, "watcher", "viewer", None, incident_id=None)  # a viewer of every incident
    watcher = client_for(app)
    assert sign_in(watcher, "watcher").status_code == 303
    with signed_in(app) as admin:
        changed = admin.put(
            f"/api/incidents/{a}/members/watcher",
            json={"role": "reporter", "organization": "Central Hospital Demo"},
        )
    assert changed.status_code == 200, changed.text
    (row,) = _audit(app, "member.set")
    assert row.before == {"role": "viewer", "scope": "*"}
    assert row.after is not None and row.after["role"] == "reporter"
    me = watcher.get("/api/me")  # still signed in, and the new role applies at once
    assert me.status_code == 200
    assert {"scope": a, "role": "reporter", "organization": "Central Hospital Demo"} in me.json()[
        "memberships"
    ]


def test_5_a_stranger_gets_401_before_any_content_type_check(
    app: FastAPI, two_incidents: dict[str, str]
) -> None:
    stranger = client_for(app)
    b = two_incidents["b"]
    assert stranger.post(f"/api/incidents/{b}/pfif", content=b"<x/>").status_code == 401
    plain = stranger.post("/api/reports", content=b"hello", headers={"content-type": "text/plain"})
    assert plain.status_code == 401
    with signed_in(app) as admin:
        wrong = admin.post("/api/reports", content=b"hello", headers={"content-type": "text/plain"})
        assert wrong.status_code == 415
        assert wrong.json()["code"] == "http_415"
        xml = admin.post(f"/api/incidents/{b}/pfif", json={})
        assert xml.status_code == 415


def test_6_the_current_password_check_is_throttled_and_audited(app: FastAPI) -> None:
    user = signed_in(app, role="viewer", organization=None, name="forgetful")
    statuses = []
    for _ in range(10):
        response = user.post(
            "/account/password",
            data={
                "current": "not my password at all",
                "new": "a new long passphrase 2026",
                "again": "a new long passphrase 2026",
                "csrf_token": csrf(user),
            },
        )
        statuses.append(response.status_code)
    assert statuses[:5] == [422] * 5  # TRACE_LOGIN_LIMIT: 5 a minute per account
    assert set(statuses[5:]) == {429}
    right = user.post(
        "/account/password",
        data={
            "current": PASSWORD,
            "new": "a new long passphrase 2026",
            "again": "a new long passphrase 2026",
            "csrf_token": csrf(user),
        },
    )
    assert right.status_code == 429  # the right one waits too
    failed = [r for r in _audit(app, "user.password") if r.outcome == "failed"]
    assert len(failed) == 5


def test_8_no_one_takes_on_another_incidents_organisation(
    app: FastAPI, two_incidents: dict[str, str]
) -> None:
    a = two_incidents["a"]
    db = app_database(app)
    make_user(db, "coord-8", "coordinator", "Nepal Police Demo", incident_id=a)
    coord = client_for(app)
    assert sign_in(coord, "coord-8").status_code == 303
    taken = coord.put(
        f"/api/incidents/{a}/members/coord-8",
        json={"role": "coordinator", "organization": OTHER_ORG},
    )
    assert taken.status_code == 403
    assert "other incidents" in taken.json()["detail"]
    # a new name is theirs to bring in
    fresh = coord.put(
        f"/api/incidents/{a}/members/coord-8",
        json={"role": "coordinator", "organization": "Charikot Youth Club"},
    )
    assert fresh.status_code == 200, fresh.text
    # an import cannot publish under it either: PFIF author_name, shelter-list source
    pfif = (
        '<pfif:pfif xmlns:pfif="http://zesty.ca/pfif/1.4">'
        "<pfif:person><pfif:person_record_id>x.example/p1</pfif:person_record_id>"
        "<pfif:source_date>2026-07-15T07:30:00Z</pfif:source_date>"
        "<pfif:full_name>Imported Person</pfif:full_name>"
        "<pfif:note><pfif:note_record_id>x.example/n1</pfif:note_record_id>"
        f"<pfif:author_name>{OTHER_ORG}</pfif:author_name>"
        "<pfif:source_date>2026-07-15T07:30:00Z</pfif:source_date>"
        "<pfif:status>believed_missing</pfif:status><pfif:text>Missing.</pfif:text>"
        "</pfif:note></pfif:person></pfif:pfif>"
    )
    with signed_in(app, role="coordinator", organization="Nepal Police Demo", incident_id=a) as c:
        refused = c.post(
            f"/api/incidents/{a}/pfif",
            content=pfif.encode(),
            headers={"content-type": "application/xml"},
        )
    assert refused.status_code == 422, refused.text
    assert "other incidents" in str(refused.json()["summary"])


def test_9_a_token_planted_before_sign_in_is_worthless_after(app: FastAPI) -> None:
    make_user(app_database(app), "victim", "admin", "Central Hospital Demo")
    browser = client_for(app)
    browser.cookies.set("trace_csrf", "planted-by-the-attacker")
    assert sign_in(browser, "victim").status_code == 303  # the login form's own token
    planted = browser.post("/logout", data={"csrf_token": "planted-by-the-attacker"})
    assert planted.status_code == 403
    page = browser.get("/account")
    bound = csrf(browser)
    assert bound != "planted-by-the-attacker" and bound in page.text
    assert browser.post("/logout", data={"csrf_token": bound}).status_code == 303
    # a new sign-in gives a new token
    assert sign_in(browser, "victim").status_code == 303
    assert csrf(browser) != bound


def test_10_api_docs_come_from_this_server(app: FastAPI) -> None:
    with signed_in(app) as admin:
        docs = admin.get("/docs")
        assert docs.status_code == 200
        assert "cdn." not in docs.text and "<script>" not in docs.text
        policy = docs.headers["content-security-policy"]
        assert "unsafe-inline" not in policy and "https:" not in policy
        assert admin.get("/docs/assets/swagger-ui-bundle.js").status_code == 200
        assert admin.get("/static/api_docs.js").status_code == 200


def test_11_refusals_are_audited_at_a_bounded_rate(app: FastAPI) -> None:
    viewer = signed_in(app, role="viewer", organization=None, name="curious")
    for _ in range(15):
        assert viewer.get("/api/audit").status_code == 403
    rows = _audit(app, "access.refused")
    assert len(rows) == 10  # TRACE_REFUSAL_AUDIT_LIMIT: 10 a minute per principal
    assert {r.actor_name for r in rows} == {"curious"}
    assert {r.object_id for r in rows} == {"GET /api/audit"}


def test_a_form_token_of_any_characters_is_refused_not_a_server_error(app: FastAPI) -> None:
    """Found while reading the diff: the token was compared as text, which Python refuses
    for non-ASCII characters (TypeError, a 500)."""
    with signed_in(app) as user:
        for sent in ("é", "\u00ff" * 43, "токен"):
            assert user.post("/logout", data={"csrf_token": sent}).status_code == 403
        headers = {
            "X-CSRF-Token": "\u00e9t\u00e9".encode("latin-1"),
            "content-type": b"application/x-www-form-urlencoded",
        }
        assert user.post("/logout", content=b"", headers=headers).status_code == 403
