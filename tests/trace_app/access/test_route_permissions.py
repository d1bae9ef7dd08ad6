"""Built from the app's own route list: every route names its permission, nothing that
changes state answers a stranger or too small a role, and every state change writes
exactly one audit row (on SQLite and on PostgreSQL).

A new route fails here until it names a permission (``needs``, ``SIGNED_IN`` or
``PUBLIC``); a new state-changing route fails until it has an example below.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from accounts_helpers import client_for, csrf, make_user, sign_in, signed_in
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient
from sqlalchemy import select

from trace_app.store.account_models import AuditEvent
from trace_app.store.db import Database
from trace_app.web.app import create_app
from trace_app.web.auth import PUBLIC_MARK

REPO = Path(__file__).resolve().parents[3]
SHIPPED_RUNS = REPO / "demo" / "recorded_investigations.json"
MEMBER = "member-target"
PUBLIC_ROUTES = {("GET", "/login"), ("POST", "/login"), ("GET", "/healthz")}
# the enquirer's mailed links (issue 41): the token in the path is the credential
PUBLIC_ROUTES |= {
    (method, f"/subscriptions/{purpose}/{{token}}")
    for method in ("GET", "POST")
    for purpose in ("confirm", "unsubscribe")
}
UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}


def _marks(dependant: Any) -> list[str]:
    found = []
    for sub in dependant.dependencies:
        mark = getattr(sub.call, "trace_permission", None)
        if mark is not None:
            found.append(mark)
        found += _marks(sub)
    return found


def _routes(app: FastAPI) -> list[tuple[str, str, Any]]:
    """Every (method, path, route) the app answers, routers included (the static files
    are a mount, not a route)."""
    return [
        (method, context.path, context)
        for context in iter_route_contexts(app.routes)
        if context.methods
        for method in sorted(context.methods - {"HEAD"})
    ]


@pytest.fixture
def app(db_url: str, sqlite_settings: Any) -> Iterator[FastAPI]:
    settings = dataclasses.replace(
        sqlite_settings,
        database_url=db_url,
        recorded_investigations=SHIPPED_RUNS,
        publish_limit="10000/minute",
    )
    made = create_app(settings)
    make_user(made.state.db, MEMBER, "viewer", "Some Camp")  # whom coordinators place
    yield made
    made.state.db.dispose()


def test_every_route_names_exactly_one_permission(app: FastAPI) -> None:
    routes = _routes(app)
    assert len(routes) >= 30
    for method, path, route in routes:
        marks = _marks(route.dependant)
        assert len(set(marks)) == 1, f"{method} {path} names {marks or 'no permission'}"
        if marks[0] == PUBLIC_MARK:
            assert (method, path) in PUBLIC_ROUTES, f"{method} {path} is public"


def _ids(client: TestClient) -> dict[str, str]:
    incident_id = client.get("/api/incidents").json()["items"][0]["id"]
    queue = client.get(f"/api/incidents/{incident_id}/reviews").json()["items"]
    reports = client.get(f"/api/incidents/{incident_id}/reports").json()["items"]
    alerts = client.get(f"/api/incidents/{incident_id}/alerts").json()["items"]
    closed = client.get(f"/api/incidents/{incident_id}/alerts?state=closed").json()["items"]
    people = client.get(f"/api/incidents/{incident_id}/people").json()["items"]
    return {
        "incident_id": incident_id,
        # a report awaiting review while there is one (decisions use it up)
        "report_id": queue[0]["report_id"] if queue else reports[0]["id"],
        "alert_id": alerts[0]["id"],
        "closed_alert_id": closed[0]["id"],
        "person_id": people[0]["id"],
        "other_person_id": people[1]["id"],
    }


def _path(path: str, ids: dict[str, str]) -> str:
    for name, value in {**ids, "user_name": MEMBER}.items():
        path = path.replace("{" + name + "}", value)
    return path


def _report_body(ids: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {
        "incident_id": ids["incident_id"],
        "summary": "Seen at the school shelter.",
        "original_text": "Our volunteer spoke with her at the school shelter this morning.",
        "person": {"name": "Access Test Person", "age": 30},
        "status": "seen",
        **extra,
    }


PFIF = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<pfif:pfif xmlns:pfif="http://zesty.ca/pfif/1.4">'
    "<pfif:person><pfif:person_record_id>test.example/p1</pfif:person_record_id>"
    "<pfif:entry_date>2026-07-15T08:00:00Z</pfif:entry_date>"
    "<pfif:full_name>Imported Access Person</pfif:full_name></pfif:person></pfif:pfif>"
)

Call = Callable[[TestClient, dict[str, str]], Any]

SHELTER_LIST = b"full_name,age\nAccess Shelter Person,44\n"


def _upload(client: TestClient, ids: dict[str, str]) -> Any:
    """The Import page's upload (multipart: its token is a form field in the body)."""
    form = {
        "csrf_token": csrf(client),
        "incident_id": ids["incident_id"],
        "kind": "csv",
        "source_name": "Access Test Camp",
    }
    return client.post("/import", data=form, files={"file": ("list.csv", SHELTER_LIST)})


