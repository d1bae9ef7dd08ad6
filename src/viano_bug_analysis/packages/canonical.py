"""Canonical JSON serialisation and hashing used by packages, cases and checkpoints.

Canonical form: ``json.dumps(obj, sort_keys=True, separators=(",", ":"),
ensure_ascii=False, allow_nan=False)`` encoded as UTF-8. Keys are sorted by code point,
there is no insignificant whitespace, and floats are refused where a value must be
exact (callers keep numbers integral). The SHA-256 of these bytes is the hash of a
document (``case_sha256`` for the canonical case).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(obj: Any) -> bytes:
    """Deterministic UTF-8 bytes of ``obj`` (sorted keys, compact separators)."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_sha256(obj: Any) -> str:
    """Hex SHA-256 of the canonical JSON bytes of ``obj``."""
    return sha256_hex(canonical_json(obj))
