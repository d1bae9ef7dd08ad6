"""Canonical JSON serialisation and hashing used by packages, cases and checkpoints.

Canonical form (the rule; docs/package-format.md describes it): the bytes of
``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
allow_nan=False)`` encoded as UTF-8. Keys are sorted by code point, there is no
insignificant whitespace, non-ASCII characters (U+2028 and U+2029 included) are written
as UTF-8, control characters as ``\\uXXXX`` (``\\b \\f \\n \\r \\t`` short), NaN and
infinities are refused. The SHA-256 of these bytes is the hash of a document
(``case_sha256`` for the canonical case).

The function is modelgate's (``modelgate.fingerprint.canonical_json``), the one
canonical form of the repository; it also refuses non-string object keys.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from modelgate.fingerprint import canonical_json

__all__ = [
    "canonical_json",
    "canonical_json_sha256",
    "canonical_sha256",
    "readable_json",
    "sha256_hex",
]


def canonical_json_sha256(obj: Any) -> tuple[bytes, str]:
    """``(canonical_json(obj), sha256_hex of those bytes)``."""
    data = canonical_json(obj)
    return data, sha256_hex(data)


def readable_json(obj: Any) -> bytes:
    """The bytes of ``json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False)``
    plus a final newline, as UTF-8 (the manifest's form)."""
    text = json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_sha256(obj: Any) -> str:
    """Hex SHA-256 of the canonical JSON bytes of ``obj``."""
    return sha256_hex(canonical_json(obj))
