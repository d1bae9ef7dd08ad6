"""Real accounts for tests: users made through the accounts module (real Argon2id hashes),
signed in through the real login form, and real bearer tokens.

``signed_in(app, role=...)`` is a TestClient on ``http://localhost`` (an allowed host) whose
cookie jar holds a real session for a new user of that role.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.datastructures import Headers

from trace_app.accounts import tokens
from trace_app.accounts.users import NewMembership, create_user, get_user
from trace_app.domain.audit import Actor, require_audit
from trace_app.store.db import Database
from trace_app.web.security import expected_token

PASSWORD = "correct horse battery staple"
BASE_URL = "http://localhost"
TEST_OPERATOR = Actor.operator("tests")
# Every permission there is: an admin of every incident, publishing as this organisation.
ADMIN_ORGANIZATION = "Central Hospital Demo"


def make_user(
    db: Database,
    name: str,
    role: str,
    organization: str | None = None,
    incident_id: str | None = None,
    password: str = PASSWORD,
) -> None:
    with require_audit(db.sessions()) as session:
        create_user(
            session, TEST_OPERATOR, name, password, NewMembership(role, organization, incident_id)
        )
        session.commit()


def make_token(db: Database, user: str, scopes: list[str], expires_days: int | None = None) -> str:
    with require_audit(db.sessions()) as session:
        _token, secret = tokens.create(
            session, TEST_OPERATOR, get_user(session, user), "test", scopes, expires_days
        )
        session.commit()
    return secret


def csrf(client: Any) -> str:
    """The form token a page of this client would carry: signed in, bound to the session
    cookie (trace_app.web.security.expected_token); before that, the ``trace_csrf``
    cookie the first page set."""
    if "trace_csrf" not in client.cookies and "trace_session" not in client.cookies:
        client.get("/login")
    cookie = "; ".join(f"{name}={value}" for name, value in client.cookies.items())
    token = expected_token(Headers({"cookie": cookie}))
    assert token is not None
    return token


def sign_in(client: TestClient, name: str, password: str = PASSWORD) -> Any:
    response = client.post(
        "/login",
        data={"name": name, "password": password, "next": "/", "csrf_token": csrf(client)},
        follow_redirects=False,
    )
    return response


def client_for(app: FastAPI, **kwargs: Any) -> TestClient:
    kwargs.setdefault("follow_redirects", False)
    kwargs.setdefault("base_url", BASE_URL)
    return TestClient(app, **kwargs)


def app_database(app: FastAPI) -> Database:
    db = app.state.db
    assert isinstance(db, Database)
    return db


_counter = 0


def signed_in(
    app: FastAPI,
    role: str = "admin",
    organization: str | None = ADMIN_ORGANIZATION,
    incident_id: str | None = None,
    name: str | None = None,
    **client_options: Any,
) -> TestClient:
    """A client signed in as a new user of ``role`` (not entered: the caller's ``with``
    runs the app's lifespan). ``client_options`` go to the TestClient (``follow_redirects``,
    ``client=(address, port)``, ``base_url``, ``headers``)."""
    global _counter
    _counter += 1
    name = name or f"{role}-{_counter}"
    make_user(app_database(app), name, role, organization, incident_id)
    client = client_for(app, **client_options)
    response = sign_in(client, name)
    assert response.status_code == 303, response.text
    return client


# the name some tests use when they pass client options
signed_in_with = signed_in


def member_of(
    app: FastAPI, organization: str, role: str = "reporter", **options: Any
) -> TestClient:
    """A client signed in as a member of ``organization`` (every incident), made once per
    app, organisation and role: reporters publish for their own organisation only."""
    members: dict[tuple[str, str], TestClient] | None = getattr(app.state, "test_members", None)
    if members is None:
        members = app.state.test_members = {}
    key = (organization, role)
    if key not in members:
        members[key] = signed_in_with(app, role=role, organization=organization, **options)
    return members[key]
