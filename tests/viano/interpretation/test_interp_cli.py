"""`viano interpret` (outcome, index, pointers, exit code by outcome) and `viano show`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from interp_support import CASE_ID, PACKAGE_ID, answer_for, built_store, prepared_context
from typer.testing import CliRunner

from modelgate.testing import StubChatServer, StubResponse
from viano_bug_analysis.cli import app

runner = CliRunner()


def _config(tmp_path: Path, base_url: str, max_attempts: int = 2, key_env: str = "") -> Path:
    path = tmp_path / "llm.toml"
    path.write_text(
        f'[[providers]]\nname = "stub"\nbase_url = "{base_url}"\nmodel = "m"\n'
        f'api_key_env = "{key_env}"\ntimeout_s = 10\nmax_output_tokens = 2048\n'
        f"[retry]\nmax_attempts = {max_attempts}\nbackoff_s = [30]\n",
        encoding="utf-8",
    )
    return path


def _interpret(store_root: Path, config: Path, *extra: str):  # type: ignore[no-untyped-def]
    args = ["interpret", str(store_root), CASE_ID, PACKAGE_ID, "--json", "--config", str(config)]
    return runner.invoke(app, [*args, *extra])


def test_interpret_json_and_show_renders_the_summary(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    good = answer_for(prepared_context(store).catalogue, summary="Saved drafts lose files.")
    with StubChatServer([StubResponse.answer(json.dumps(good))]) as server:
        args = ["interpret", str(store.root), CASE_ID, PACKAGE_ID, "--json"]
        result = runner.invoke(app, [*args, "--config", str(_config(tmp_path, server.base_url))])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["status"] == "COMPLETED" and payload["interpretation_index"] == 1
    assert payload["pointers"]["case_interpretation_summary"].endswith("case_interpretation.md")
    assert payload["package_generation"] == 5 and payload["analysis_revision"] == 1

    shown = runner.invoke(app, ["show", str(store.root), CASE_ID, PACKAGE_ID])
    assert shown.exit_code == 0
    assert "# Case interpretation" in shown.stdout
    assert "Saved drafts lose files\\." in shown.stdout


def test_exit_code_follows_the_outcome(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    with StubChatServer([StubResponse(status=503, body="{}")]) as server:
        config = _config(tmp_path, server.base_url)
        args = ["interpret", str(store.root), CASE_ID, PACKAGE_ID, "--json", "--config"]
        pending = runner.invoke(app, [*args, str(config)])
    assert pending.exit_code == 11
    assert json.loads(pending.stdout)["due_at"]


def test_storage_problem_is_a_json_error(tmp_path: Path) -> None:
    config = _config(tmp_path, "http://127.0.0.1:9/v1")
    result = runner.invoke(
        app,
        [
            "interpret",
            str(tmp_path / "nostore"),
            CASE_ID,
            PACKAGE_ID,
            "--json",
            "--config",
            str(config),
        ],
    )
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["code"] == "store.not_initialized"


def test_a_rejected_answer_exits_10(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    with StubChatServer([StubResponse.answer(json.dumps({"observed_behavior": []}))]) as server:
        result = _interpret(store.root, _config(tmp_path, server.base_url))
    assert result.exit_code == 10, result.output
    payload = json.loads(result.stdout)
    assert payload["status"] == "ERROR" and payload["violations"]
    assert payload["rejection_ref"].startswith("analysis/interpretations/0001/errors/")


def test_nothing_sent_exits_12(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = built_store(tmp_path)
    monkeypatch.delenv("VIANO_CLI_TEST_ABSENT_KEY", raising=False)
    with StubChatServer([StubResponse.answer("{}")]) as server:
        config = _config(tmp_path, server.base_url, key_env="VIANO_CLI_TEST_ABSENT_KEY")
        result = _interpret(store.root, config)
        assert server.count == 0
    assert result.exit_code == 12, result.output
    payload = json.loads(result.stdout)
    assert payload["status"] == "DEFERRED" and payload["error"]["code"] == "not_configured"


def test_blocked_exits_13_and_resume_with_a_new_attempt_id_completes(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    good = answer_for(prepared_context(store).catalogue)
    with StubChatServer([StubResponse(status=503, body="{}")]) as server:
        config = _config(tmp_path, server.base_url, max_attempts=1)
        blocked = _interpret(store.root, config)
        assert blocked.exit_code == 13, blocked.output
        assert json.loads(blocked.stdout)["status"] == "BLOCKED"

        refused = _interpret(store.root, config, "--attempt-id", "second")
        assert refused.exit_code == 1
        assert json.loads(refused.stdout)["error"]["code"] == ("interpretation.resumption_required")
        same_id = _interpret(store.root, config, "--resume")
        assert same_id.exit_code == 1
        assert json.loads(same_id.stdout)["error"]["code"] == (
            "interpretation.resumption_needs_new_attempt_id"
        )
        assert server.count == 1  # the refusals sent nothing

        server.add(StubResponse.answer(json.dumps(good)))
        resumed = _interpret(store.root, config, "--resume", "--attempt-id", "second")
        assert server.count == 2
    assert resumed.exit_code == 0, resumed.output
    payload = json.loads(resumed.stdout)
    assert payload["status"] == "COMPLETED" and payload["attempt_id"] == "second"
