"""Sign-in, sessions and tokens as an attacker would try them: fixation, revocation,
timeouts, throttling, enumeration, expired and revoked tokens, tokens in URLs."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from accounts_helpers import (
    PASSWORD,
    app_database,
    client_for,
    csrf,
    make_token,
    make_user,
    sign_in,
    signed_in,
)
from fastapi import FastAPI
from sqlalchemy import select, update

from trace_app.accounts import passwords
from trace_app.accounts.sessions import COOKIE
from trace_app.store.account_models import AuditEvent, WebSession
from trace_app.web.accounts.routes import LOGIN_FAILED
from trace_app.web.app import create_app


@pytest.fixture
def app(sqlite_settings: Any) -> Iterator[FastAPI]:
    made = create_app(sqlite_settings)
    yield made
    made.state.db.dispose()


def _sessions(app: FastAPI) -> list[WebSession]:
    with app_database(app).sessions() as session:
        return list(session.scalars(select(WebSession)))


def test_sign_in_sets_a_new_httponly_session_cookie(app: FastAPI) -> None:
    make_user(app_database(app), "rita", "viewer", "Camp")
    client = client_for(app)
    planted = "attacker-chosen-session-id-" + "x" * 20
    client.cookies.set(COOKIE, planted)  # session fixation: a cookie set before sign-in
    assert client.get("/api/me").status_code == 401
    response = sign_in(client, "rita")
    assert response.status_code == 303
    header = next(h for h in response.headers.get_list("set-cookie") if h.startswith(COOKIE))
    assert "HttpOnly" in header and "SameSite=lax" in header and "Path=/" in header
    assert "Secure" not in header  # plain http here
    issued = next(c.value for c in client.cookies.jar if c.name == COOKIE and c.value != planted)
    assert len(issued) >= 43
    # the database holds the cookie's hash, never the id itself
    stored = [row.id_hash for row in _sessions(app)]
    assert issued not in stored and len(stored) == 1
    me = client.get("/api/me").json()
    assert me["user"] == "rita" and me["via"] == "session"


def test_the_cookie_is_secure_over_https(app: FastAPI) -> None:
    make_user(app_database(app), "sam", "viewer", "Camp")
    client = client_for(app, base_url="https://localhost")
    response = sign_in(client, "sam")
    header = next(h for h in response.headers.get_list("set-cookie") if h.startswith(COOKIE))
    assert "Secure" in header


def test_logout_deletes_the_session_row(app: FastAPI) -> None:
    client = signed_in(app, role="viewer", organization="Camp")
    cookie = client.cookies[COOKIE]
    assert client.get("/api/me").status_code == 200
    out = client.post("/logout", data={"csrf_token": csrf(client)})
    assert out.status_code == 303 and out.headers["location"] == "/login?signed_out=1"
    assert _sessions(app) == []
    thief = client_for(app)
    thief.cookies.set(COOKIE, cookie)  # the old cookie, replayed
    assert thief.get("/api/me").status_code == 401


def test_a_password_change_ends_the_other_sessions_only(app: FastAPI) -> None:
    make_user(app_database(app), "ana", "reviewer", "Camp")
    laptop, phone = client_for(app), client_for(app)
    assert sign_in(laptop, "ana").status_code == 303
    assert sign_in(phone, "ana").status_code == 303
    new = "a different long passphrase"
    changed = laptop.post(
        "/account/password",
        data={"current": PASSWORD, "new": new, "again": new, "csrf_token": csrf(laptop)},
    )
    assert changed.status_code == 303
    assert laptop.get("/api/me").status_code == 200
    assert phone.get("/api/me").status_code == 401
    fresh = client_for(app)
    assert sign_in(fresh, "ana").status_code == 401  # the old password
    assert sign_in(fresh, "ana", new).status_code == 303


def test_a_short_password_is_refused(app: FastAPI) -> None:
    client = signed_in(app, role="viewer", organization="Camp")
    short = "eleven char"
    refused = client.post(
        "/account/password",
        data={"current": PASSWORD, "new": short, "again": short, "csrf_token": csrf(client)},
    )
    assert refused.status_code == 422
    assert "at least 12 characters" in refused.text


def test_a_role_change_ends_the_users_sessions(app: FastAPI) -> None:
    from trace_app.accounts.users import NewMembership, get_user, set_membership
    from trace_app.domain.audit import Actor, require_audit

    client = signed_in(app, role="reviewer", organization="Camp", name="bo")
    with require_audit(app_database(app).sessions()) as session:
        set_membership(
            session, Actor.operator("t"), get_user(session, "bo"), NewMembership("viewer", "Camp")
        )
        session.commit()
    assert client.get("/api/me").status_code == 401
    again = client_for(app)
    assert sign_in(again, "bo").status_code == 303
    assert again.get("/api/me").json()["memberships"][0]["role"] == "viewer"


def test_idle_and_absolute_timeouts(app: FastAPI) -> None:
    idle = signed_in(app, role="viewer", organization="Camp")
    db = app_database(app)
    minutes = app.state.settings.session_idle_minutes
    with db.sessions() as session:
        for row in session.scalars(select(WebSession)):
            row.last_seen_at = row.last_seen_at - timedelta(minutes=minutes + 1)
        session.commit()
    assert idle.get("/api/me").status_code == 401
    assert _sessions(app) == []  # the expired row is deleted
    worn = signed_in(app, role="viewer", organization="Camp")
    with db.sessions() as session:
        session.execute(update(WebSession).values(expires_at=WebSession.created_at))
        session.commit()
    assert worn.get("/api/me").status_code == 401


def test_every_failure_reads_the_same_and_is_audited(app: FastAPI) -> None:
    make_user(app_database(app), "known", "viewer", "Camp")
    client = client_for(app)
    unknown = sign_in(client, "nobody-like-this", "whatever password")
    wrong = sign_in(client, "known", "wrong password here")
    assert unknown.status_code == wrong.status_code == 401
    assert LOGIN_FAILED in unknown.text and LOGIN_FAILED in wrong.text
    assert unknown.text.replace("nobody-like-this", "known") == wrong.text.replace(
        "nobody-like-this", "known"
    )
    with app_database(app).sessions() as session:
        rows = list(session.scalars(select(AuditEvent).where(AuditEvent.action == "login")))
    assert [r.outcome for r in rows] == ["failed", "failed"]
    assert all("password" not in str(r.after) for r in rows)


def test_sign_in_is_throttled_per_account_and_per_address(sqlite_settings: Any) -> None:
    settings = dataclasses.replace(
        sqlite_settings, login_limit="3/minute", login_limit_address="5/minute"
    )
    app = create_app(settings)
    make_user(app_database(app), "target", "viewer", "Camp")
    client = client_for(app)
    for _ in range(3):
        assert sign_in(client, "target", "guess guess guess").status_code == 401
    blocked = sign_in(client, "target")  # even the right password waits now
    assert blocked.status_code == 429
    assert int(blocked.headers["retry-after"]) >= 1
    # other names from the same address: the address has 2 failures left
    assert sign_in(client, "someone-else", "guess guess guess").status_code == 401
    assert sign_in(client, "third-name", "guess guess guess").status_code == 401
    assert sign_in(client, "fourth-name", "guess guess guess").status_code == 429
    app.state.db.dispose()


def test_tokens_scopes_revocation_and_expiry(app: FastAPI) -> None:
    db = app_database(app)
    make_user(db, "feed", "coordinator", "Camp")
    reader = make_token(db, "feed", ["read", "pfif:read"])
    client = client_for(app)
    auth = {"Authorization": f"Bearer {reader}"}
    incidents = client.get("/api/incidents", headers=auth)
    assert incidents.status_code == 200
    incident_id = incidents.json()["items"][0]["id"]
    assert client.get(f"/api/incidents/{incident_id}/pfif", headers=auth).status_code == 200
    # a scope the token lacks, though its user's role has it
    refused = client.post(f"/api/incidents/{incident_id}/pfif", headers=auth, content=b"<x/>")
    assert refused.status_code in (403, 415)
    refused = client.post(
        f"/api/incidents/{incident_id}/pfif",
        headers={**auth, "content-type": "application/xml"},
        content=b"<x/>",
    )
    assert refused.status_code == 403
    assert refused.json()["code"] == "forbidden"
    # never in a URL
    assert client.get(f"/api/incidents?access_token={reader}").status_code == 401
    assert client.get(f"/api/incidents?token={reader}").status_code == 401
    # revoked
    from trace_app.accounts import tokens
    from trace_app.domain.audit import Actor, require_audit
    from trace_app.store.account_models import ApiToken

    with require_audit(db.sessions()) as session:
        token_id = session.scalars(select(ApiToken.id)).one()
        tokens.revoke(session, Actor.operator("t"), token_id)
        session.commit()
    gone = client.get("/api/incidents", headers=auth)
    assert gone.status_code == 401
    assert gone.headers["www-authenticate"].startswith("Bearer")
    # expired
    expiring = make_token(db, "feed", ["read"], expires_days=1)
    with db.sessions() as session:
        session.execute(update(ApiToken).values(expires_at=ApiToken.created_at))
        session.commit()
    assert (
        client.get("/api/incidents", headers={"Authorization": f"Bearer {expiring}"}).status_code
        == 401
    )
    # a made-up token
    assert (
        client.get("/api/incidents", headers={"Authorization": "Bearer trc_x"}).status_code == 401
    )


def test_a_token_cannot_exceed_its_users_role(app: FastAPI) -> None:
    from trace_app.accounts.users import AccountError

    db = app_database(app)
    make_user(db, "viewer-bot", "viewer", "Camp")
    with pytest.raises(AccountError, match="does not allow: pfif:read"):
        make_token(db, "viewer-bot", ["read", "pfif:read"])
    with pytest.raises(AccountError, match="unknown scope"):
        make_token(db, "viewer-bot", ["everything"])


def test_the_openapi_schema_declares_both_schemes(app: FastAPI) -> None:
    client = signed_in(app)
    schema = client.get("/openapi.json").json()
    schemes = schema["components"]["securitySchemes"]
    assert schemes["bearerToken"] == {
        "type": "http",
        "scheme": "bearer",
        "description": schemes["bearerToken"]["description"],
    }
    assert schemes["sessionCookie"]["in"] == "cookie"
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert operation.get("security"), f"{method} {path} declares no security"


def test_the_shipped_password_cost_is_rfc_9106(app: FastAPI) -> None:
    assert passwords.DEFAULT_COST == passwords.Argon2Cost(3, 65536, 4)
    stored = passwords.hash_password("twelve chars ok")
    assert stored.startswith("$argon2id$")
    assert passwords.verify_password(stored, "twelve chars ok")
    assert not passwords.verify_password(stored, "twelve chars no")
    assert not passwords.verify_password("not a hash", "twelve chars ok")
    with pytest.raises(passwords.PasswordRuleError):
        passwords.hash_password("short")
