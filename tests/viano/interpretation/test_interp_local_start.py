"""`viano interpret` starts the embedded model on a port of its own when nothing answers at
the configured loopback URL, and a provider that is not running is RETRY_PENDING, never
BLOCKED after one try (ADR 0077).

The embedded model is replaced by a stub chat server standing in for it (the same HTTP
path: the bundled adapter, the gateway, validation); which port it got is only known to
the run, never to the configuration or its fingerprint.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from interp_support import CASE_ID, PACKAGE_ID, answer_for, built_store, prepared_context
from typer.testing import CliRunner

from modelgate import local_server
from modelgate.local_server import LocalModelMissing, free_local_port
from modelgate.testing import StubChatServer, StubResponse
from viano_bug_analysis.cli import app
from viano_bug_analysis.llm import GatewayConfig
from viano_bug_analysis.llm.local_model import model_for

runner = CliRunner()


def _silent_loopback_config(tmp_path: Path) -> Path:
    """The shipped embedded configuration, on a loopback port where nothing listens."""
    text = (Path(__file__).resolve().parents[3] / "config" / "llm.local.toml").read_text(
        encoding="utf-8"
    )
    path = tmp_path / "llm.toml"
    path.write_text(text.replace(":8765/", f":{free_local_port()}/"), encoding="utf-8")
    return path


class FakeEmbedded:
    """Stands in for ``LocalModelServer``: 'starts' by pointing at a stub chat server."""

    started: ClassVar[list[FakeEmbedded]] = []
    stopped: ClassVar[list[FakeEmbedded]] = []
    base: ClassVar[str] = ""

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.base_url = FakeEmbedded.base
        self.pid = 4242

    def start(self) -> FakeEmbedded:
        FakeEmbedded.started.append(self)
        return self

    def stop(self) -> None:
        FakeEmbedded.stopped.append(self)


@pytest.fixture
def fake_embedded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> type[FakeEmbedded]:
    FakeEmbedded.started, FakeEmbedded.stopped = [], []
    model = tmp_path / "model.gguf"
    model.write_bytes(b"")
    monkeypatch.setattr(local_server, "LocalModelServer", FakeEmbedded)
    monkeypatch.setattr(local_server, "find_embedded_model", lambda: model)
    return FakeEmbedded


def test_interpret_starts_the_embedded_model_when_nothing_answers(
    tmp_path: Path, fake_embedded: type[FakeEmbedded]
) -> None:
    store = built_store(tmp_path)
    config = _silent_loopback_config(tmp_path)
    good = answer_for(prepared_context(store).catalogue)
    with StubChatServer([StubResponse.answer(json.dumps(good))]) as server:
        fake_embedded.base = server.base_url
        args = ["interpret", str(store.root), CASE_ID, PACKAGE_ID, "--json"]
        result = runner.invoke(app, [*args, "--config", str(config)])
        assert len(server.requests) == 1
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["status"] == "COMPLETED"
    assert len(fake_embedded.started) == 1 and fake_embedded.stopped == fake_embedded.started
    settings = fake_embedded.started[0].settings
    assert settings.port == 0  # a free port for this run
    assert settings.n_ctx == 8192  # the configured window
    with store.current(CASE_ID, PACKAGE_ID).open() as reader:
        round_record = json.loads(reader.read(payload["round_ref"]))
    # the configuration (and its fingerprint) keep the configured URL, not the run's port
    assert round_record["configuration_fingerprint"] == GatewayConfig.load(config).fingerprint()


def test_interpret_starts_nothing_for_a_case_it_cannot_interpret(
    tmp_path: Path, fake_embedded: type[FakeEmbedded]
) -> None:
    store = built_store(tmp_path)
    config = _silent_loopback_config(tmp_path)
    args = ["interpret", str(store.root), CASE_ID, "absent", "--json", "--config", str(config)]
    result = runner.invoke(app, args)
    assert json.loads(result.stdout)["error"]["code"] == "interpretation.package_not_found"
    assert fake_embedded.started == []


def test_a_provider_not_running_is_retry_pending_not_blocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing answers and the embedded model cannot start: the refused connection is a
    transient failure of attempt 1 of 3 (RETRY_PENDING with a due time), and a second
    call before that time sends nothing and says the same."""

    def missing() -> Path:
        raise LocalModelMissing("model file not found: (test)")

    monkeypatch.setattr(local_server, "find_embedded_model", missing)
    store = built_store(tmp_path)
    config = _silent_loopback_config(tmp_path)
    args = ["interpret", str(store.root), CASE_ID, PACKAGE_ID, "--json", "--config", str(config)]
    first = runner.invoke(app, args)
    payload = json.loads(first.stdout)
    assert payload["status"] == "RETRY_PENDING", first.output
    assert first.exit_code == 11 and payload["due_at"]
    again = json.loads(runner.invoke(app, args).stdout)
    assert again["status"] == "RETRY_PENDING" and again["due_at"] == payload["due_at"]


def test_a_remote_or_answering_url_is_used_as_it_is(tmp_path: Path) -> None:
    remote = GatewayConfig.from_mapping(
        {
            "providers": [
                {"name": "r", "base_url": "https://models.example.invalid/v1", "model": "m"}
            ]
        }
    )
    with model_for(remote, tmp_path) as endpoint:
        assert endpoint.endpoints() == {}
        assert endpoint.where == "using the configured server at https://models.example.invalid/v1"
    with StubChatServer([]) as server:
        local = GatewayConfig.from_mapping(
            {"providers": [{"name": "l", "base_url": server.base_url, "model": "m"}]}
        )
        with model_for(local, tmp_path) as endpoint:
            assert endpoint.endpoints() == {}


def test_a_required_model_that_cannot_start_is_a_demo_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from viano_bug_analysis.demo_data import DemoError

    def missing() -> Path:
        raise LocalModelMissing("model file not found: (test)")

    monkeypatch.setattr(local_server, "find_embedded_model", missing)
    config = GatewayConfig.load(_silent_loopback_config(tmp_path))
    with pytest.raises(DemoError, match="model file not found"):
        with model_for(config, tmp_path):
            pass
