"""The request ledger and its cap (Trace's "Ledger and cap" is the contract).

This module holds the contract (``Ledger``, ``Reservation``, ``LedgerSnapshot``, the
counters and the cap) and the JSON file backend, ``JsonFileLedger``. The SQL backend is
``modelgate.ledger_sql.SqlLedger``; it imports this module, never the other way round.

What is counted: ``requests`` (one per upstream request, written *before* it is sent),
``estimated_tokens`` (the pre-call estimate of every request), and ``prompt_tokens`` /
``completion_tokens`` (provider-reported only, added when a request is settled).
Nothing is ever refunded: a request that failed, timed out or whose process was
killed mid-flight stays counted.

Refusals, all ``NotSent`` (nothing was sent, nothing counted):

- ``BudgetExhausted``: ``requests`` has reached ``cap``.
- ``LedgerUnavailable``: the ledger is empty, unreadable or invalid (wrong shape, a
  negative or non-integer count). The ledger is then left exactly as found.
- ``LedgerBusy``: another holder has the lock. The caller abstains instead of queueing.

What is locked, and for how long (JSON backend): an exclusive, non-blocking
``flock`` on the sidecar ``<file>.lock`` (created once, never deleted, so the lock is
shared by every process on the machine). ``reserve`` holds it for read, check and
an atomic, durable write (``JsonFileLedger`` says which fsyncs): a few milliseconds
on a local disk, more where fsync is slow. Within one process, reservations
first take a short in-process turn (``in_process_turn``) so that independent calls of one app do
not abstain because of each other's bookkeeping; across processes nothing waits.
``settle`` takes the same lock but may wait up to ``settle_wait_s``,
because a settlement must not be dropped for being unlucky. ``exclusive()`` holds the
lock for a whole block (e.g. one investigation with its two calls): every other
``reserve`` or ``exclusive`` in any process or task abstains with ``LedgerBusy`` until
the block ends; reserves and settles *inside* the block (same context, including
tasks it spawns) use the held lock. ``flock`` is released by the kernel when a process
dies, so a crash never leaves the ledger locked.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import fcntl
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson

from modelgate.atomicfile import write_bytes_atomic
from modelgate.errors import BudgetExhausted, LedgerBusy, LedgerUnavailable
from modelgate.types import Usage

log = logging.getLogger(__name__)

CAP_MIN = 1
CAP_MAX = 1000
COUNTERS = ("requests", "prompt_tokens", "completion_tokens", "estimated_tokens")
FORMAT = "modelgate-ledger-v1"


def clamp_cap(value: int) -> int:
    return max(CAP_MIN, min(CAP_MAX, value))


def cap_from_env(var: str, default: int = 200, env: Mapping[str, str] | None = None) -> int:
    """The request cap from environment variable ``var`` (of ``env``, default the
    process environment), clamped to 1..1000.

    Unset or blank gives ``default``. A value that is not a whole number also gives
    ``default`` (with a warning in the log): a typo must neither lift nor remove the
    cap, and the clamp bounds the damage either way.
    """
    raw = (os.environ if env is None else env).get(var, "").strip()
    if not raw:
        return clamp_cap(default)
    try:
        value = int(raw, 10)
    except ValueError:
        log.warning("%s=%r is not a whole number; using the default cap %d", var, raw, default)
        return clamp_cap(default)
    return clamp_cap(value)


@dataclass(frozen=True, slots=True)
class LedgerSnapshot:
    requests: int
    prompt_tokens: int
    completion_tokens: int
    estimated_tokens: int
    cap: int

    @property
    def remaining(self) -> int:
        return max(0, self.cap - self.requests)

    def as_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "estimated_tokens": self.estimated_tokens,
            "cap": self.cap,
        }


@dataclass(frozen=True, slots=True)
class Reservation:
    """Proof that one request was counted before it was sent (``number`` is its 1-based
    position in the ledger's lifetime)."""

    ledger: str
    number: int
    estimated_tokens: int
    reserved_at: float


class Ledger(Protocol):
    cap: int

    def reserve(self, *, estimated_tokens: int) -> Reservation: ...

    def settle(self, reservation: Reservation, usage: Usage) -> None: ...

    def snapshot(self) -> LedgerSnapshot: ...

    def exclusive(self) -> contextlib.AbstractContextManager[None]: ...


def validate_counts(data: Any, where: str) -> dict[str, int]:
    """The four counters from a decoded ledger, or ``LedgerUnavailable``."""
    if not isinstance(data, dict):
        raise LedgerUnavailable(f"{where}: not a JSON object")
    extra = set(data) - set(COUNTERS) - {"format", "updated_at"}
    if extra:
        raise LedgerUnavailable(f"{where}: unknown fields {sorted(extra)}")
    if data.get("format", FORMAT) != FORMAT:
        raise LedgerUnavailable(f"{where}: unknown format {data.get('format')!r}")
    counts: dict[str, int] = {}
    for key in COUNTERS:
        value = data.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise LedgerUnavailable(f"{where}: {key} is missing or not an integer")
        if value < 0:
            raise LedgerUnavailable(f"{where}: {key} is negative")
        counts[key] = value
    return counts


IN_PROCESS_WAIT_S = 1.0
_TURNS: dict[str, threading.Lock] = {}
_TURNS_GUARD = threading.Lock()


@contextlib.contextmanager
def in_process_turn(key: str, wait_s: float) -> Iterator[None]:
    """Serialise one process's own bookkeeping on one ledger.

    Reservations take milliseconds; independent calls in one app (threads, tasks via
    ``asyncio.to_thread``) wait their turn here for at most ``IN_PROCESS_WAIT_S`` instead
    of abstaining because of each other. Across processes nothing waits: the file or
    row lock is taken without blocking, and a long hold (``exclusive()``) is never
    waited for, because it does not take this turn.
    """
    with _TURNS_GUARD:
        turn = _TURNS.setdefault(key, threading.Lock())
    if not turn.acquire(timeout=IN_PROCESS_WAIT_S + wait_s):
        raise LedgerBusy(f"ledger {key} is busy in this process; abstaining")
    try:
        yield
    finally:
        turn.release()


_LEDGER_JSON = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE


# lock path -> fd held by ``exclusive()`` in this context (tasks inherit it)
_HELD: contextvars.ContextVar[dict[str, int] | None] = contextvars.ContextVar(
    "modelgate_ledger_held", default=None
)


class JsonFileLedger:
    """The ledger in one JSON file, for one machine.

    What a reservation promises: when ``reserve`` returns, the incremented ``requests``
    count is on disk, so after that point neither a killed process nor a power cut can
    un-count the request (the gateway sends nothing before). Every write replaces the
    whole file (temp file in the same folder, then ``os.replace``): a reader, or the
    file after a crash, holds the old or the new content, never a mix or nothing.

    One fsync order, the portable one, on every file system (``atomic_write``): the
    temp file is fsynced before ``os.replace``, so no name ever points at data not on
    disk, and ``reserve`` then fsyncs the folder, so the new name is on disk too, as
    POSIX asks. ``settle`` skips the folder: its tokens are atomic at once and durable
    with the file system's next commit or the next ``reserve``. Three fsyncs per
    reserve + settle.

    Limits: it trusts the drive to honour cache flushes. At worst a power cut loses the
    last settlement's provider tokens, never a request. See
    ``docs/decisions/0066-ledger-one-portable-fsync-order.md``.
    """

    def __init__(self, path: Path | str, *, cap: int = 200, settle_wait_s: float = 2.0) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.cap = clamp_cap(cap)
        self.settle_wait_s = settle_wait_s

    def __repr__(self) -> str:
        return f"JsonFileLedger({str(self.path)!r}, cap={self.cap})"

    # --- locking ---------------------------------------------------------------

    def _open_lock(self) -> int:
        try:
            try:
                return os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
            except FileNotFoundError:  # the folder is made on first use only
                self.path.parent.mkdir(parents=True, exist_ok=True)
                return os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise LedgerUnavailable(f"{self.lock_path}: cannot open lock: {exc.strerror}") from None

    @contextlib.contextmanager
    def _locked(self, *, wait_s: float) -> Iterator[None]:
        held = _HELD.get()
        with in_process_turn(str(self.lock_path), wait_s):
            if held is not None and str(self.lock_path) in held:
                yield  # this context's exclusive() already holds the file lock
                return
            with self._flocked(wait_s):
                yield

    @contextlib.contextmanager
    def _flocked(self, wait_s: float) -> Iterator[None]:
        fd = self._open_lock()
        try:
            deadline = time.monotonic() + wait_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                        raise LedgerUnavailable(f"{self.lock_path}: {exc.strerror}") from None
                    if time.monotonic() >= deadline:
                        raise LedgerBusy(
                            f"{self.path} is locked by another reservation; abstaining"
                        ) from None
                    time.sleep(0.005)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the ledger for a whole block; others abstain with ``LedgerBusy``."""
        key = str(self.lock_path)
        held = _HELD.get()
        if held is not None and key in held:
            yield  # already held by this context
            return
        fd = self._open_lock()
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise LedgerBusy(f"{self.path} is held by another check; abstaining") from None
                raise LedgerUnavailable(f"{self.lock_path}: {exc.strerror}") from None
            token = _HELD.set({**(held or {}), key: fd})
            try:
                yield
            finally:
                _HELD.reset(token)
        finally:
            os.close(fd)

    # --- file ------------------------------------------------------------------

    def _read(self) -> dict[str, int] | None:
        """Counters, ``None`` when the file does not exist, else ``LedgerUnavailable``."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise LedgerUnavailable(f"{self.path}: unreadable: {exc.strerror}") from None
        if not data.strip():
            raise LedgerUnavailable(f"{self.path}: empty ledger")
        try:
            try:
                decoded = orjson.loads(data)
            except orjson.JSONDecodeError:  # the standard decoder has the last word
                decoded = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            raise LedgerUnavailable(f"{self.path}: not valid JSON") from None
        return validate_counts(decoded, str(self.path))

    def _write(self, counts: dict[str, int], *, sync_folder: bool = True) -> None:
        """Replace the file atomically (``atomic_write``); ``sync_folder`` (reserve):
        durable before returning; ``False`` (settle): durable at the next commit."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        body = {"format": FORMAT, **counts, "updated_at": stamp}
        # the bytes of json.dumps(body, indent=2, sort_keys=True) + "\n"
        write_bytes_atomic(
            self.path, orjson.dumps(body, option=_LEDGER_JSON), sync_folder=sync_folder
        )

    # --- contract --------------------------------------------------------------

    def reserve(self, *, estimated_tokens: int) -> Reservation:
        if estimated_tokens < 0:
            raise ValueError("estimated_tokens must be >= 0")
        with self._locked(wait_s=0.0):
            counts = self._read() or dict.fromkeys(COUNTERS, 0)
            if counts["requests"] >= self.cap:
                raise BudgetExhausted(
                    f"request cap {self.cap} reached ({counts['requests']} requests)",
                    cap=self.cap,
                    requests=counts["requests"],
                )
            counts["requests"] += 1
            counts["estimated_tokens"] += estimated_tokens
            try:
                self._write(counts)
            except OSError as exc:
                raise LedgerUnavailable(f"{self.path}: cannot write: {exc.strerror}") from None
            return Reservation(
                ledger=str(self.path),
                number=counts["requests"],
                estimated_tokens=estimated_tokens,
                reserved_at=time.time(),
            )

    def settle(self, reservation: Reservation, usage: Usage) -> None:
        """Add provider-reported tokens. An estimate adds nothing (it was counted at
        reserve) and writes nothing.

        The write is atomic but not made durable at once (see the class docstring):
        after a power cut (not a process crash) the last settlement's tokens may be
        missing, never a request, which ``reserve`` made durable before returning."""
        if usage.source != "provider" or usage.total_tokens == 0:
            return
        with self._locked(wait_s=self.settle_wait_s):
            counts = self._read()
            if counts is None:
                raise LedgerUnavailable(f"{self.path}: ledger vanished after a reservation")
            counts["prompt_tokens"] += usage.prompt_tokens
            counts["completion_tokens"] += usage.completion_tokens
            try:
                self._write(counts, sync_folder=False)
            except OSError as exc:
                raise LedgerUnavailable(f"{self.path}: cannot write: {exc.strerror}") from None

    def snapshot(self) -> LedgerSnapshot:
        """Current counts (a missing file reads as zeros; nothing is written)."""
        counts = self._read() or dict.fromkeys(COUNTERS, 0)
        return LedgerSnapshot(cap=self.cap, **counts)


def new_holder_token() -> str:
    return uuid.uuid4().hex