def _confirm_upload(client: TestClient, ids: dict[str, str]) -> Any:
    """Confirm the upload this client previewed (the preview is another route's row: the
    audit rows are counted from here, so the upload goes first, out of the count)."""
    token = ids.get("token", "A" * 32)  # none previewed: the permission check answers first
    return client.post(f"/import/{token}/confirm", data={"csrf_token": csrf(client)})


def _previewed(client: TestClient, ids: dict[str, str]) -> dict[str, str]:
    sent = _upload(client, ids)
    assert sent.status_code == 303, sent.text[:300]
    return {**ids, "token": sent.headers["location"].rsplit("/", 1)[1]}


def _form(client: TestClient, path: str, data: dict[str, str]) -> Any:
    return client.post(path, data={**data, "csrf_token": csrf(client)})


def _mailed_link(client: TestClient, ids: dict[str, str], purpose: str) -> str:
    """The path of a fresh mailed link (issue 41) for a new inquiry about a person."""
    from datetime import UTC, datetime

    from trace_app.notifications import links
    from trace_app.store.notification_models import Inquiry, LinkPurpose

    db: Database = client.app.state.db  # type: ignore[attr-defined]
    with db.session() as session:
        inquiry = Inquiry(
            id=f"inq_{purpose}_{datetime.now(UTC).timestamp():.0f}",
            incident_id=ids["incident_id"],
            person_id=ids["person_id"],
            enquirer_name="Anil",
            email="anil@example.org",
            consent_at=datetime.now(UTC),
        )
        session.add(inquiry)
        session.flush()
        token = links.issue(session, inquiry.id, LinkPurpose(purpose))
    return f"/subscriptions/{purpose}/{token}"


def _stored(client: TestClient, ids: dict[str, str], what: str) -> str:
    """The id of a fresh inquiry, follow-up or webhook of the incident (issue 41), stored
    directly (no audit row: the example's call writes the one counted)."""
    from datetime import UTC, datetime

    from trace_app.store.notification_models import FollowUp, Inquiry, WebhookEndpoint
    from trace_app.store.types import new_id

    db: Database = client.app.state.db  # type: ignore[attr-defined]
    now = datetime.now(UTC)
    made: Inquiry | FollowUp | WebhookEndpoint
    with db.session() as session:
        if what == "inquiry":
            made = Inquiry(
                id=new_id("inq"),
                incident_id=ids["incident_id"],
                person_id=ids["person_id"],
                enquirer_name="Anil",
                email="anil@example.org",
                consent_at=now,
            )
        elif what == "follow_up":
            made = FollowUp(
                id=new_id("fup"), incident_id=ids["incident_id"], person_id=ids["person_id"]
            )
        else:
            made = WebhookEndpoint(
                id=new_id("whk"),
                incident_id=ids["incident_id"],
                url="http://127.0.0.1:9/hook",
                secret="whsec_dGVzdA==",
            )
        session.add(made)
        return made.id


