"""`trace demo` / `trace eval`: which model, the embedded server's lifetime, the passphrase.

The embedded server is replaced by a stand-in child (a tiny HTTP server answering
``/v1/models``) that goes through the same ``LocalModelServer`` lifecycle code.
"""

from __future__ import annotations

import logging
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from modelgate import local_server
from modelgate.local_server import LocalModelMissing, LocalServerSettings
from trace_app import local_model
from trace_app.cli import app
from trace_app.investigation.model_settings import ModelSettings
from trace_app.local_model import model_for_commands

STAND_IN = textwrap.dedent(
    """
    import http.server, sys
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"data": []}')
        def log_message(self, *args):
            pass
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
    """
)


@dataclass(frozen=True, slots=True)
class StandIn(LocalServerSettings):
    script: Path = Path()

    def command(self, port: int) -> list[str]:
        return [sys.executable, str(self.script), str(port)]


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StandIn:
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    settings = StandIn(model_path=model, script=script, ready_timeout_s=20, stop_timeout_s=2)
    monkeypatch.setattr(local_server, "RUNTIME_MODULES", ())
    monkeypatch.setattr(local_model, "embedded_settings", lambda log_path=None: settings)
    return settings


def test_configured_model_never_starts_the_embedded_one() -> None:
    env = {"TRACE_MODEL_BASE_URL": "http://127.0.0.1:9/v1", "TRACE_MODEL": "m"}
    assert ModelSettings.from_env(env).configured
    assert ModelSettings.from_env({"NVIDIA_NIM_API_KEY": "k"}).configured
    assert not ModelSettings.from_env({"TRACE_MODEL": "  "}).configured
    model = ModelSettings.from_env(env)
    with model_for_commands(model) as choice:
        assert choice.local_server is None
        assert choice.settings == model
        assert choice.settings.base_url == "http://127.0.0.1:9/v1"


def test_embedded_server_is_handed_back_in_the_settings_only(stand_in: StandIn) -> None:
    env: dict[str, str] = {"TRACE_MODEL_STRUCTURED_OUTPUT": "none", "TRACE_LIVE_PASSPHRASE": "p"}
    model = ModelSettings.from_env(env)
    assert not model.configured
    with model_for_commands(model) as choice:
        server = choice.local_server
        assert server is not None and server.is_running()
        assert choice.settings.base_url == server.base_url
        assert choice.settings.model == "smollm2-135m-instruct"
        assert choice.settings.adapter == "openai"
        assert choice.settings.structured_output.value == "json_object_schema"
        assert choice.settings.api_key_env == ""  # no key for a loopback server
        assert choice.settings.passphrase == "p"  # kept from the settings given
    assert not server.is_running()
    assert env == {"TRACE_MODEL_STRUCTURED_OUTPUT": "none", "TRACE_LIVE_PASSPHRASE": "p"}


def test_missing_embedded_model_is_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_server, "EMBEDDED_MODEL_PACKAGE", "no_such_model_package_xyz")
    with pytest.raises(LocalModelMissing), model_for_commands(ModelSettings.from_env({})):
        pass


def test_demo_prints_a_fresh_passphrase_once_and_logs_it_nowhere(
    stand_in: StandIn,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    for name in ("NVIDIA_NIM_API_KEY", "TRACE_MODEL", "TRACE_MODEL_BASE_URL", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("TRACE_LIVE_PASSPHRASE", raising=False)
    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "home"))
    served: dict[str, object] = {}

    def fake_run(
        web_app: Any, host: str, port: int, log_level: str, proxy_headers: bool = True
    ) -> None:
        import os

        assert proxy_headers is False  # forwarded headers only from TRACE_TRUSTED_PROXIES

        model = web_app.state.investigation.model  # what the app's live checks use
        served.update(host=host, port=port, passphrase=model.passphrase)
        served["model_url"] = model.base_url
        # handed to the app as an argument, never through the environment
        assert "TRACE_LIVE_PASSPHRASE" not in os.environ
        assert "TRACE_MODEL_BASE_URL" not in os.environ
        logging.getLogger("trace_app").info("serving")

    import uvicorn

    monkeypatch.setattr(uvicorn, "run", fake_run)
    caplog.set_level(logging.DEBUG)
    result = CliRunner().invoke(app, ["demo", "--port", "18123"])
    assert result.exit_code == 0, result.output
    assert served["host"] == "127.0.0.1" and served["port"] == 18123
    passphrase = str(served["passphrase"])
    assert len(passphrase) >= 16
    assert result.output.count(passphrase) == 1
    assert passphrase not in caplog.text
    assert str(served["model_url"]).startswith("http://127.0.0.1:")
    import os

    assert "TRACE_LIVE_PASSPHRASE" not in os.environ  # gone with the demo
    second = CliRunner().invoke(app, ["demo", "--port", "18123"])
    assert second.exit_code == 0
    assert served["passphrase"] != passphrase  # a new one for every start
