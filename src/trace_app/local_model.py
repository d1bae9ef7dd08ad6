"""Which model the demo and ``trace eval`` use when nothing is set.

A configured model wins: ``NVIDIA_NIM_API_KEY`` (NVIDIA's hosted API, the default base
URL) or ``TRACE_MODEL`` / ``TRACE_MODEL_BASE_URL`` (any OpenAI-compatible server), as
:class:`ModelSettings` reads them (``configured``). With none of them set,
:func:`model_for_commands` starts the embedded local model server
(:mod:`modelgate.local_server`) and hands back the settings pointed at it
(:meth:`ModelSettings.for_local_server`), so the app, the ledger and the investigation
take their ordinary path; the environment is neither read nor changed here. The server is
stopped when the ``with`` block ends.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from modelgate.local_server import LocalModelServer, embedded_settings
from trace_app.investigation.model_settings import ModelSettings


@dataclass(frozen=True, slots=True)
class ModelChoice:
    settings: ModelSettings
    local_server: LocalModelServer | None

    @property
    def description(self) -> str:
        where = "embedded local model" if self.local_server is not None else "configured model"
        return f"{where} {self.settings.model} at {self.settings.base_url}"


@contextmanager
def model_for_commands(
    model: ModelSettings, *, log_dir: Path | None = None
) -> Iterator[ModelChoice]:
    """``model`` when it is configured, or the embedded model started for the duration of
    the block, with ``model`` pointed at it.

    Raises :class:`modelgate.local_server.LocalModelMissing` or ``LocalServerFailed`` when
    the embedded model is needed but cannot start.
    """
    if model.configured:
        yield ModelChoice(model, None)
        return
    log_path = log_dir / "local-model-server.log" if log_dir is not None else None
    with _sigterm_unwinds(), LocalModelServer(embedded_settings(log_path=log_path)) as server:
        yield ModelChoice(model.for_local_server(server.model_alias, server.base_url), server)


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
