"""Canonical JSON serialisation and hashing used by packages, cases and checkpoints.

Canonical form (the rule; docs/package-format.md describes it): the bytes of
``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
allow_nan=False)`` encoded as UTF-8. Keys are sorted by code point, there is no
insignificant whitespace, non-ASCII characters (U+2028 and U+2029 included) are written
as UTF-8, control characters as ``\\uXXXX`` (``\\b \\f \\n \\r \\t`` short), NaN and
infinities are refused. The SHA-256 of these bytes is the hash of a document
(``case_sha256`` for the canonical case).

Speed without a second rule: documents made only of ``dict`` (string keys), ``list``,
``tuple``, ``str``, ``int`` (64-bit), ``bool`` and ``None`` are written by orjson, which
produces exactly these bytes for those types (sorted keys compare as UTF-8 bytes, which
is code-point order). Anything else (floats, whose text orjson writes differently,
subclasses, big integers, unsupported types, lone surrogates, cycles) takes the
``json.dumps`` path, which is the reference and raises the reference errors. The type
check walks the object graph in C (``gc.get_referents``) after orjson has succeeded, so
it only ever sees a finite, acyclic tree of plain containers. The fast path and its guard
are modelgate's (``modelgate.fingerprint.plain_json``), the same for every fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from modelgate.fingerprint import only_plain_types, orjson_candidate, plain_json
from viano_bug_analysis.packages.threads import background_pool


def _reference_json(obj: Any) -> bytes:
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def canonical_json(obj: Any) -> bytes:
    """Deterministic UTF-8 bytes of ``obj`` (sorted keys, compact separators)."""
    data = plain_json(obj)
    return _reference_json(obj) if data is None else data


def canonical_json_sha256(obj: Any) -> tuple[bytes, str]:
    """``(canonical_json(obj), sha256_hex of those bytes)``. The hash of orjson's bytes
    runs in the background pool (hashlib releases the GIL) while the type walk decides
    whether those bytes stand; if not, the reference bytes are hashed here."""
    data = orjson_candidate(obj)
    if data is None:
        data = _reference_json(obj)
        return data, sha256_hex(data)
    digest = background_pool().submit(sha256_hex, data)
    if not only_plain_types(obj):
        data = _reference_json(obj)
        return data, sha256_hex(data)
    return data, digest.result()


def readable_json(obj: Any) -> bytes:
    """The bytes of ``json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False)``
    plus a final newline, as UTF-8 (the manifest's form). orjson writes the same bytes
    for plain types (the standard encoder with ``indent`` runs in pure Python); anything
    else takes the reference path, as in :func:`canonical_json`."""
    data = plain_json(obj, indent=True)
    if data is not None:
        return data
    text = json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_sha256(obj: Any) -> str:
    """Hex SHA-256 of the canonical JSON bytes of ``obj``."""
    return sha256_hex(canonical_json(obj))
