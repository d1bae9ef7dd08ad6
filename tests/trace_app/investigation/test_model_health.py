"""A model server that is not healthy before a call: UNAVAILABLE, nothing reserved."""

from __future__ import annotations

from pathlib import Path

from accounts_helpers import signed_in_with

from trace_app.investigation.vocabulary import Status
from trace_app.settings import TraceSettings
from trace_app.web.app import create_app

from .conftest import PASSPHRASE, Harness, publish, run_count

CAMP = "Tatopani Relief Camp Demo"
DIRECT_TEXT = "I met Maya Gurung, 24, at the camp gate and wrote down her name myself."
DIRECT = {"attribution": "DIRECT", "referenced_source": "NONE"}
RESTARTING = "The local model server stopped and is restarting (attempt 1); no model was asked."


async def test_unhealthy_server_is_unavailable_and_reserves_nothing(harness: Harness) -> None:
    report_id = publish(harness.db, CAMP, DIRECT_TEXT)
    harness.provider.add(DIRECT)
    harness.service.model_health = lambda: RESTARTING

    result = await harness.service.investigate(report_id, PASSPHRASE)

    assert result.status is Status.UNAVAILABLE and result.mode is None
    assert result.reason == RESTARTING
    assert harness.provider.requests == [] and harness.built == []
    assert not harness.ledger_path.exists()  # nothing reserved
    assert run_count(harness.db) == 0


async def test_wrong_passphrase_is_told_before_the_server_state(harness: Harness) -> None:
    report_id = publish(harness.db, CAMP, DIRECT_TEXT)
    harness.service.model_health = lambda: RESTARTING
    result = await harness.service.investigate(report_id, "wrong")
    assert result.status is Status.UNAVAILABLE and "passphrase" in result.reason


async def test_healthy_server_goes_ahead(harness: Harness) -> None:
    report_id = publish(harness.db, CAMP, DIRECT_TEXT)
    harness.provider.add(DIRECT)
    checked: list[int] = []
    harness.service.model_health = lambda: checked.append(1) or None

    result = await harness.service.investigate(report_id, PASSPHRASE)

    assert result.status is Status.COMPLETED and checked == [1]
    assert harness.requests_counted() == 1


def test_panel_and_api_say_the_model_is_restarting(
    sqlite_settings: TraceSettings, tmp_path: Path
) -> None:
    state = {"reason": RESTARTING}
    app = create_app(sqlite_settings, model_health=lambda: state["reason"])
    with signed_in_with(app, base_url="http://127.0.0.1", follow_redirects=True) as http:
        incident = http.get("/api/incidents").json()["items"][0]["id"]
        report = http.get(f"/api/incidents/{incident}/reports").json()["items"][-1]["id"]
        page = http.get(f"/reports/{report}").text
        assert 'id="model-notice"' in page and "is restarting" in page
        answer = http.post(f"/api/reports/{report}/investigate", json={"passphrase": PASSPHRASE})
        assert answer.json()["status"] == "UNAVAILABLE"
        assert "restarting" in answer.json()["reason"]
        assert http.get("/api/ledger").json()["requests"] == 0
        state["reason"] = None
        assert 'id="model-notice"' not in http.get(f"/reports/{report}").text
