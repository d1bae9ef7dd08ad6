"""Alerts close by the written rule (a later safe, admitted or deceased claim), a later
missing claim opens a new one, and a person can close one saying what they know, with a
note. Both backends. (Linked groups and joined sources: test_alert_groups.py.)"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from accounts_helpers import TEST_OPERATOR, csrf, member_of
from fastapi.testclient import TestClient
from sqlalchemy import select

from trace_app.domain import alert_actions, alert_queries, alerts
from trace_app.domain.errors import AlertClosedError, InvalidInputError, NotFoundError
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.store.db import Database
from trace_app.store.models import (
    Alert,
    AlertCloseReason,
    AlertState,
    ClaimStatus,
    Incident,
    Report,
)
from trace_app.store.types import new_id

START = datetime(2026, 7, 15, 8, 0, tzinfo=UTC)


def make_incident(database: Database) -> str:
    with database.session() as s:
        incident = Incident(id=new_id("inc"), name="Alert Test Incident")
        s.add(incident)
        return incident.id


def publish(
    database: Database, incident_id: str, status: str, minutes: int, name: str = "Anna Test"
) -> tuple[str, str]:
    """Publish one report; return (report id, claim id)."""
    with database.session() as s:
        report = publish_report(
            s,
            PublishReportInput(
                incident_id=incident_id,
                source="River Clinic Test",
                summary=f"{name} is {status}.",
                original_text=f"Our volunteer says {name} is {status}.",
                reported_at=START + timedelta(minutes=minutes),
                person=PersonInput(name=name, age=30),
                status=ClaimStatus(status),
            ),
        )
        return report.id, report.claims[0].id


def all_alerts(database: Database, incident_id: str) -> list[Alert]:
    with database.sessions() as s:
        rows = s.scalars(
            select(Alert).where(Alert.incident_id == incident_id).order_by(Alert.position)
        ).all()
        s.expunge_all()
        return list(rows)


@pytest.mark.parametrize("closing", ["safe", "admitted", "deceased"])
def test_later_closing_claim_closes_the_open_alert(database: Database, closing: str) -> None:
    incident_id = make_incident(database)
    publish(database, incident_id, "missing", 0)
    publish(database, incident_id, "missing", 5, name="Other Person")
    _, closing_claim = publish(database, incident_id, closing, 30)
    [mine, other] = all_alerts(database, incident_id)
    assert mine.state == AlertState.CLOSED.value
    assert mine.closed_by_claim_id == closing_claim and mine.closed_at is not None
    assert mine.close_note is None
    assert other.state == AlertState.OPEN.value and other.closed_by_claim_id is None


def test_seen_claim_changes_no_alert(database: Database) -> None:
    incident_id = make_incident(database)
    publish(database, incident_id, "missing", 0)
    publish(database, incident_id, "seen", 30)
    [alert] = all_alerts(database, incident_id)
    assert alert.state == AlertState.OPEN.value


def test_later_missing_claim_opens_a_new_alert(database: Database) -> None:
    incident_id = make_incident(database)
    publish(database, incident_id, "missing", 0)
    publish(database, incident_id, "safe", 30)
    _, again = publish(database, incident_id, "missing", 60)
    first, second = all_alerts(database, incident_id)
    assert first.state == AlertState.CLOSED.value
    assert second.state == AlertState.OPEN.value and second.claim_id == again


def test_closing_claim_reported_earlier_leaves_the_alert_open(database: Database) -> None:
    """A safe claim about a moment before the person went missing does not close it."""
    incident_id = make_incident(database)
    publish(database, incident_id, "missing", 60)
    publish(database, incident_id, "safe", 0)
    [alert] = all_alerts(database, incident_id)
    assert alert.state == AlertState.OPEN.value


def test_missing_claim_older_than_a_closing_claim_is_closed_at_once(database: Database) -> None:
    incident_id = make_incident(database)
    _, safe_claim = publish(database, incident_id, "safe", 60)
    publish(database, incident_id, "missing", 0)
    [alert] = all_alerts(database, incident_id)
    assert alert.state == AlertState.CLOSED.value and alert.closed_by_claim_id == safe_claim


def test_a_person_closes_an_alert_with_a_note(database: Database) -> None:
    incident_id = make_incident(database)
    publish(database, incident_id, "missing", 0)
    [alert] = all_alerts(database, incident_id)
    withdrawn = AlertCloseReason.WITHDRAWN
    for bad in ("   ", "closed\x00", "x" * 2001):
        with database.session() as s, pytest.raises(InvalidInputError):
            alert_actions.close_alert(s, alert.id, withdrawn, bad, actor=TEST_OPERATOR)
    with database.session() as s:
        alert_actions.close_alert(
            s, alert.id, withdrawn, "  The caller took it back.  ", actor=TEST_OPERATOR
        )
    [closed] = all_alerts(database, incident_id)
    assert closed.state == AlertState.CLOSED.value and closed.close_reason == "withdrawn"
    assert closed.close_note == "The caller took it back."
    assert closed.closed_by_claim_id is None and closed.closed_at is not None
    with database.session() as s, pytest.raises(AlertClosedError):
        alert_actions.close_alert(s, alert.id, withdrawn, "again", actor=TEST_OPERATOR)
    with database.session() as s, pytest.raises(NotFoundError):
        alert_actions.close_alert(s, "alr_unknown", withdrawn, "note", actor=TEST_OPERATOR)


def test_after_reset_no_open_alert_for_a_person_whose_latest_claim_closes_it(
    database: Database, seeded: str
) -> None:
    with database.sessions() as s:
        reports = s.scalars(
            select(Report).where(Report.incident_id == seeded).order_by(Report.reported_at)
        ).all()
        latest = {r.person_id: r.status for r in reports}
        open_people = {a.person_id for a in alert_queries.open_alerts(s, seeded, limit=500).items}
        closed = alert_queries.alerts_page(s, seeded, state=AlertState.CLOSED, limit=500)
    closing = {s.value for s in alerts.CLOSING_STATUSES}
    assert not any(latest[p] in closing for p in open_people)
    assert all(latest[p] == "missing" for p in open_people)
    assert closed.total >= 1
    assert all(a.closed_by_claim_id for a in closed.items)


def body(incident_id: str, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "incident_id": incident_id,
        "source": "River Clinic Test",
        "summary": "Api One reported.",
        "original_text": "A volunteer reports on Api One.",
        "reported_at": "2026-07-15T07:30:00Z",
        "person": {"name": "Api One"},
        "status": "missing",
    }
    data.update(overrides)
    return data


def _clinic(web: TestClient) -> TestClient:
    """A reporter of the body's organisation (reporters publish for their own only)."""
    return member_of(web.app, "River Clinic Test")


