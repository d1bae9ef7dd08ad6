"""People read rejections grouped by rule; commands without --config use the embedded
default when the current folder has no config/llm.local.toml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from interp_support import CASE_ID, PACKAGE_ID, answer_for, built_store, prepared_context
from typer.testing import CliRunner

from modelgate.testing import StubChatServer, StubResponse
from viano_bug_analysis.analysis.command import violation_lines
from viano_bug_analysis.cli import app
from viano_bug_analysis.llm import GatewayConfig, GatewayConfigError
from viano_bug_analysis.llm.config import resolve_config

REPO = Path(__file__).resolve().parents[3]
runner = CliRunner()


def test_violation_lines_group_by_rule_with_counts_and_first_examples() -> None:
    found = [
        {"rule": "unknown_source", "at": f"/observed_behavior/{i}/source_ids/0", "message": f"B{i}"}
        for i in range(5)
    ]
    found.insert(2, {"rule": "entity_duplicate", "at": "/relevant_entities/1", "message": "twice"})
    lines = violation_lines(found)
    assert lines == [
        "unknown_source: 5",
        "    at /observed_behavior/0/source_ids/0: B0",
        "    at /observed_behavior/1/source_ids/0: B1",
        "    at /observed_behavior/2/source_ids/0: B2",
        "    ... and 2 more",
        "entity_duplicate: 1",
        "    at /relevant_entities/1: twice",
    ]


def test_interpret_prints_rejections_grouped(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    bad = answer_for(prepared_context(store).catalogue)
    bad["observed_behavior"] = [
        {"text": f"Invented {n}.", "source_ids": [f"B{n:04d}"]} for n in range(10, 40)
    ]
    config = tmp_path / "llm.toml"
    with StubChatServer([StubResponse.answer(json.dumps(bad))]) as server:
        config.write_text(
            f'[[providers]]\nname = "stub"\nbase_url = "{server.base_url}"\nmodel = "m"\n'
            "timeout_s = 10\n[retry]\nmax_attempts = 1\n",
            encoding="utf-8",
        )
        result = runner.invoke(
            app, ["interpret", str(store.root), CASE_ID, PACKAGE_ID, "--config", str(config)]
        )
    assert result.exit_code == 10, result.output
    out = result.stdout
    assert "rejected by validation: 30 problems, 1 rules" in out
    assert "- unknown_source: 30" in out
    assert out.count("is not in the catalogue") == 3
    assert "... and 27 more" in out


def test_the_embedded_default_is_the_checkout_config() -> None:
    shipped = GatewayConfig.load(REPO / "config" / "llm.local.toml")
    assert GatewayConfig.embedded().fingerprint() == shipped.fingerprint()


def test_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config, source = resolve_config(None)
    assert config == GatewayConfig.embedded() and "embedded" in source
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "llm.local.toml").write_text(
        '[[providers]]\nname = "mine"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "x"\n',
        encoding="utf-8",
    )
    config, source = resolve_config(None)
    assert config.providers[0].name == "mine" and source.endswith("llm.local.toml")
    with pytest.raises(GatewayConfigError) as error:
        resolve_config(tmp_path / "absent.toml")  # a named file never falls back
    assert error.value.code == "llm.config_unreadable"


def test_interpret_without_config_in_an_empty_folder_reads_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = built_store(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    result = runner.invoke(app, ["interpret", str(store.root), CASE_ID, "nope", "--json"])
    payload = json.loads(result.stdout)
    assert payload["status"] == "error"
    assert payload["error"]["code"] == "interpretation.package_not_found"
