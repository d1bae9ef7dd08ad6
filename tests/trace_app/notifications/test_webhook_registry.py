"""Partner webhooks (issue 41): a coordinator registers a URL and gets its secret once
(``whsec_`` + base64 of 32 random bytes), lists show no secret, removal keeps the row and
skips what waited for it; the failed deliveries are listed for coordinators. The seeded
demo app on SQLite, real accounts."""

from __future__ import annotations

import base64
from typing import Any

from accounts_helpers import app_database, signed_in
from sqlalchemy import select

from trace_app.store.account_models import AuditEvent
from trace_app.store.notification_models import Delivery, OutboxEvent
from trace_app.store.types import new_id


def test_register_list_and_remove(web: Any, incident_id: str) -> None:
    url = f"/api/incidents/{incident_id}/webhooks"
    made = web.post(url, json={"url": "https://partner:pw@example.org/hook", "events": None})
    assert made.status_code == 201, made.text
    secret = made.json()["secret"]
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) == 32
    other = web.post(
        url, json={"url": "https://partner.example.org/in", "events": ["alert.opened"]}
    )
    assert other.json()["secret"] != secret and other.json()["events"] == ["alert.opened"]

    listed = web.get(url)
    assert listed.status_code == 200
    assert {h["id"] for h in listed.json()["items"]} == {made.json()["id"], other.json()["id"]}
    assert "secret" not in listed.text and secret not in listed.text

    removed = web.post(f"{url}/{made.json()['id']}/remove", json={})
    assert removed.status_code == 200 and removed.json()["removed_at"] is not None
    assert web.post(f"{url}/{made.json()['id']}/remove", json={}).status_code == 200
    assert [h["id"] for h in web.get(url).json()["items"]] == [other.json()["id"]]
    everyone = web.get(url, params={"include_removed": True}).json()["items"]
    assert len(everyone) == 2
    assert web.post(f"{url}/whk_unknown/remove", json={}).status_code == 404
    with app_database(web.app).sessions() as s:
        rows = s.scalars(
            select(AuditEvent)
            .where(AuditEvent.action.like("webhook.%"))
            .order_by(AuditEvent.sequence)
        ).all()
    assert [r.action for r in rows] == ["webhook.register", "webhook.register", "webhook.remove"]
    assert rows[0].after == {"url": "https://example.org/hook", "events": "all"}  # no password


def test_bad_urls_and_kinds_are_refused(web: Any, incident_id: str) -> None:
    url = f"/api/incidents/{incident_id}/webhooks"
    for body in (
        {"url": "ftp://example.org/x"},
        {"url": "https://"},
        {"url": "https://exa mple.org/"},
        {"url": "https://example.org:port/"},
        {"url": "javascript:alert(1)"},
        {"url": "https://example.org/", "events": ["status.deleted"]},
        {"url": "https://example.org/", "events": []},
    ):
        refused = web.post(url, json=body)
        assert refused.status_code == 422, (body, refused.text)
    with signed_in(web.app, role="reviewer", organization="Camp Test") as reviewer:
        assert reviewer.post(url, json={"url": "https://example.org/"}).status_code == 403
        assert reviewer.get(url).status_code == 403
    with signed_in(web.app, role="coordinator", organization="Camp Test") as coordinator:
        assert coordinator.post(url, json={"url": "https://example.org/"}).status_code == 201


def test_failed_deliveries_are_listed_and_a_removed_webhook_skips_its_waiting_ones(
    web: Any, incident_id: str
) -> None:
    url = f"/api/incidents/{incident_id}/webhooks"
    hook = web.post(url, json={"url": "https://partner.example.org/never"}).json()["id"]
    with app_database(web.app).session() as s:
        event = s.scalars(
            select(OutboxEvent).where(OutboxEvent.incident_id == incident_id).limit(1)
        ).one()
        rows = {
            state: Delivery(
                id=new_id("dlv"),
                event_id=event.id,
                channel="webhook",
                target_id=f"{hook}_{state}" if state != "pending" else hook,
                state=state,
                attempts=3,
                last_error="connection refused" if state != "delivered" else None,
            )
            for state in ("dead", "delivered", "pending")
        }
        s.add_all(rows.values())
    listed = web.get(f"/api/incidents/{incident_id}/deliveries", params={"state": "failed"})
    assert listed.status_code == 200, listed.text
    found = {d["id"]: d for d in listed.json()["items"]}
    assert set(found) == {rows["dead"].id, rows["pending"].id}  # dead, and retrying
    assert found[rows["dead"].id]["last_error"] == "connection refused"
    assert found[rows["dead"].id]["kind"] == event.kind
    delivered = web.get(f"/api/incidents/{incident_id}/deliveries?state=delivered").json()
    assert [d["id"] for d in delivered["items"]] == [rows["delivered"].id]
    assert web.get(f"/api/incidents/{incident_id}/deliveries?state=lost").status_code == 422

    web.post(f"{url}/{hook}/remove", json={})
    with app_database(web.app).sessions() as s:
        waiting = s.get(Delivery, rows["pending"].id)
        assert waiting is not None and waiting.state == "skipped"
        dead = s.get(Delivery, rows["dead"].id)
        assert dead is not None and dead.state == "dead"
