"""`viano demo`: the whole path on a real bug report, with a provider reading the context.

The model is replaced by a provider that writes a valid answer for the context it is
sent (through LLMGateway, the interpreter and its validation, unchanged); the local
model server is not started because the configured URL is not loopback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from interp_support import answer_for

from modelgate.providers import Provider
from modelgate.types import ModelRequest, ProviderResponse, Usage
from viano_bug_analysis import demo
from viano_bug_analysis.analysis.catalogue import Catalogue
from viano_bug_analysis.demo import DemoError, extract_bug, run_demo
from viano_bug_analysis.llm import LLMGateway

pytestmark = pytest.mark.realdata

CONFIG = """
[[providers]]
name = "remote"
adapter = "openai"
base_url = "http://192.0.2.1:9/v1"
model = "context-reader"
timeout_s = 5
structured_output = "json_schema"

[retry]
max_attempts = 1
"""


class ContextReader(Provider):
    name = "remote"
    model = "context-reader"
    timeout_s = 5.0

    async def complete(self, request: ModelRequest) -> ProviderResponse:
        user = request.messages[-1].content
        context = json.loads(user[user.index("{") :])
        answer = answer_for(Catalogue(context["catalogue"]))
        return ProviderResponse(
            text=json.dumps(answer),
            model=self.model,
            usage=Usage(prompt_tokens=10, completion_tokens=5, source="provider"),
        )


def test_demo_runs_a_real_bug_end_to_end(
    real_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REAL_DATA_DIR", str(real_data_dir))
    config = tmp_path / "llm.toml"
    config.write_text(CONFIG, encoding="utf-8")
    real_gateway = LLMGateway

    def scripted(cfg: object, **kwargs: object) -> LLMGateway:
        return real_gateway(cfg, providers=[ContextReader()])  # type: ignore[arg-type]

    monkeypatch.setattr("viano_bug_analysis.llm.LLMGateway", scripted)
    lines: list[str] = []
    code = run_demo(config, demo.DEFAULT_BUG_ID, tmp_path / "run", lines.append)
    text = "\n".join(lines)
    assert code == 0, text
    assert "outcome: COMPLETED" in text
    assert "using the configured server at http://192.0.2.1:9/v1" in text
    raw = tmp_path / "run" / "input" / f"bug-{demo.DEFAULT_BUG_ID}.json"
    source = real_data_dir / demo.DEFAULT_BUG_FILE
    assert raw.read_bytes().strip() in source.read_bytes()  # copied byte for byte
    assert (tmp_path / "run" / "store").is_dir()


def test_unknown_bug_and_missing_data_are_clear_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_data_dir: Path
) -> None:
    with pytest.raises(DemoError, match="bug 1 is not in"):
        extract_bug(real_data_dir / demo.DEFAULT_BUG_FILE, 1, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()
    monkeypatch.setenv("REAL_DATA_DIR", str(tmp_path / "absent"))
    with pytest.raises(DemoError, match="REAL_DATA_DIR"):
        demo.real_data_dir()


def test_demo_needs_nothing_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No REAL_DATA_DIR and no data folder next to the current one: the report shipped
    in the package is interpreted."""
    monkeypatch.delenv("REAL_DATA_DIR", raising=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    config = tmp_path / "llm.toml"
    config.write_text(CONFIG, encoding="utf-8")
    real_gateway = LLMGateway

    def scripted(cfg: object, **kwargs: object) -> LLMGateway:
        return real_gateway(cfg, providers=[ContextReader()])  # type: ignore[arg-type]

    monkeypatch.setattr("viano_bug_analysis.llm.LLMGateway", scripted)
    lines: list[str] = []
    code = run_demo(config, demo.DEFAULT_BUG_ID, None, lines.append)
    text = "\n".join(lines)
    assert code == 0, text
    assert "report shipped with Viano" in text and "outcome: COMPLETED" in text
    assert f"case {demo.SHIPPED_CASE_ID}" in text
    runs = list((empty / ".viano-local" / "demo").iterdir())
    assert len(runs) == 1 and (runs[0] / "input" / "report.md").is_file()
    with pytest.raises(DemoError, match="REAL_DATA_DIR"):  # --real still needs the data
        run_demo(config, demo.DEFAULT_BUG_ID, tmp_path / "real", lines.append, real=True)