# One successful call per state-changing route (as an admin who publishes for the
# hospital), with the audit action it must record. Keys are (method, route path).
EXAMPLES: dict[tuple[str, str], tuple[Call, str]] = {
    ("POST", "/api/reports"): (
        lambda c, ids: c.post("/api/reports", json=_report_body(ids)),
        "report.publish",
    ),
    ("POST", "/organizations/reports"): (
        lambda c, ids: _form(
            c,
            "/organizations/reports",
            {
                "incident_id": ids["incident_id"],
                "summary": "Seen at the school.",
                "original_text": "Our nurse saw him at the school.",
                "person_name": "Form Access Person",
                "status": "seen",
            },
        ),
        "report.publish",
    ),
    ("POST", "/publish"): (
        lambda c, ids: _form(
            c,
            "/publish",
            {
                "incident_id": ids["incident_id"],
                "summary": "Seen at the camp.",
                "original_text": "Our volunteer saw her at the camp.",
                "person_id": ids["person_id"],
                "person_name": "Form Access Person",
                "status": "seen",
            },
        ),
        "report.publish",
    ),
    ("POST", "/incidents/{incident_id}/duplicates/decisions"): (
        lambda c, ids: _form(
            c,
            f"/incidents/{ids['incident_id']}/duplicates/decisions",
            {
                "person_id": ids["person_id"],
                "other_person_id": ids["other_person_id"],
                "decision": "different",
                "note": "n",
            },
        ),
        "link.decide",
    ),
    ("PUT", "/api/incidents/{incident_id}/time-zone"): (
        lambda c, ids: c.put(
            f"/api/incidents/{ids['incident_id']}/time-zone", json={"time_zone": "Asia/Kathmandu"}
        ),
        "incident.time_zone",
    ),
    ("POST", "/incidents/{incident_id}/time-zone"): (
        lambda c, ids: _form(
            c, f"/incidents/{ids['incident_id']}/time-zone", {"time_zone": "Asia/Kathmandu"}
        ),
        "incident.time_zone",
    ),
    ("POST", "/api/alerts/{alert_id}/close"): (
        lambda c, ids: c.post(
            f"/api/alerts/{ids['alert_id']}/close", json={"reason": "found_safe", "note": "found"}
        ),
        "alert.close",  # the claim it publishes is part of the close: one row
    ),
    ("POST", "/alerts/{alert_id}/close"): (
        lambda c, ids: _form(
            c,
            f"/alerts/{ids['alert_id']}/close",
            {"reason": "duplicate", "note": "found", "confirm": "yes"},
        ),
        "alert.close",
    ),
    ("POST", "/api/alerts/{alert_id}/reopen"): (
        lambda c, ids: c.post(
            f"/api/alerts/{ids['closed_alert_id']}/reopen", json={"note": "closed by mistake"}
        ),
        "alert.reopen",
    ),
    ("POST", "/alerts/{alert_id}/reopen"): (
        lambda c, ids: _form(
            c,
            f"/alerts/{ids['closed_alert_id']}/reopen",
            {"note": "closed by mistake", "confirm": "yes"},
        ),
        "alert.reopen",
    ),
    ("POST", "/api/people/{person_id}/links"): (
        lambda c, ids: c.post(
            f"/api/people/{ids['person_id']}/links",
            json={"other_person_id": ids["other_person_id"], "decision": "different", "note": "n"},
        ),
        "link.decide",
    ),
    ("POST", "/people/{person_id}/links"): (
        lambda c, ids: _form(
            c,
            f"/people/{ids['person_id']}/links",
            {"other_person_id": ids["other_person_id"], "decision": "different", "note": "n"},
        ),
        "link.decide",
    ),
    ("POST", "/api/reports/{report_id}/review"): (
        lambda c, ids: c.post(
            f"/api/reports/{ids['report_id']}/review",
            json={"decision": "relay_confirmed", "note": "checked with the camp"},
        ),
        "review.decide",
    ),
    ("POST", "/reports/{report_id}/review"): (
        lambda c, ids: _form(
            c,
            f"/reports/{ids['report_id']}/review",
            {"decision": "relay_confirmed", "note": "checked"},
        ),
        "review.decide",
    ),
    ("POST", "/api/reports/{report_id}/assignment"): (
        lambda c, ids: c.post(f"/api/reports/{ids['report_id']}/assignment", json={"mine": True}),
        "review.assign",
    ),
    ("POST", "/reports/{report_id}/assignment"): (
        lambda c, ids: _form(c, f"/reports/{ids['report_id']}/assignment", {"mine": "1"}),
        "review.assign",
    ),
    ("POST", "/api/reports/{report_id}/investigate"): (
        lambda c, ids: c.post(
            f"/api/reports/{ids['report_id']}/investigate", json={"passphrase": "typed"}
        ),
        "investigation.check",
    ),
    ("POST", "/reports/{report_id}/investigate"): (
        lambda c, ids: _form(c, f"/reports/{ids['report_id']}/investigate", {"passphrase": "x"}),
        "investigation.check",
    ),
    ("POST", "/api/incidents/{incident_id}/pfif"): (
        lambda c, ids: c.post(
            f"/api/incidents/{ids['incident_id']}/pfif",
            content=PFIF.encode(),
            headers={"content-type": "application/xml"},
        ),
        "pfif.import",
    ),
    ("GET", "/api/incidents/{incident_id}/pfif"): (
        lambda c, ids: c.get(f"/api/incidents/{ids['incident_id']}/pfif"),
        "pfif.export",
    ),
    ("GET", "/api/incidents/{incident_id}/people.csv"): (
        lambda c, ids: c.get(f"/api/incidents/{ids['incident_id']}/people.csv"),
        "people.export",
    ),
    ("GET", "/export/file"): (
        lambda c, ids: c.get(
            "/export/file", params={"incident_id": ids["incident_id"], "format": "people-csv"}
        ),
        "people.export",
    ),
    ("POST", "/import"): (
        lambda c, ids: _upload(c, ids),
        "import.preview",
    ),
    ("POST", "/import/{token}/confirm"): (
        lambda c, ids: _confirm_upload(c, ids),
        "csv.import",
    ),
    ("POST", "/account/password"): (
        lambda c, ids: _form(
            c,
            "/account/password",
            {
                "current": "correct horse battery staple",
                "new": "another long enough passphrase",
                "again": "another long enough passphrase",
            },
        ),
        "user.password",
    ),
    ("POST", "/logout"): (lambda c, ids: _form(c, "/logout", {}), "logout"),
    ("POST", "/login"): (
        lambda c, ids: c.post(
            "/login",
            data={"name": "nobody-here", "password": "x" * 12, "csrf_token": csrf(c)},
        ),
        "login",
    ),
    ("POST", "/api/incidents"): (
        lambda c, ids: c.post("/api/incidents", json={"name": "Landslide Access Test"}),
        "incident.create",
    ),
    ("PUT", "/api/incidents/{incident_id}/members/{user_name}"): (
        lambda c, ids: c.put(
            f"/api/incidents/{ids['incident_id']}/members/{MEMBER}",
            json={"role": "reviewer", "organization": "Some Camp"},
        ),
        "member.set",
    ),
    ("POST", "/api/incidents/{incident_id}/members/{user_name}/remove"): (
        lambda c, ids: c.post(
            f"/api/incidents/{ids['incident_id']}/members/{MEMBER}/remove", json={}
        ),
        "member.remove",
    ),
    ("POST", "/incidents/new"): (
        lambda c, ids: _form(
            c, "/incidents/new", {"name": "Landslide Form Test", "time_zone": "Asia/Kathmandu"}
        ),
        "incident.create",
    ),
    ("POST", "/incidents/{incident_id}/members"): (
        lambda c, ids: _form(
            c,
            f"/incidents/{ids['incident_id']}/members",
            {"user": MEMBER, "role": "reviewer", "organization": "Some Camp"},
        ),
        "member.set",
    ),
    ("POST", "/incidents/{incident_id}/members/{user_name}/remove"): (
        lambda c, ids: _form(c, f"/incidents/{ids['incident_id']}/members/{MEMBER}/remove", {}),
        "member.remove",
    ),
    ("POST", "/api/demo/reset"): (lambda c, ids: c.post("/api/demo/reset", json={}), "demo.reset"),
    ("POST", "/subscriptions/confirm/{token}"): (
        lambda c, ids: _form(c, _mailed_link(c, ids, "confirm"), {}),
        "inquiry.email_confirmed",
    ),
    ("POST", "/subscriptions/unsubscribe/{token}"): (  # RFC 8058 one-click: no form token
        lambda c, ids: c.post(
            _mailed_link(c, ids, "unsubscribe"),
            content=b"List-Unsubscribe=One-Click",
            headers={"content-type": "application/x-www-form-urlencoded"},
        ),
        "inquiry.unsubscribed",
    ),
    ("POST", "/api/incidents/{incident_id}/inquiries"): (
        lambda c, ids: c.post(
            f"/api/incidents/{ids['incident_id']}/inquiries",
            json={
                "person_id": ids["person_id"],
                "enquirer": {"name": "Anil", "relationship": "brother", "phone": "+977 1234"},
                "consent": True,
            },
        ),
        "inquiry.create",
    ),
    ("POST", "/api/inquiries/{inquiry_id}/erase"): (
        lambda c, ids: c.post(f"/api/inquiries/{_stored(c, ids, 'inquiry')}/erase", json={}),
        "inquiry.erase",
    ),
    ("POST", "/api/inquiries/{inquiry_id}/close"): (
        lambda c, ids: c.post(f"/api/inquiries/{_stored(c, ids, 'inquiry')}/close", json={}),
        "inquiry.close",
    ),
    ("POST", "/api/incidents/{incident_id}/follow-ups/{follow_up_id}/done"): (
        lambda c, ids: c.post(
            f"/api/incidents/{ids['incident_id']}/follow-ups/{_stored(c, ids, 'follow_up')}/done",
            json={},
        ),
        "follow_up.done",
    ),
    ("PUT", "/api/incidents/{incident_id}/contact-retention"): (
        lambda c, ids: c.put(
            f"/api/incidents/{ids['incident_id']}/contact-retention", json={"days": 30}
        ),
        "incident.contact_retention",
    ),
    ("POST", "/api/incidents/{incident_id}/webhooks"): (
        lambda c, ids: c.post(
            f"/api/incidents/{ids['incident_id']}/webhooks", json={"url": "https://example.org/h"}
        ),
        "webhook.register",
    ),
    ("POST", "/api/incidents/{incident_id}/webhooks/{webhook_id}/remove"): (
        lambda c, ids: c.post(
            f"/api/incidents/{ids['incident_id']}/webhooks/{_stored(c, ids, 'webhook')}/remove",
            json={},
        ),
        "webhook.remove",
    ),
    # the same changes from the pages (issue 41: web/*/page_routes.py)
    ("POST", "/incidents/{incident_id}/inquiries"): (
        lambda c, ids: _form(
            c,
            f"/incidents/{ids['incident_id']}/inquiries",
            {
                "person_id": ids["person_id"],
                "enquirer_name": "Anil",
                "relationship": "brother",
                "phone": "+977 1234",
                "consent": "yes",
            },
        ),
        "inquiry.create",
    ),
    ("POST", "/inquiries/{inquiry_id}/erase"): (
        lambda c, ids: _form(c, f"/inquiries/{_stored(c, ids, 'inquiry')}/erase", {}),
        "inquiry.erase",
    ),
    ("POST", "/inquiries/{inquiry_id}/close"): (
        lambda c, ids: _form(c, f"/inquiries/{_stored(c, ids, 'inquiry')}/close", {}),
        "inquiry.close",
    ),
    ("POST", "/incidents/{incident_id}/follow-ups/{follow_up_id}/done"): (
        lambda c, ids: _form(
            c,
            f"/incidents/{ids['incident_id']}/follow-ups/{_stored(c, ids, 'follow_up')}/done",
            {},
        ),
        "follow_up.done",
    ),
    ("POST", "/incidents/{incident_id}/webhooks"): (
        lambda c, ids: _form(
            c, f"/incidents/{ids['incident_id']}/webhooks", {"url": "https://example.org/h"}
        ),
        "webhook.register",
    ),
    ("POST", "/incidents/{incident_id}/webhooks/{webhook_id}/remove"): (
        lambda c, ids: _form(
            c,
            f"/incidents/{ids['incident_id']}/webhooks/{_stored(c, ids, 'webhook')}/remove",
            {},
        ),
        "webhook.remove",
    ),
    ("POST", "/demo/reset"): (lambda c, ids: _form(c, "/demo/reset", {}), "demo.reset"),
}


