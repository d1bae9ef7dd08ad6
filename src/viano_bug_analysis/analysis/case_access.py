"""Verification of a built case before anything is prepared or sent.

``verify_built_case`` never builds a case. It checks, in order: the manifest's
identities (never the ZIP file name), a confirmed ``case-built`` checkpoint for the
current analysis revision, the ``canonical_case`` pointer, the case size limit, the
case hash recorded by CaseBuilder, the case's own identities and revision, and the
current raw-input fingerprint of ``original/`` (changed inputs need a new revision).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from queue import SimpleQueue
from typing import Any

from viano_bug_analysis.analysis.errors import InterpretationError
from viano_bug_analysis.analysis.limits import InterpretationLimits
from viano_bug_analysis.case.canonical import CASE_FORMAT, raw_input_fingerprint
from viano_bug_analysis.case.limits import CaseBuilderLimits
from viano_bug_analysis.errors import LimitExceeded, PackageError
from viano_bug_analysis.llm.rounds import load_json
from viano_bug_analysis.packages import (
    CHECKPOINT_CASE_BUILT,
    POINTER_CANONICAL_CASE,
    PackageReader,
    revision_dir,
)
from viano_bug_analysis.packages.format import check_identity


@dataclass(frozen=True, slots=True)
class BuiltCase:
    """A verified canonical case: its bytes, hash, document and where it lives."""

    case_id: str
    package_id: str
    analysis_revision: int
    case_member: str
    case_bytes: bytes
    case_sha256: str
    raw_input_fingerprint: str
    document: dict[str, Any]


_PARALLEL_HASH_BYTES = 1 << 20


class BackgroundSha256:
    """The SHA-256 of buffers fed in order, hashed on a thread of its own while the
    caller goes on with Python work (hashlib releases the GIL for inputs from 2 KiB).

    A thread waiting for the GIL gets it only when the holder releases it or after the
    switch interval (5 ms), so a hashing thread that needed the GIL back between two
    buffers would mostly wait for the caller. ``feed`` therefore waits (without the
    GIL) until the thread holds the buffers it was given and has started on them: the
    caller's Python work then runs while they are hashed, and the caller waits only
    when it feeds faster than the thread hashes. Buffers must not change once fed."""

    __slots__ = ("_error", "_hash", "_inbox", "_taken", "_thread")

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self._inbox: SimpleQueue[tuple[bytes | memoryview, ...] | None] = SimpleQueue()
        self._taken: SimpleQueue[None] = SimpleQueue()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = threading.Thread(
            target=self._run, name="viano-sha256", daemon=True
        )
        try:
            self._thread.start()
        except RuntimeError:  # no thread to be had: hash in the caller's thread
            self._thread = None

    def _run(self) -> None:
        while True:
            parts = self._inbox.get()
            self._taken.put(None)
            if parts is None:
                return
            if self._error is None:
                try:
                    for part in parts:  # parts under 2 KiB first: they keep the GIL
                        self._hash.update(part)
                except BaseException as exc:  # reported by hexdigest
                    self._error = exc

    def feed(self, *parts: bytes | memoryview) -> None:
        if self._thread is None:
            for part in parts:
                self._hash.update(part)
            return
        self._inbox.put(parts)
        self._taken.get()

    def hexdigest(self) -> str:
        """The digest of everything fed; the thread ends."""
        if self._thread is not None:
            self._inbox.put(None)
            self._thread.join()
            self._thread = None
        if self._error is not None:
            raise self._error
        return self._hash.hexdigest()

    def close(self) -> None:
        """Ends the thread without waiting for it: the digest is not wanted (and
        ``hexdigest`` refuses to give one)."""
        if self._thread is not None:
            self._inbox.put(None)
            self._thread = None
            self._error = RuntimeError("BackgroundSha256 closed before its digest")


def _fail(code: str, message: str, **details: Any) -> InterpretationError:
    return InterpretationError(message, code=f"interpretation.{code}", **details)


def check_identities(case_id: object, package_id: object) -> None:
    """A malformed case_id or package_id is the caller's input error
    (``interpretation.identity_invalid``), checked before the store is touched."""
    for value, what in ((case_id, "case_id"), (package_id, "package_id")):
        try:
            check_identity(value, what)
        except PackageError as exc:
            raise _fail("identity_invalid", exc.message, field=what) from None


def parse_case(data: bytes) -> dict[str, Any]:
    """The canonical case document (parsed straight from its UTF-8 bytes)."""
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise _fail("case_invalid", f"canonical case is not JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("case_format") != CASE_FORMAT:
        raise _fail("case_invalid", f"canonical case is not {CASE_FORMAT}")
    return document


def _sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def checked_case(data: bytes, expected_sha256: object) -> tuple[str, dict[str, Any]]:
    """The case bytes' SHA-256 and document. A hash other than ``expected_sha256`` is
    ``case_hash_mismatch`` (whatever the bytes hold), then a document that is no case is
    ``case_invalid``. From 1 MiB the bytes are hashed on a thread of their own while this
    thread parses (``BackgroundSha256``); the errors and their order are the same."""
    if len(data) < _PARALLEL_HASH_BYTES:
        digest = _sha256_hex(data)
        if digest != expected_sha256:
            raise _hash_mismatch()
        return digest, parse_case(data)
    hashing = BackgroundSha256()
    hashing.feed(data)
    try:
        document = parse_case(data)
    except Exception:
        if hashing.hexdigest() != expected_sha256:
            raise _hash_mismatch() from None
        raise
    except BaseException:
        hashing.close()
        raise
    digest = hashing.hexdigest()
    if digest != expected_sha256:
        raise _hash_mismatch()
    return digest, document


def _hash_mismatch() -> InterpretationError:
    return _fail("case_hash_mismatch", "canonical case bytes differ from the checkpoint's hash")


def verify_built_case(
    reader: PackageReader,
    case_id: str,
    package_id: str,
    limits: InterpretationLimits,
    case_limits: CaseBuilderLimits,
) -> BuiltCase:
    manifest = reader.require_manifest()
    if (manifest.case_id, manifest.package_id) != (case_id, package_id):
        raise _fail(
            "identity_mismatch",
            f"the package's manifest names {manifest.case_id}/{manifest.package_id}, "
            f"not {case_id}/{package_id}",
        )
    revision = manifest.analysis_revision
    checkpoint = manifest.latest_checkpoint(CHECKPOINT_CASE_BUILT)
    if revision < 1 or checkpoint is None or checkpoint.analysis_revision != revision:
        raise _fail(
            "case_not_built",
            f"analysis revision {revision} has no confirmed case-built checkpoint; "
            "run `viano build` first (interpretation never builds a case)",
        )
    try:
        payload = load_json(reader.read(checkpoint.path))
    except (ValueError, KeyError, PackageError) as exc:
        raise _fail("checkpoint_invalid", f"case-built checkpoint unreadable: {exc}") from None
    if (
        payload.get("case_id"),
        payload.get("package_id"),
        payload.get("analysis_revision"),
    ) != (case_id, package_id, revision):
        raise _fail("checkpoint_invalid", "the case-built checkpoint names other identities")
    recorded = payload.get("canonical_case")
    if not isinstance(recorded, str) or not recorded:
        raise _fail("checkpoint_invalid", "the case-built checkpoint names no canonical_case")
    member = manifest.pointers.get(POINTER_CANONICAL_CASE)
    if not member or member != recorded or not member.startswith(revision_dir(revision)):
        raise _fail(
            "pointer_invalid",
            f"pointer canonical_case is {member!r}; the checkpoint names {recorded!r}",
        )
    if member not in reader:
        raise _fail("pointer_invalid", f"pointer canonical_case names a missing member {member}")
    size = reader.size(member)
    if size > limits.max_case_bytes:
        raise InterpretationError(
            f"canonical case is {size} bytes; InterpretationLimits.max_case_bytes is "
            f"{limits.max_case_bytes}",
            code="interpretation.limit.max_case_bytes",
            limit=limits.max_case_bytes,
            value=size,
        )
    data = reader.read(member)
    digest, document = checked_case(data, payload.get("case_sha256"))
    if (
        document.get("case_id"),
        document.get("package_id"),
        document.get("analysis_revision"),
    ) != (case_id, package_id, revision):
        raise _fail("identity_mismatch", "the canonical case names other identities or revision")
    built_fingerprint = document.get("raw_input_fingerprint")
    if payload.get("raw_input_fingerprint", built_fingerprint) != built_fingerprint:
        raise _fail(
            "checkpoint_invalid", "checkpoint and case disagree on the raw-input fingerprint"
        )
    try:
        current = raw_input_fingerprint(reader, case_limits)
    except LimitExceeded as exc:
        raise InterpretationError(exc.message, code=f"interpretation.{exc.code}") from None
    if current != built_fingerprint:
        raise _fail(
            "raw_input_changed",
            "original/ no longer matches the revision's raw-input fingerprint; "
            "build a new analysis revision",
        )
    return BuiltCase(
        case_id=case_id,
        package_id=package_id,
        analysis_revision=revision,
        case_member=member,
        case_bytes=data,
        case_sha256=digest,
        raw_input_fingerprint=current,
        document=document,
    )
