"""An incident's time zone (issue 23): checked by zoneinfo, shown with its offset and UTC
on hover by the one ``|when`` filter, typed in the publish form in the incident's zone and
stored in UTC (Nepal is UTC+5:45), settable on creation (API, CLI) and by a coordinator."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from accounts_helpers import TEST_OPERATOR, csrf, signed_in
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from trace_app.cli import app as cli
from trace_app.domain.errors import InvalidInputError
from trace_app.domain.incidents import create_incident, set_time_zone
from trace_app.domain.time_zones import (
    check_time_zone,
    format_local,
    local_to_utc,
    utc_to_local_input,
)
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.store.models import Incident
from trace_app.web.app import create_app

KATHMANDU = "Asia/Kathmandu"
MOMENT = datetime(2015, 4, 25, 8, 45, tzinfo=UTC)  # 14:30 in Kathmandu


def test_a_zone_is_checked_by_zoneinfo() -> None:
    assert check_time_zone(" Asia/Kathmandu ") == KATHMANDU
    assert check_time_zone("") == "UTC"
    for bad in ("Mars/Olympus", "../../etc/passwd", "/etc/localtime", "Asia", "x" * 65, "ü"):
        with pytest.raises(InvalidInputError, match="IANA"):
            check_time_zone(bad)


def test_times_are_shown_with_the_offset_and_typed_times_become_utc() -> None:
    assert format_local(MOMENT, KATHMANDU) == "2015-04-25 14:30 +05:45"
    assert format_local(MOMENT, "UTC") == "2015-04-25 08:45 UTC"
    assert format_local(MOMENT, "America/New_York") == "2015-04-25 04:45 -04:00"
    assert local_to_utc(datetime(2015, 4, 25, 14, 30), KATHMANDU) == MOMENT
    aware = datetime(2015, 4, 25, 8, 45, tzinfo=UTC)
    assert local_to_utc(aware, KATHMANDU) == MOMENT  # a typed offset wins
    assert utc_to_local_input(MOMENT, KATHMANDU) == "2015-04-25T14:30"


def test_creating_and_changing_the_zone_is_audited(database: Database) -> None:
    with database.session() as s:
        incident = create_incident(s, "Gorkha Zone Test", time_zone=KATHMANDU, actor=TEST_OPERATOR)
        incident_id = incident.id
    with database.session() as s:
        with pytest.raises(InvalidInputError):
            set_time_zone(s, incident_id, "Nowhere/Town", actor=TEST_OPERATOR)
    with database.session() as s:
        assert s.get(Incident, incident_id).time_zone == KATHMANDU  # type: ignore[union-attr]
        set_time_zone(s, incident_id, "UTC", actor=TEST_OPERATOR)
    with database.sessions() as s:
        assert s.get(Incident, incident_id).time_zone == "UTC"  # type: ignore[union-attr]
        with pytest.raises(InvalidInputError):
            create_incident(s, "Bad Zone Test", time_zone="Mars/Base", actor=TEST_OPERATOR)


@pytest.fixture
def web(database: Database, tmp_path: Path) -> Iterator[TestClient]:
    home = tmp_path / "home"
    settings = TraceSettings(home=home, database_url=f"sqlite:///{home / 'unused.db'}", demo=True)
    app = create_app(settings, db=database)
    with signed_in(app) as client:  # an admin of every incident, for the hospital
        yield client


def _incident(web: TestClient) -> str:
    items = web.get("/api/incidents").json()["items"]
    found: str = next(i["id"] for i in items if i["name"] == "Flood Relief Demo")
    return found


def test_the_api_sets_the_zone_and_keeps_utc(web: TestClient) -> None:
    made = web.post("/api/incidents", json={"name": "Nepal Api Zone", "time_zone": KATHMANDU})
    assert made.status_code == 201 and made.json()["time_zone"] == KATHMANDU
    bad = web.post("/api/incidents", json={"name": "Bad Api Zone", "time_zone": "Nowhere/X"})
    assert bad.status_code == 422 and "IANA" in bad.json()["detail"]
    incident_id = _incident(web)
    assert web.get("/api/incidents").json()["items"][0]["time_zone"] in ("UTC", KATHMANDU)
    refused = web.put(f"/api/incidents/{incident_id}/time-zone", json={"time_zone": "Moon/X"})
    assert refused.status_code == 422
    put = web.put(f"/api/incidents/{incident_id}/time-zone", json={"time_zone": KATHMANDU})
    assert put.json() == {"incident_id": incident_id, "time_zone": KATHMANDU}
    # the API's times stay UTC
    body = {
        "incident_id": incident_id,
        "summary": "Seen at the school.",
        "original_text": "Seen at the school.",
        "reported_at": "2015-04-25T08:45:00Z",
        "person": {"name": "Zone Api Person"},
        "status": "seen",
    }
    published = web.post("/api/reports", json=body).json()
    assert published["reported_at"].startswith("2015-04-25T08:45:00")
    assert web.put("/api/incidents/inc_nope/time-zone", json={"time_zone": "UTC"}).status_code in (
        403,
        404,
    )


def test_nepal_publish_form_time_is_stored_in_utc_and_shown_with_the_offset(
    web: TestClient,
) -> None:
    incident_id = _incident(web)
    set_form = web.post(
        f"/incidents/{incident_id}/time-zone",
        data={"time_zone": KATHMANDU, "csrf_token": csrf(web)},
    )
    assert set_form.status_code == 303
    form = web.get(f"/publish?incident_id={incident_id}").text
    assert re.search(r"Reported time, in Asia/Kathmandu", form)
    sent = web.post(
        "/publish",
        data={
            "csrf_token": csrf(web),
            "incident_id": incident_id,
            "summary": "Seen at the Gorkha school.",
            "original_text": "Seen at the Gorkha school at half past two.",
            "person_name": "Zone Form Person",
            "status": "seen",
            "reported_at": "2015-04-25T14:30",  # Kathmandu wall clock
        },
    )
    assert sent.status_code == 303, sent.text
    report_id = sent.headers["location"].split("/reports/")[1].split("?")[0]
    stored = web.get(f"/api/reports/{report_id}").json()
    assert stored["reported_at"].startswith("2015-04-25T08:45:00")  # UTC in the API
    page = web.get(f"/reports/{report_id}").text
    # as a reader says it, in the incident's zone; the exact time (offset, UTC) on request
    exact = "2015-04-25 14:30:00 +05:45 · 2015-04-25 08:45:00 UTC"
    shown = f'<time class="when" datetime="2015-04-25T08:45:00+00:00" title="{exact}">'
    assert shown + f'25 Apr 2015, 14:30 (Kathmandu)<span class="when-exact"> ({exact})' in page
    people = web.get(f"/incidents/{incident_id}/people", params={"q": "Zone Form Person"}).text
    assert "25 Apr 2015, 14:30 (Kathmandu)" in people
    bad = web.post(
        f"/incidents/{incident_id}/time-zone",
        data={"time_zone": "Atlantis", "csrf_token": csrf(web)},
    )
    assert bad.status_code == 422 and "IANA" in bad.text
    web.put(f"/api/incidents/{incident_id}/time-zone", json={"time_zone": "UTC"})
    again = web.get(f"/reports/{report_id}").text
    assert "25 Apr 2015, 08:45 (UTC)" in again and "+05:45" not in again


def test_the_cli_creates_with_a_zone_and_changes_it(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.delenv("TRACE_DEMO", raising=False)
    runner = CliRunner()
    made = runner.invoke(cli, ["incident", "create", "Cli Zone", "--time-zone", KATHMANDU])
    assert made.exit_code == 0, made.output
    incident_id = made.output.strip().rsplit(": ", 1)[1]
    bad = runner.invoke(cli, ["incident", "time-zone", incident_id, "Nowhere/Else"])
    assert bad.exit_code != 0 and "IANA" in bad.output
    ok = runner.invoke(cli, ["incident", "time-zone", incident_id, "Asia/Tokyo"])
    assert ok.exit_code == 0 and "Asia/Tokyo" in ok.output
    refused = runner.invoke(cli, ["incident", "create", "Cli Zone 2", "--time-zone", "Mars/X"])
    assert refused.exit_code != 0
