"""Coordinators place people in their incident, up to their own role and no further."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from accounts_helpers import app_database, client_for, make_user, sign_in, signed_in
from fastapi import FastAPI

from trace_app.web.app import create_app


@pytest.fixture
def app(sqlite_settings: Any) -> Iterator[FastAPI]:
    made = create_app(sqlite_settings)
    yield made
    made.state.db.dispose()


def test_a_coordinator_places_people_in_their_incident_only(app: FastAPI) -> None:
    with signed_in(app) as admin:
        demo = admin.get("/api/incidents").json()["items"][0]["id"]
        other = admin.post("/api/incidents", json={"name": "Landslide"}).json()["id"]
    db = app_database(app)
    make_user(db, "coord", "coordinator", "Nepal Police Demo", incident_id=demo)
    make_user(db, "volunteer", "viewer", "Some Camp", incident_id=other)
    coord = client_for(app)
    assert sign_in(coord, "coord").status_code == 303
    placed = coord.put(
        f"/api/incidents/{demo}/members/volunteer",
        json={"role": "reporter", "organization": "Tatopani Relief Camp Demo"},
    )
    assert placed.status_code == 200, placed.text
    assert placed.json() == {
        "user": "volunteer",
        "role": "reporter",
        "organization": "Tatopani Relief Camp Demo",
        "scope": demo,
    }
    members = coord.get(f"/api/incidents/{demo}/members").json()["items"]
    assert {(m["user"], m["role"]) for m in members} >= {
        ("coord", "coordinator"),
        ("volunteer", "reporter"),
    }
    # the volunteer now publishes in the demo incident, as the camp
    volunteer = client_for(app)
    assert sign_in(volunteer, "volunteer").status_code == 303
    body = {
        "incident_id": demo,
        "summary": "Seen.",
        "original_text": "Registered at our camp desk.",
        "person": {"name": "Placed Person"},
        "status": "safe",
    }
    published = volunteer.post("/api/reports", json=body)
    assert (
        published.status_code == 201 and published.json()["source"] == "Tatopani Relief Camp Demo"
    )
    # not above their own role, not in another incident
    too_high = coord.put(f"/api/incidents/{demo}/members/volunteer", json={"role": "admin"})
    assert too_high.status_code == 403
    elsewhere = coord.put(
        f"/api/incidents/{other}/members/volunteer", json={"role": "viewer", "organization": "X"}
    )
    assert elsewhere.status_code == 403
    assert coord.get(f"/api/incidents/{other}/members").status_code == 403
    # a reporter needs an organisation; unknown users and incidents are 404
    make_user(db, "no-org", "viewer", None, incident_id=other)
    bare = coord.put(f"/api/incidents/{demo}/members/no-org", json={"role": "reporter"})
    assert bare.status_code == 422
    assert (
        coord.put(f"/api/incidents/{demo}/members/nobody", json={"role": "viewer"}).status_code
        == 404
    )
    # removed: the volunteer's session ended with the change, and the incident is gone for them
    removed = coord.post(f"/api/incidents/{demo}/members/volunteer/remove", json={})
    assert removed.status_code == 200
    assert "volunteer" not in {m["user"] for m in removed.json()["items"]}
    again = client_for(app)
    assert sign_in(again, "volunteer").status_code == 303
    assert [i["id"] for i in again.get("/api/incidents").json()["items"]] == [other]


def test_a_coordinator_cannot_demote_an_admin(app: FastAPI) -> None:
    with signed_in(app) as admin:
        demo = admin.get("/api/incidents").json()["items"][0]["id"]
    db = app_database(app)
    make_user(db, "coord2", "coordinator", "Nepal Police Demo", incident_id=demo)
    make_user(db, "chief", "admin", None, incident_id=demo)
    coord = client_for(app)
    assert sign_in(coord, "coord2").status_code == 303
    demote = coord.put(f"/api/incidents/{demo}/members/chief", json={"role": "viewer"})
    assert demote.status_code == 403
    assert coord.post(f"/api/incidents/{demo}/members/chief/remove", json={}).status_code == 403
