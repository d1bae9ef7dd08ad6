"""The web app on PostgreSQL (DATABASE_URL): migrate, seed, publish, list, reset."""

from __future__ import annotations

from pathlib import Path

import pytest
from accounts_helpers import signed_in

from trace_app.settings import TraceSettings
from trace_app.web.app import create_app


@pytest.mark.postgres
def test_app_on_postgres(pg_schema_url: str, tmp_path: Path) -> None:
    settings = TraceSettings.from_env(
        env={
            "DATABASE_URL": pg_schema_url,
            "TRACE_HOME": str(tmp_path / "home"),
            "TRACE_DEMO": "1",
            "TRACE_RECORDED_INVESTIGATIONS": str(tmp_path / "no-recorded-runs.json"),
        }
    )
    # an admin of every incident, publishing for Central Hospital Demo
    with signed_in(create_app(settings)) as web:
        incident = web.get("/api/incidents").json()["items"][0]
        assert incident["name"] == "Flood Relief Demo" and incident["people"] >= 20
        created = web.post(
            "/api/reports",
            json={
                "incident_id": incident["id"],
                "source": "Central Hospital Demo",
                "summary": "Admitted",
                "original_text": "Admission note.",
                "person": {"name": "maya gurung"},
                "status": "admitted",
            },
        )
        assert created.status_code == 201
        people = web.get(f"/api/incidents/{incident['id']}/people?limit=500").json()
        maya = next(p for p in people["items"] if p["name"] == "Maya Gurung")
        assert len(maya["claims"]) == 3
        assert web.get(f"/incidents/{incident['id']}/people").status_code == 200
        reset = web.post("/api/demo/reset", json={}).json()
        assert reset["reports"] == incident["reports"]
