"""Uploaded files that wait for a person to confirm their import (docs/decisions/0082).

An upload is kept as two files in ``<TRACE_HOME>/pending-imports/`` (a folder only this
user of the machine can read): ``<token>.upload`` (the bytes, streamed to disk and
counted, never whole in memory) and ``<token>.json`` (who may use it, the incident, the
kind, the file's SHA-256 and the preview). The token is random (24 bytes), and an
upload is **bound to the browser session** that sent it: its owner is a hash of the
account id and the session cookie, so another account, or the same account signed in
elsewhere, finds nothing. An upload expires ``TTL_S`` after it came; every new upload
sweeps expired ones away, and the bytes are removed as soon as the import is done.

On several replicas the confirm must reach the replica that holds the upload (sticky
sessions, or a shared folder); elsewhere it finds nothing and asks for the file again.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from trace_app.domain.errors import TraceError

TTL_S = 30 * 60
COPY_CHUNK = 64 * 1024
TOKEN = re.compile(r"^[A-Za-z0-9_-]{32}$")


class UploadTooLargeError(TraceError):
    code = "upload_too_large"
    http_status = 413

    def __init__(self, limit: int) -> None:
        super().__init__(f"The file is larger than the limit of {limit:,} bytes.")


class UploadChangedError(TraceError):
    """The kept upload changed or went since its preview: upload it again (409)."""

    code = "upload_changed"
    http_status = 409


def owner_key(user_id: str, session_cookie: str) -> str:
    """Whom an upload belongs to: this account in this browser session."""
    return hashlib.sha256(f"{user_id}\x00{session_cookie}".encode()).hexdigest()


@dataclass(slots=True)
class PendingImport:
    token: str
    owner: str
    incident_id: str
    kind: str
    source_name: str
    filename: str
    size: int
    sha256: str
    created_at: float
    # the dry run's result as the page shows it (ImportSummaryOut + "refused"), and its
    # counts, which the real import must reproduce
    preview: dict[str, Any] = field(default_factory=dict)
    counts: list[int] = field(default_factory=list)
    # "previewed", then "imported" (with the real import's summary in ``result``)
    state: str = "previewed"
    result: dict[str, Any] = field(default_factory=dict)
    changed: bool = False

    @property
    def expires_at(self) -> float:
        return self.created_at + TTL_S


class PendingImports:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _paths(self, token: str) -> tuple[Path, Path]:
        if not TOKEN.match(token):
            raise ValueError("not an upload token")
        return self.folder / f"{token}.upload", self.folder / f"{token}.json"

    def store(
        self, owner: str, upload: IO[bytes], *, max_bytes: int, **details: str
    ) -> PendingImport:
        """Copy ``upload`` to a new token's file (at most ``max_bytes``; else
        :class:`UploadTooLargeError` and nothing is kept) and return its record."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.sweep()
        token = secrets.token_urlsafe(24)
        data, _meta = self._paths(token)
        digest = hashlib.sha256()
        size = 0
        try:
            with open(data, "xb") as out:
                os.chmod(data, 0o600)
                while chunk := upload.read(COPY_CHUNK):
                    size += len(chunk)
                    if size > max_bytes:
                        raise UploadTooLargeError(max_bytes)
                    digest.update(chunk)
                    out.write(chunk)
        except BaseException:
            data.unlink(missing_ok=True)
            raise
        pending = PendingImport(
            token=token,
            owner=owner,
            incident_id=details["incident_id"],
            kind=details["kind"],
            source_name=details.get("source_name", ""),
            filename=details.get("filename", ""),
            size=size,
            sha256=digest.hexdigest(),
            created_at=time.time(),
        )
        self.save(pending)
        return pending

    def save(self, pending: PendingImport) -> None:
        """Write the record atomically (a temporary file, then renamed)."""
        _data, meta = self._paths(pending.token)
        temp = meta.with_suffix(".tmp")
        temp.write_text(json.dumps(asdict(pending)), encoding="utf-8")
        os.chmod(temp, 0o600)
        os.replace(temp, meta)

    def load(self, token: str, owner: str) -> PendingImport | None:
        """The upload, if it exists, has not expired and belongs to ``owner``."""
        try:
            _data, meta = self._paths(token)
            found = PendingImport(**json.loads(meta.read_text(encoding="utf-8")))
        except (ValueError, OSError, TypeError):
            return None
        if not hmac.compare_digest(found.owner, owner) or found.expires_at < time.time():
            return None
        return found

    def open_data(self, pending: PendingImport) -> IO[bytes]:
        """The uploaded bytes; :class:`UploadChangedError` (the upload discarded) when they
        were changed or removed since."""
        data, _meta = self._paths(pending.token)
        try:
            stream = open(data, "rb")
        except OSError as exc:
            self.discard(pending.token)
            raise UploadChangedError("The uploaded file is gone; upload it again.") from exc
        digest = hashlib.sha256()
        while chunk := stream.read(COPY_CHUNK):
            digest.update(chunk)
        if not hmac.compare_digest(digest.hexdigest(), pending.sha256):
            stream.close()
            self.discard(pending.token)
            raise UploadChangedError(
                "The uploaded file changed since its preview; upload it again."
            )
        stream.seek(0)
        return stream

    def drop_data(self, pending: PendingImport) -> None:
        """Remove the bytes (the record stays until it expires, for the result page)."""
        data, _meta = self._paths(pending.token)
        data.unlink(missing_ok=True)

    def discard(self, token: str) -> None:
        for path in self._paths(token):
            path.unlink(missing_ok=True)

    def sweep(self, now: float | None = None) -> int:
        """Remove every expired upload (and any stray file of one); returns how many."""
        cutoff = (now if now is not None else time.time()) - TTL_S
        removed = 0
        for path in self.folder.glob("*"):
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
        return removed
