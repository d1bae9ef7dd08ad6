"""PFIF over HTTP and on the command line (SQLite)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trace_app.cli import app as trace_cli

from .conftest import FIXTURES
from .person_finder_rules import person_finder_parse

XML = {"content-type": "application/xml"}


def test_export_streams_pfif_xml(web: Any, incident_id: str) -> None:
    response = web.get(f"/api/incidents/{incident_id}/pfif")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/xml")
    assert "attachment" in response.headers["content-disposition"]
    persons, notes = person_finder_parse(response.content)
    summary = next(i for i in web.get("/api/incidents").json()["items"] if i["id"] == incident_id)
    assert len(persons) == summary["people"] and len(notes) == summary["reports"]
    assert persons[0]["person_record_id"].startswith("trace.invalid/per_")  # the default domain


def test_export_of_an_unknown_incident_is_404(web: Any) -> None:
    response = web.get("/api/incidents/inc_nope/pfif")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def _incident(web: Any, incident_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(
        i for i in web.get("/api/incidents").json()["items"] if i["id"] == incident_id
    )
    return found


def test_import_answers_with_the_summary_and_is_idempotent(web: Any, incident_id: str) -> None:
    body = (FIXTURES / "registry-1.4.xml").read_bytes()
    first = web.post(f"/api/incidents/{incident_id}/pfif", content=body, headers=XML)
    assert first.status_code == 200, first.text
    data = first.json()
    assert data["saved"] and data["people_added"] == 3 and data["notes_added"] == 5
    assert data["skipped"][0]["record_id"] == "registry.example.net/note.9004"
    before = _incident(web, incident_id)
    again = web.post(f"/api/incidents/{incident_id}/pfif", content=body, headers=XML).json()
    assert again["people_added"] == 0 and again["notes_added"] == 0
    assert _incident(web, incident_id) == before


def test_import_refusals_are_typed_and_save_nothing(web: Any, incident_id: str) -> None:
    url = f"/api/incidents/{incident_id}/pfif"
    before = _incident(web, incident_id)
    as_json = web.post(url, json={"a": 1})
    assert as_json.status_code == 415
    not_xml = web.post(url, content=b"<pfif", headers=XML)
    assert (not_xml.status_code, not_xml.json()["code"]) == (422, "pfif_not_xml")
    entity = web.post(
        url,
        content=b'<!DOCTYPE p [<!ENTITY e SYSTEM "file:///etc/passwd">]><p>&e;</p>',
        headers=XML,
    )
    assert (entity.status_code, entity.json()["code"]) == (422, "pfif_entity_refused")
    bad = (
        (FIXTURES / "registry-1.4.xml").read_bytes().replace(b"2026-03-06T09:00:00Z", b"not a date")
    )
    refused = web.post(url, content=bad, headers=XML)
    assert refused.status_code == 422
    assert refused.json()["code"] == "invalid_records"
    assert [r["record_id"] for r in refused.json()["summary"]["invalid"]] == [
        "registry.example.net/note.9006"
    ]
    assert _incident(web, incident_id) == before
    kept = web.post(url, params={"skip_invalid": "true"}, content=bad, headers=XML).json()
    assert kept["saved"] and kept["invalid_count"] == 1 and kept["notes_added"] == 4
    missing = web.post("/api/incidents/inc_nope/pfif", content=bad, headers=XML)
    assert missing.status_code == 404


def test_the_pfif_body_limit_is_its_own(tmp_path: Path) -> None:
    from accounts_helpers import signed_in

    from trace_app.settings import TraceSettings
    from trace_app.web.app import create_app

    home = tmp_path / "h"
    settings = TraceSettings(
        home=home,
        database_url=f"sqlite:///{home / 'trace.db'}",
        demo=True,
        max_body_bytes=2048,
        pfif_max_bytes=8192,
        recorded_investigations=tmp_path / "no-recorded-runs.json",
    )
    with signed_in(create_app(settings)) as client:  # an admin: pfif:write
        incident = client.get("/api/incidents").json()["items"][0]["id"]
        body = (FIXTURES / "registry-1.4.xml").read_bytes()
        assert 2048 < len(body) < 8192
        ok = client.post(f"/api/incidents/{incident}/pfif", content=body, headers=XML)
        assert ok.status_code == 200
        big = client.post(f"/api/incidents/{incident}/pfif", content=body * 3, headers=XML)
        assert big.status_code == 413


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("TRACE_PFIF_DOMAIN", "cli.example.org")
    return tmp_path


def _incident_ids(runner: CliRunner) -> dict[str, str]:
    listing = runner.invoke(trace_cli, ["incident", "list"]).output
    return {
        line.split("\t")[1]: line.split("\t")[0] for line in listing.splitlines() if "\t" in line
    }


def test_cli_export_import_and_csv(cli_env: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(trace_cli, ["incident", "create", "A"]).exit_code == 0
    assert runner.invoke(trace_cli, ["incident", "create", "B"]).exit_code == 0
    ids = _incident_ids(runner)
    source = FIXTURES / "registry-1.2.xml"
    done = runner.invoke(trace_cli, ["pfif", "import", str(source), "--incident", ids["A"]])
    assert done.exit_code == 0, done.output
    assert "people added: 2" in done.output
    out = cli_env / "a.xml"
    exported = runner.invoke(trace_cli, ["pfif", "export", ids["A"], "-o", str(out)])
    assert exported.exit_code == 0, exported.output
    persons, notes = person_finder_parse(out.read_bytes())
    assert len(persons) == 2 and len(notes) == 2
    into_b = runner.invoke(trace_cli, ["pfif", "import", str(out), "--incident", ids["B"]])
    assert "people added: 2" in into_b.output
    shelter = cli_env / "list.csv"
    shelter.write_text("full_name,age\nAsha Rai,30\n,4\nBo,x\n", encoding="utf-8")
    refused = runner.invoke(
        trace_cli, ["import", "csv", str(shelter), "--incident", ids["B"], "--source", "Camp 2"]
    )
    assert refused.exit_code == 1
    assert "line 3: " in refused.output and "line 4: " in refused.output
    kept = runner.invoke(
        trace_cli,
        [
            "import",
            "csv",
            str(shelter),
            "--incident",
            ids["B"],
            "--source",
            "Camp 2",
            "--skip-invalid",
        ],
    )
    assert kept.exit_code == 0 and "people added: 1" in kept.output
    # the incident by its name, in any case, as `trace incident list` shows it
    by_name = runner.invoke(
        trace_cli, ["import", "csv", str(shelter), "--incident", "b", "--source", "Camp 3"]
    )
    assert by_name.exit_code == 1 and "line 3: " in by_name.output
    nowhere = runner.invoke(
        trace_cli, ["import", "csv", str(shelter), "--incident", "Nowhere", "--source", "C"]
    )
    assert nowhere.exit_code == 2
    assert "No incident with id or name 'Nowhere'" in nowhere.output
    unknown = runner.invoke(trace_cli, ["pfif", "export", "inc_nope", "-o", str(out)])
    assert unknown.exit_code == 2 and "No incident" in unknown.output
    assert len(person_finder_parse(out.read_bytes())[0]) == 2  # the old file is untouched