def _audit_rows(app: FastAPI, *, refusals: bool = False) -> list[str]:
    """The trail's actions in order: the changes (``refusals``: the refused requests,
    which change nothing and are written too, rate-limited)."""
    db: Database = app.state.db
    with db.sessions() as session:
        actions = session.scalars(select(AuditEvent.action).order_by(AuditEvent.sequence))
        return [a for a in actions if (a == "access.refused") == refusals]


def test_every_state_change_writes_exactly_one_audit_row(app: FastAPI) -> None:
    unsafe = {(m, p) for m, p, _ in _routes(app) if m in UNSAFE}
    assert unsafe == {key for key in EXAMPLES if key[0] in UNSAFE}, "add an example"
    for key, (call, action) in EXAMPLES.items():
        with signed_in(app) as client:  # a fresh admin: logout and password end sessions
            ids = _ids(client)
            if key == ("POST", "/import/{token}/confirm"):
                ids = _previewed(client, ids)
            before = _audit_rows(app)
            response = call(client, ids)
            assert response.status_code < 400 or key == ("POST", "/login"), (
                key,
                response.status_code,
                response.text[:300],
            )
            after = _audit_rows(app)
        assert after[: len(before)] == before, key  # append-only
        assert after[len(before) :] == [action], (key, after[len(before) :])


