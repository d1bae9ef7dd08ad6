"""`viano interpret` (outcome, index, pointers, exit code by outcome) and `viano show`."""

from __future__ import annotations

import json
from pathlib import Path

from interp_support import CASE_ID, PACKAGE_ID, answer_for, built_store, prepared_context
from typer.testing import CliRunner

from modelgate.testing import StubChatServer, StubResponse
from viano_bug_analysis.cli import app

runner = CliRunner()


def _config(tmp_path: Path, base_url: str) -> Path:
    path = tmp_path / "llm.toml"
    path.write_text(
        f'[[providers]]\nname = "stub"\nbase_url = "{base_url}"\nmodel = "m"\n'
        "timeout_s = 10\nmax_output_tokens = 2048\n[retry]\nmax_attempts = 2\nbackoff_s = [30]\n",
        encoding="utf-8",
    )
    return path


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
