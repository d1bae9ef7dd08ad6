"""Canonical JSON and hashing of packages, cases and checkpoints.

The canonical form is modelgate's (:func:`modelgate.fingerprint.canonical_json`): sorted
keys, compact separators, UTF-8 without ASCII escaping, NaN and infinities refused;
docs/package-format.md describes it. The SHA-256 of these bytes is the hash of a
document (``case_sha256`` for the canonical case). The manifest is written in the
readable form of :func:`readable_json`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from modelgate.fingerprint import canonical_json

__all__ = ["canonical_json", "canonical_sha256", "readable_json", "sha256_hex"]


def readable_json(obj: Any) -> bytes:
    """``json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False)`` and a final
    newline, as UTF-8 (the manifest's form)."""
    return (json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_sha256(obj: Any) -> str:
    """Hex SHA-256 of the canonical JSON bytes of ``obj``."""
    return sha256_hex(canonical_json(obj))