def _anonymous_call(client: TestClient, method: str, path: str) -> Any:
    if method == "GET":
        return client.get(path)
    if path.endswith("/pfif"):
        return client.post(path, content=b"<x/>", headers={"content-type": "application/xml"})
    if path.startswith("/api/"):
        return client.request(method, path, json={})
    return client.post(path, data={"csrf_token": csrf(client)})


def test_a_stranger_gets_401_or_the_login_page_everywhere(app: FastAPI) -> None:
    with signed_in(app) as admin:
        ids = _ids(admin)
    schema = client_for(app).get("/openapi.json")
    assert schema.status_code == 401  # the API's description is not public either
    with client_for(app) as stranger:
        for method, path, _route in _routes(app):
            if (method, path) in PUBLIC_ROUTES:
                continue
            response = _anonymous_call(stranger, method, _path(path, ids))
            where = f"{method} {path}"
            if path.startswith("/api/") or path == "/openapi.json":
                assert response.status_code == 401, where
                assert response.headers["www-authenticate"].startswith("Bearer"), where
                assert response.json()["code"] == "not_signed_in", where
            elif method == "GET":
                assert response.status_code == 303, where
                assert response.headers["location"].startswith("/login?next="), where
            else:
                assert response.status_code == 401, where
        assert stranger.get("/healthz").json() == {"status": "ok"}
        assert stranger.get("/login").status_code == 200
    assert _audit_rows(app).count("report.publish") == 0


