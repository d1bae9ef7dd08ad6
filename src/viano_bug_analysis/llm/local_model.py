"""The embedded local model for one command: started on a port of its own when the
configuration's first provider is a loopback URL where nothing answers.

``viano demo``, ``viano eval`` and ``viano interpret`` all go through
:func:`model_for`:

- a non-loopback URL, or a loopback URL where a server answers (any HTTP response to
  ``GET /models``): the configuration is used as it is;
- a loopback URL where nothing answers: the embedded model (``modelgate.local_server``)
  is started on a **free port chosen for this run**, with the provider's
  ``context_window_tokens`` as llama.cpp's ``n_ctx``, and stopped when the command ends.
  Two commands at once each get their own server, so neither finds the other's port
  taken or its server gone (docs/decisions/0077-embedded-model-port-per-run-and-retry.md).

The run's port is an *endpoint override* (``ModelEndpoint.endpoints``, passed to
``LLMGateway``, which calls it when it first sends; ``interpret`` therefore starts no
model for a case that is already interpreted or cannot be): the configuration and its
fingerprint keep the configured URL, so an attempt that is RETRY_PENDING continues
under the same configuration fingerprint in the next run, whatever port that run's
server gets.

When the embedded model cannot start (its runtime or model file is not installed),
``required=True`` (demo, eval) raises ``DemoError`` (``demo.unavailable``); ``interpret`` goes on
with the configured URL, and the refused connection is a transient failure: RETRY_PENDING
under the configuration's retry policy (docs/llm-gateway-v1.md).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from viano_bug_analysis.demo_data import DemoError
from viano_bug_analysis.llm.config import GatewayConfig

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
DEFAULT_N_CTX = 8192  # llama.cpp's window when the configuration names none


def answers(base_url: str) -> bool:
    """Whether a server answers at ``base_url`` (``GET {base_url}/models`` gets any HTTP
    response): a server that is there is used, whatever it answers to that probe; only
    a refused or silent connection counts as nothing running."""
    with contextlib.suppress(httpx.HTTPError):
        httpx.get(f"{base_url}/models", timeout=2.0, trust_env=False)
        return True
    return False


def is_loopback(base_url: str) -> bool:
    return urlsplit(base_url).hostname in LOOPBACK_HOSTS


class ModelEndpoint:
    """Which server a command uses. :meth:`endpoints` (provider name -> base URL) starts
    the embedded model on first use where it is needed, and is what ``LLMGateway``
    takes as ``endpoints``; ``where`` says in words what was found or started."""

    def __init__(self, config: GatewayConfig, log_dir: Path | None, *, required: bool) -> None:
        self.config = config
        self.log_dir = log_dir
        self.required = required
        self.where = "not checked yet"
        self._endpoints: dict[str, str] | None = None
        self._server: Any = None
        self._lock = threading.Lock()

    def endpoints(self) -> Mapping[str, str]:
        with self._lock:
            if self._endpoints is None:
                self._endpoints = self._start()
            return self._endpoints

    def _start(self) -> dict[str, str]:
        provider = self.config.providers[0]
        if not is_loopback(provider.base_url) or answers(provider.base_url):
            self.where = f"using the configured server at {provider.base_url}"
            return {}
        from modelgate.errors import NotConfigured
        from modelgate.local_server import (
            LocalModelServer,
            LocalServerSettings,
            find_embedded_model,
        )

        window = getattr(provider, "context_window_tokens", None) or DEFAULT_N_CTX
        try:
            settings = LocalServerSettings(
                model_path=find_embedded_model(),
                model_alias=provider.model,
                port=0,  # a free port for this run
                n_ctx=window,
                log_path=(
                    self.log_dir / "local-model-server.log" if self.log_dir is not None else None
                ),
            )
            self._server = LocalModelServer(settings).start()
        except NotConfigured as exc:
            if self.required:
                raise DemoError(f"no model server at {provider.base_url}: {exc.message}") from exc
            self.where = (
                f"nothing answers at {provider.base_url} and the embedded model cannot "
                f"start ({exc.message})"
            )
            return {}
        self.where = (
            f"started the embedded model {provider.model} at {self._server.base_url} "
            f"(pid {self._server.pid}, n_ctx {window})"
        )
        return {provider.name: self._server.base_url}

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.stop()


@contextlib.contextmanager
def model_for(
    config: GatewayConfig, log_dir: Path | None, *, required: bool = True, lazy: bool = False
) -> Iterator[ModelEndpoint]:
    """The server for ``config``'s first provider, starting the embedded model on a free
    port when that provider is loopback and silent (see the module docstring): at once,
    or with ``lazy`` when the gateway first sends. Stopped when the block ends."""
    endpoint = ModelEndpoint(config, log_dir, required=required)
    try:
        if not lazy:
            endpoint.endpoints()
        yield endpoint
    finally:
        endpoint.close()
