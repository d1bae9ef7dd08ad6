"""Refused checks still display saved and recorded results, with the default model.

The shipped REPLAYED runs were recorded with the embedded model, so under the default
model (Nemotron) their fingerprint never matches a check: a check without passphrase is
UNAVAILABLE. It must still carry (API, CLI) and show (panel) the report's most recent
saved or replayed run, labelled with its own mode, model and run time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from accounts_helpers import TEST_OPERATOR, signed_in_with
from fastapi.testclient import TestClient

from modelgate.ledger import JsonFileLedger
from modelgate.providers import ScriptedProvider
from trace_app import demo_reset
from trace_app.investigation.model_settings import NEMOTRON_MODEL, ModelSettings
from trace_app.investigation.recorded import PATH_ENV, RecordedRun, load_recorded
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.web.app import create_app

from .conftest import (
    CAP_ENV,
    PASSPHRASE,
    community_relay_id,
    make_service,
    police_report_id,
    publish,
    run_count,
)

CAMP = "Tatopani Relief Camp Demo"


@pytest.fixture
def shipped(monkeypatch: pytest.MonkeyPatch, db: Database) -> dict[str, RecordedRun]:
    """The store reset with the shipped recordings (default location), default model."""
    monkeypatch.delenv(PATH_ENV)
    monkeypatch.delenv("TRACE_MODEL", raising=False)
    assert ModelSettings.from_env().model == NEMOTRON_MODEL
    settings = TraceSettings(home=Path("unused"), database_url="sqlite://")
    with db.session() as session:
        # the shipped file: the default place
        demo_reset.reset(session, settings, actor=TEST_OPERATOR)
    runs = load_recorded()
    assert runs and all(r.model != NEMOTRON_MODEL for r in runs)
    by_text = {r.citations[0].excerpt: r for r in runs}
    assert run_count(db) == len(runs)
    return by_text


class Api:
    def __init__(self, http: TestClient, provider: ScriptedProvider, ledger_path: Path) -> None:
        self.http = http
        self.provider = provider
        self.ledger_path = ledger_path

    def investigate(self, report_id: str, body: dict[str, Any]) -> Any:
        response = self.http.post(f"/api/reports/{report_id}/investigate", json=body)
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture
def api(tmp_path: Path, db: Database, ledger_path: Path) -> Iterator[Api]:
    settings = TraceSettings(home=tmp_path / "home", database_url="sqlite://unused")
    app = create_app(settings, db=db)
    provider = ScriptedProvider(model=NEMOTRON_MODEL, name="nim")
    app.state.investigation = make_service(db, ledger_path, provider)
    with signed_in_with(app, base_url="http://127.0.0.1", follow_redirects=True) as http:
        yield Api(http, provider, ledger_path)


def _recorded_for(shipped: dict[str, RecordedRun], db: Database, report_id: str) -> RecordedRun:
    with db.session() as session:
        from trace_app.store.models import Report

        report = session.get(Report, report_id)
        assert report is not None
        return shipped[report.original_text]


@pytest.mark.parametrize("body", [{}, {"passphrase": ""}, {"passphrase": "wrong"}])
def test_refused_check_carries_the_replayed_run_under_the_default_model(
    shipped: dict[str, RecordedRun], api: Api, db: Database, body: dict[str, Any]
) -> None:
    for report_id in (police_report_id(db), community_relay_id(db)):
        recorded = _recorded_for(shipped, db, report_id)
        before = api.http.get(f"/api/reports/{report_id}/investigation").json()
        assert before["mode"] == "REPLAYED"

        result = api.investigate(report_id, body)

        assert (result["status"], result["mode"], result["saved"]) == ("UNAVAILABLE", None, False)
        assert result["model"] is None and result["run_at"] is None
        shown = result["latest_saved_run"]
        assert shown == before  # exactly what the saved-result endpoint shows
        # both seeded reports hold relay or hearsay cues, so under today's rules they show
        # NEEDS_REVIEW whatever status the recording was saved with
        assert (shown["status"], shown["mode"], shown["model"]) == (
            "NEEDS_REVIEW",
            "REPLAYED",
            recorded.model,
        )
        assert shown["run_at"] == recorded.run_at.isoformat()
        assert shown["fingerprint"] == recorded.fingerprint != result["fingerprint"]
    assert api.provider.requests == [] and not api.ledger_path.exists()


def test_live_checks_switched_off_still_show_the_recorded_run(
    shipped: dict[str, RecordedRun], api: Api, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRACE_LIVE_PASSPHRASE")
    api.http.app.state.investigation = make_service(db, api.ledger_path, api.provider)
    result = api.investigate(police_report_id(db), {"passphrase": PASSPHRASE})
    assert result["status"] == "UNAVAILABLE"
    assert "switched off" in result["reason"]
    assert result["latest_saved_run"]["mode"] == "REPLAYED"
    assert api.provider.requests == []


def test_budget_limit_still_shows_the_recorded_run(
    shipped: dict[str, RecordedRun], api: Api, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAP_ENV, "1")
    publish_id = publish(db, CAMP, "I met Maya Gurung, 24, at the camp gate myself.")
    api.provider.add({"attribution": "DIRECT", "referenced_source": "NONE"})
    spent = api.investigate(publish_id, {"passphrase": PASSPHRASE})
    assert spent["status"] == "COMPLETED"

    result = api.investigate(police_report_id(db), {"passphrase": PASSPHRASE})

    assert (result["status"], result["mode"]) == ("BUDGET_LIMIT", None)
    assert result["latest_saved_run"]["mode"] == "REPLAYED"
    assert len(api.provider.requests) == 1
    assert JsonFileLedger(api.ledger_path, cap=1).snapshot().requests == 1


def test_cached_stays_exact_and_a_check_without_saved_run_carries_none(
    shipped: dict[str, RecordedRun], api: Api, db: Database
) -> None:
    fresh = publish(db, CAMP, "I met Maya Gurung, 24, at the camp gate myself.")
    refused = api.investigate(fresh, {})
    assert refused["status"] == "UNAVAILABLE" and refused["latest_saved_run"] is None

    api.provider.add({"attribution": "DIRECT", "referenced_source": "NONE"})
    live = api.investigate(fresh, {"passphrase": PASSPHRASE})
    assert (live["status"], live["mode"], live["latest_saved_run"]) == ("COMPLETED", "LIVE", None)
    cached = api.investigate(fresh, {})
    assert (cached["status"], cached["mode"]) == ("COMPLETED", "CACHED")
    assert cached["fingerprint"] == live["fingerprint"] and cached["run_at"] == live["run_at"]
    assert cached["latest_saved_run"] is None
    assert len(api.provider.requests) == 1


def _csrf(page_html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page_html)
    assert found is not None
    return found.group(1)


def test_panel_shows_the_recorded_run_beside_the_refusal(
    shipped: dict[str, RecordedRun], api: Api, db: Database
) -> None:
    report_id = police_report_id(db)
    recorded = _recorded_for(shipped, db, report_id)
    page = api.http.get(f"/reports/{report_id}")
    assert 'data-mode="REPLAYED"' in page.text
    token = _csrf(page.text)

    card = api.http.post(
        f"/reports/{report_id}/investigate",
        data={"passphrase": "", "csrf_token": token},
        headers={"HX-Request": "true"},
    ).text

    top, _, below = card.partition('id="investigation-latest-saved"')
    assert 'id="investigation-card"' in top and 'data-status="UNAVAILABLE"' in top
    assert 'data-mode=""' in top
    assert "Most recent saved result for this report" in below
    assert 'id="investigation-saved-card"' in below and 'data-mode="REPLAYED"' in below
    assert 'data-status="NEEDS_REVIEW"' in below  # re-decided by today's rules
    assert recorded.model in below
    assert recorded.run_at.strftime("%Y-%m-%d %H:%M:%S") in below
    assert api.provider.requests == []

    full = api.http.post(
        f"/reports/{report_id}/investigate", data={"passphrase": "", "csrf_token": token}
    ).text
    assert "<html" in full and 'id="investigation-saved-card"' in full


def test_cli_prints_the_recorded_run_beside_the_refusal(
    shipped: dict[str, RecordedRun], db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from typer.testing import CliRunner

    from trace_app.cli import app as trace_cli

    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "cli-home"))
    monkeypatch.delenv("TRACE_LIVE_PASSPHRASE")
    assert CliRunner().invoke(trace_cli, ["reset"]).exit_code == 0
    cli_db = Database.from_settings(TraceSettings.from_env())
    try:
        report_id = police_report_id(cli_db)
    finally:
        cli_db.dispose()
    recorded = _recorded_for(shipped, db, police_report_id(db))

    shown = CliRunner().invoke(trace_cli, ["investigate", report_id, "--json", "--no-prompt"])
    assert shown.exit_code == 0, shown.output
    body = json.loads(shown.output)
    assert body["status"] == "UNAVAILABLE"
    assert (body["latest_saved_run"]["mode"], body["latest_saved_run"]["model"]) == (
        "REPLAYED",
        recorded.model,
    )
    text = CliRunner().invoke(trace_cli, ["investigate", report_id, "--no-prompt"]).output
    assert "most recent saved result (not this check's answer)" in text
    assert "mode REPLAYED" in text and recorded.model in text