def _state_changing(app: FastAPI) -> list[tuple[str, str]]:
    """The examples a role may be refused: not the public ones (the mailed links, whose
    token is the credential, whoever is signed in)."""
    audited_reads = ("/pfif", "/people.csv", "/export/file")
    return sorted(
        (m, p)
        for m, p in EXAMPLES
        if (m in UNSAFE or p.endswith(audited_reads)) and (m, p) not in PUBLIC_ROUTES
    )


PUBLISHING = {"/api/reports", "/organizations/reports", "/publish"}
# a desk takes them (issue 41), through the API or the page's form
INQUIRIES = {"/api/incidents/{incident_id}/inquiries", "/incidents/{incident_id}/inquiries"}


@pytest.mark.parametrize("who", ["viewer", "reporter-elsewhere"])
def test_too_small_a_role_changes_nothing(app: FastAPI, who: str) -> None:
    with signed_in(app) as admin:
        ids = _ids(admin)
    if who == "viewer":
        client = signed_in(app, role="viewer", organization="Some Camp")
    else:
        # a reporter of another organisation, member of the demo incident only
        client = signed_in(app, role="reporter", organization="Other Relief Group")
    own_rows = {"login", "logout", "user.password", "user.create"}
    before = [a for a in _audit_rows(app) if a not in own_rows]
    with client:
        for method, path in _state_changing(app):
            if path in {"/logout", "/account/password", "/login"}:
                continue  # their own session and password
            call, _action = EXAMPLES[(method, path)]
            response = call(client, ids)
            where = f"{who}: {method} {path}"
            if who != "viewer" and path in PUBLISHING | INQUIRIES:
                # may publish (and take a tracing request), but only as their own organisation
                assert response.status_code in (201, 303), where
                continue
            if path.endswith("/investigate"):
                # the saved result is a read; a typed passphrase is a live check
                assert response.status_code == 403, where
                continue
            assert response.status_code == 403, f"{where} -> {response.status_code}"
        if who != "viewer":
            hospital = _report_body(ids, source="Central Hospital Demo")
            named = client.post("/api/reports", json=hospital)
            assert named.status_code == 403
            assert "only" in named.json()["detail"]
    after = [a for a in _audit_rows(app) if a not in own_rows]
    # in path order: the API's request and report, the page's request, the form and its
    # old address
    taken = ["inquiry.create", "report.publish", "inquiry.create", *["report.publish"] * 2]
    expected = before + (taken if who != "viewer" else [])
    assert after == expected
    # the refusals are on the trail, at most TRACE_REFUSAL_AUDIT_LIMIT (10 a minute) each
    assert len(_audit_rows(app, refusals=True)) == 10


