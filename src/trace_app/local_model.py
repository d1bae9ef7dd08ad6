"""Which model the demo, ``trace eval`` and ``trace record-demo`` use when nothing is set.

A configured model wins: ``NVIDIA_NIM_API_KEY`` (NVIDIA's hosted API, the default base
URL) or ``TRACE_MODEL`` / ``TRACE_MODEL_BASE_URL`` (any OpenAI-compatible server). With
none of them set, :func:`model_for_commands` starts the embedded local model server
(:mod:`modelgate.local_server`) and points Trace at it through the same environment
variables a user would set, so the app, the ledger and the investigation take their
ordinary path. The server is stopped when the ``with`` block ends.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from modelgate.local_server import LocalModelServer, embedded_settings
from modelgate.types import StructuredOutput
from trace_app.investigation.model_settings import NVIDIA_KEY_ENV, ModelSettings

CONFIGURING_VARIABLES = (NVIDIA_KEY_ENV, "TRACE_MODEL", "TRACE_MODEL_BASE_URL")


@dataclass(frozen=True, slots=True)
class ModelChoice:
    settings: ModelSettings
    local_server: LocalModelServer | None

    @property
    def description(self) -> str:
        where = "embedded local model" if self.local_server is not None else "configured model"
        return f"{where} {self.settings.model} at {self.settings.base_url}"


def model_is_configured(env: MutableMapping[str, str]) -> bool:
    return any(env.get(name, "").strip() for name in CONFIGURING_VARIABLES)


def point_trace_at(server: LocalModelServer, env: MutableMapping[str, str]) -> None:
    """Set Trace's model variables for the local server (OpenAI-compatible, llama.cpp)."""
    env["TRACE_MODEL_PROVIDER"] = "openai"
    env["TRACE_MODEL"] = server.model_alias
    env["TRACE_MODEL_BASE_URL"] = server.base_url
    env["TRACE_MODEL_STRUCTURED_OUTPUT"] = StructuredOutput.JSON_OBJECT_SCHEMA.value


@contextmanager
def model_for_commands(
    *, log_dir: Path | None = None, env: MutableMapping[str, str] | None = None
) -> Iterator[ModelChoice]:
    """The configured model, or the embedded one started for the duration of the block.

    Raises :class:`modelgate.local_server.LocalModelMissing` or ``LocalServerFailed`` when
    the embedded model is needed but cannot start.
    """
    environ = os.environ if env is None else env
    if model_is_configured(environ):
        yield ModelChoice(ModelSettings.from_env(environ), None)
        return
    log_path = log_dir / "local-model-server.log" if log_dir is not None else None
    with _sigterm_unwinds(), LocalModelServer(embedded_settings(log_path=log_path)) as server:
        saved = {k: environ.get(k) for k in _TRACE_MODEL_VARIABLES}
        point_trace_at(server, environ)
        try:
            yield ModelChoice(ModelSettings.from_env(environ), server)
        finally:
            for key, value in saved.items():
                if value is None:
                    environ.pop(key, None)
                else:
                    environ[key] = value


@contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """Make SIGTERM raise SystemExit here, so ``with`` blocks stop the model server.

    uvicorn re-raises the SIGTERM it caught after shutting down; with the default handler
    that would end the process before any cleanup ran.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def unwind(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, unwind)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


_TRACE_MODEL_VARIABLES = (
    "TRACE_MODEL_PROVIDER",
    "TRACE_MODEL",
    "TRACE_MODEL_BASE_URL",
    "TRACE_MODEL_STRUCTURED_OUTPUT",
)
