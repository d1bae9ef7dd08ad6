"""The audit log of model exchanges: one JSON object per line, appended and fsynced.

Every exchange the gateway makes, answered or failed, becomes an ``Exchange``: the
request body as sent with secrets removed, the decoded response, timings, the outcome
code (``"ok"`` or the error's ``code``) and the request fingerprint. ``ReplayProvider``
answers from these records.

Guarantees: each line is written by one ``write`` on a file opened with ``O_APPEND``
under an exclusive ``flock`` and followed by ``fsync``, so concurrent writers do not
interleave and an acknowledged line survives a crash. A crash in the middle of a write
can leave a torn last line; ``load_exchanges`` ignores a final line without a newline,
and the next ``append`` starts on a fresh line. Any other unreadable line is an error.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REDACTED = "[redacted]"
_SECRET_KEYS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api_key",
        "api-key",
        "apikey",
        "x-api-key",
        "api_token",
        "access_token",
        "refresh_token",
        "client_secret",
        "secret",
        "password",
        "passphrase",
        "cookie",
        "set-cookie",
    }
)


def scrub(value: Any, secrets: tuple[str, ...] = ()) -> Any:
    """A copy with secret-named fields replaced by ``"[redacted]"`` and any of the given
    secret strings masked wherever they occur in text."""
    if isinstance(value, Mapping):
        return {
            str(k): REDACTED if str(k).lower() in _SECRET_KEYS else scrub(v, secrets)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [scrub(v, secrets) for v in value]
    if isinstance(value, str) and secrets:
        for secret in secrets:
            if secret:
                value = value.replace(secret, REDACTED)
        return value
    return value


class RecordingError(ValueError):
    """An audit log line cannot be read as an exchange."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """One upstream request and what came of it."""

    request_fingerprint: str
    provider: str
    model: str
    prompt_version: str
    output_name: str
    outcome: str
    request: dict[str, Any]
    response_text: str | None = None
    response: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    error: str | None = None
    started_at: str = ""
    latency_s: float = 0.0
    attempt: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Exchange:
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(data) - known
        if unknown:
            raise RecordingError(f"unknown exchange fields: {sorted(unknown)}")
        try:
            return cls(**dict(data))
        except TypeError as exc:
            raise RecordingError(f"not an exchange: {exc}") from None


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def utc_iso(timestamp: float) -> str:
    """``utc_now``'s format for a ``time.time()`` value."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")


class Recorder:
    """Appends exchanges to a JSONL file (created with its folder when missing)."""

    def __init__(self, path: Path | str, *, secrets: tuple[str, ...] = ()) -> None:
        self.path = Path(path)
        self._secrets = secrets

    def append(self, exchange: Exchange) -> None:
        clean = Exchange.from_dict(_finite(scrub(asdict(exchange), self._secrets)))
        line = (clean.to_json() + "\n").encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # a torn last line from a crash stays alone
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)


def _finite(value: Any) -> Any:
    """NaN and infinities (possible in a provider's decoded body) written as strings, so
    that every line stays strict JSON."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return repr(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def iter_exchanges(path: Path | str) -> Iterator[Exchange]:
    data = Path(path).read_bytes()
    lines = data.split(b"\n")
    complete, tail = lines[:-1], lines[-1]
    for number, raw in enumerate(complete, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            # a torn line followed by a newline written by the next append
            if number < len(complete) and _is_torn(raw):
                continue
            raise RecordingError(f"{path}:{number}: not JSON") from None
        if not isinstance(obj, dict):
            raise RecordingError(f"{path}:{number}: not a JSON object")
        yield Exchange.from_dict(obj)
    del tail  # a final line without newline is a torn write: ignored


def _is_torn(raw: bytes) -> bool:
    return raw.lstrip().startswith(b"{") and not raw.rstrip().endswith(b"}")


def load_exchanges(path: Path | str) -> list[Exchange]:
    """Every complete exchange in the file, in order."""
    return list(iter_exchanges(path))