def test_a_member_of_one_incident_sees_and_changes_nothing_elsewhere(app: FastAPI) -> None:
    with signed_in(app) as admin:
        ids = _ids(admin)
        other = admin.post("/api/incidents", json={"name": "Other Flood"})
        assert other.status_code == 201, other.text
        other_id = other.json()["id"]
    db: Database = app.state.db
    make_user(db, "narrow-reporter", "reporter", "Narrow Clinic", incident_id=other_id)
    client = client_for(app)
    assert sign_in(client, "narrow-reporter").status_code == 303
    with client:
        listed = [i["id"] for i in client.get("/api/incidents").json()["items"]]
        assert listed == [other_id]
        for path in (
            f"/api/incidents/{ids['incident_id']}/people",
            f"/api/people/{ids['person_id']}",
            f"/api/reports/{ids['report_id']}",
            f"/incidents/{ids['incident_id']}/people",
            f"/people/{ids['person_id']}",
        ):
            assert client.get(path).status_code == 403, path
        refused = client.post("/api/reports", json=_report_body(ids))
        assert refused.status_code == 403
        mine = client.post("/api/reports", json=_report_body({"incident_id": other_id}))
        assert mine.status_code == 201, mine.text
        assert mine.json()["source"] == "Narrow Clinic"


ROLES = ("viewer", "reporter", "reviewer", "coordinator", "admin")
OWN_ACCOUNT = {"/logout", "/account/password", "/login"}


def _needed(app: FastAPI, method: str, path: str) -> str:
    """The permission an example needs: its route's mark; a typed passphrase (the
    examples type one) also needs checks:run."""
    if path.endswith("/investigate"):
        return "checks:run"
    route = next(r for m, p, r in _routes(app) if (m, p) == (method, path))
    return _marks(route.dependant)[0]


@pytest.mark.parametrize("role", ROLES)
def test_the_permission_matrix(app: FastAPI, role: str) -> None:
    """Role x operation, from the permission table: each operation is refused (403) exactly
    when the table does not give the role its permission."""
    from trace_app.accounts.permissions import Permission, allows

    with signed_in(app) as admin:
        ids = _ids(admin)
    client = signed_in(app, role=role, organization="Central Hospital Demo")
    answered: dict[str, int] = {}
    with client:
        for method, path in _state_changing(app):
            if path in OWN_ACCOUNT or path.endswith("/reset"):
                continue  # the reset runs last: it changes every id
            call, _action = EXAMPLES[(method, path)]
            answered[f"{method} {path}"] = call(client, ids).status_code
        for method, path in (("POST", "/api/demo/reset"), ("POST", "/demo/reset")):
            answered[f"{method} {path}"] = EXAMPLES[(method, path)][0](client, ids).status_code
    for operation, status in answered.items():
        method, path = operation.split(" ", 1)
        allowed = allows(role, Permission(_needed(app, method, path)))
        assert (status == 403) != allowed, f"{role}: {operation} -> {status}"