def _missing_alert(web: TestClient, incident_id: str) -> dict[str, Any]:
    published = _clinic(web).post(
        "/api/reports", json=body(incident_id, status="missing", person={"name": "Api One"})
    )
    assert published.status_code == 201, published.text
    items = web.get(f"/api/incidents/{incident_id}/alerts").json()["items"]
    alert: dict[str, Any] = next(a for a in items if a["person_name"] == "Api One")
    return alert


def test_api_lists_by_state_and_closes_with_a_note(web: TestClient, incident_id: str) -> None:
    alert = _missing_alert(web, incident_id)
    assert alert["state"] == "open" and alert["closed_at"] is None
    url = f"/api/alerts/{alert['id']}/close"
    dup = {"reason": "duplicate"}
    assert web.post(url, json={**dup, "note": "  "}).status_code == 422
    assert web.post(url, json={}).status_code == 422
    assert web.post(url, json={"note": "no reason given"}).status_code == 422
    assert web.post(url, json={"reason": "gone", "note": "x"}).status_code == 422
    # a NUL or another control character is refused (PostgreSQL cannot store a NUL)
    for bad in ("closed\x00", "closed\x07 by bell", "x" * 2001):
        assert web.post(url, json={**dup, "note": bad}).status_code == 422, bad
    closed = web.post(url, json={**dup, "note": "Same as the police report"})
    assert closed.status_code == 200, closed.text
    out = closed.json()
    assert out["state"] == "closed" and out["close_note"] == "Same as the police report"
    assert out["close_reason"] == "duplicate"
    assert out["closed_at"] is not None and out["closed_by_claim_id"] is None
    assert web.post(url, json={**dup, "note": "again"}).json()["code"] == "alert_closed"
    assert web.post(url, json={**dup, "note": "again"}).status_code == 409
    assert web.post("/api/alerts/alr_nope/close", json={**dup, "note": "x"}).status_code == 404
    open_ids = {a["id"] for a in web.get(f"/api/incidents/{incident_id}/alerts").json()["items"]}
    closed_page = web.get(f"/api/incidents/{incident_id}/alerts", params={"state": "closed"})
    assert alert["id"] not in open_ids
    assert alert["id"] in {a["id"] for a in closed_page.json()["items"]}
    assert web.get(f"/api/incidents/{incident_id}/alerts?state=shut").status_code == 422


def test_api_safe_report_closes_alert_by_rule(web: TestClient, incident_id: str) -> None:
    alert = _missing_alert(web, incident_id)
    safe = (
        _clinic(web)
        .post(
            "/api/reports",
            json=body(
                incident_id,
                status="safe",
                person={"name": "Api One"},
                reported_at=datetime.now(UTC).isoformat(),
            ),
        )
        .json()
    )
    closed = web.get(f"/api/incidents/{incident_id}/alerts", params={"state": "closed"}).json()
    mine = next(a for a in closed["items"] if a["id"] == alert["id"])
    assert mine["closed_by_claim_id"] == safe["claim_id"]


def test_people_page_close_needs_the_confirmation_page_and_csrf(
    web: TestClient, incident_id: str
) -> None:
    alert = _missing_alert(web, incident_id)
    page = web.get(f"/incidents/{incident_id}/people")
    # the People page links to the confirmation step; it holds no one-tap close form
    assert f'href="/alerts/{alert["id"]}/close"' in page.text
    assert f'action="/alerts/{alert["id"]}/close"' not in page.text
    confirm = web.get(f"/alerts/{alert['id']}/close")
    assert f'action="/alerts/{alert["id"]}/close"' in confirm.text
    assert 'name="confirm"' in confirm.text and 'value="found_safe"' in confirm.text
    token = csrf(web)
    form = {"reason": "withdrawn", "note": "home", "confirm": "yes"}
    refused = web.post(f"/alerts/{alert['id']}/close", data=form)
    assert refused.status_code == 403
    unconfirmed = web.post(
        f"/alerts/{alert['id']}/close", data={**form, "confirm": "", "csrf_token": token}
    )
    assert unconfirmed.status_code == 422 and "Tick the box" in unconfirmed.text
    still = web.get(f"/api/incidents/{incident_id}/alerts").json()["items"]
    assert alert["id"] in {a["id"] for a in still}
    done = web.post(
        f"/alerts/{alert['id']}/close",
        data={**form, "csrf_token": token},
        follow_redirects=False,
    )
    assert done.status_code == 303
    after = web.get(done.headers["location"]).text
    assert 'id="alert-done"' in after and f'id="reopen-{alert["id"]}"' in after
    me = web.get("/api/me").json()["user"]
    assert f"by {me} (withdrawn): “home”" in after  # the signed-in account, not "a person"
