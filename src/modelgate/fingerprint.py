"""Canonical JSON and versioned SHA-256 fingerprints: the one canonical form of the repo.

``canonical_json(obj)`` is, by definition, the UTF-8 bytes of ``json.dumps(obj,
sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)``, with
three refusals on top (``CanonicalJSONError``, a ``ValueError``): NaN and infinities,
object keys that are not strings (``json.dumps`` would quietly write ``1`` as ``"1"``,
so two different values could share one form), and values that are not JSON (sets,
bytes, arbitrary objects). Tuples are written as arrays. This follows RFC 8785 in
spirit (sorted keys, no whitespace) but keeps Python's float formatting (``0.0`` stays
``0.0``), so a float and an int of the same value give different fingerprints on
purpose. A lone surrogate in a string has no UTF-8 form: ``UnicodeEncodeError``.

How the bytes are made: ``_json_value`` walks the value once (a plain recursive type
check). A value with no float and only exact ``dict``/``list``/``tuple``/``str``/
``int``/``bool``/``None`` is written by orjson, which writes those types exactly as the
definition above does; orjson itself refuses what it cannot write that way (integers
beyond 64 bits, lone surrogates). Everything else, floats included, goes through the
standard encoder. Trace and Viano use this function; they keep no copy of their own.

``fingerprint(obj, kind)`` returns ``"<kind>-v1:sha256:<64 hex>"``; the hash covers the
canonical bytes of ``obj`` only. The ``v1`` is the version of this scheme: a change of
canonical form must bump it so that old fingerprints are never silently reinterpreted.
``request_fingerprint`` is the fingerprint of ``request_material``, the one place that
says what a request fingerprint covers.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from modelgate.types import ModelRequest

SCHEME_VERSION = "v1"
_KIND = re.compile(r"^[a-z][a-z0-9_.-]*[a-z0-9]$|^[a-z]$")
_FINGERPRINT = re.compile(r"^(?P<kind>[a-z][a-z0-9_.-]*)-v1:sha256:(?P<hex>[0-9a-f]{64})$")


class CanonicalJSONError(ValueError):
    """The value cannot be written as canonical JSON (NaN, non-string key, unknown type).

    ``path`` names the place, from the root ``$`` (e.g. ``$.items[2]``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = ""

    def __str__(self) -> str:
        return f"${self.path}: {self.reason}"


def _json_value(value: Any) -> bool:
    """Check that ``value`` is JSON as ``canonical_json`` defines it, else raise
    ``CanonicalJSONError`` naming the first offending place (e.g. ``$.items[2]``).
    True when orjson may write it: no float, and every value of an exact plain type
    (no subclass, such as a ``StrEnum`` member)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise CanonicalJSONError("NaN and infinity have no canonical JSON form")
        return False
    if isinstance(value, str | int):  # a subclass: the standard encoder writes it
        return False
    plain = kind is dict or kind is list or kind is tuple
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalJSONError(f"object key {key!r} is not a string")
            try:
                plain = _json_value(item) and type(key) is str and plain
            except CanonicalJSONError as error:
                error.path = f".{key}{error.path}"
                raise
        return plain
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            try:
                plain = _json_value(item) and plain
            except CanonicalJSONError as error:
                error.path = f"[{index}]{error.path}"
                raise
        return plain
    raise CanonicalJSONError(f"{kind.__name__} is not a JSON value")


_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def canonical_json(obj: Any) -> bytes:
    """Sorted keys, compact separators, UTF-8, no NaN: the bytes every fingerprint hashes."""
    if _json_value(obj):
        try:
            return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:
            pass  # a big integer or a lone surrogate: the standard encoder decides
    return _ENCODER.encode(obj).encode("utf-8")


def fingerprint(obj: Any, kind: str) -> str:
    """``"<kind>-v1:sha256:<hex>"`` of the canonical JSON of ``obj``."""
    if not _KIND.match(kind):
        raise ValueError(f"fingerprint kind {kind!r} must match {_KIND.pattern}")
    digest = hashlib.sha256(canonical_json(obj)).hexdigest()
    return f"{kind}-{SCHEME_VERSION}:sha256:{digest}"


def verify_fingerprint(obj: Any, value: str) -> bool:
    """True when ``value`` is the fingerprint of ``obj`` (for any kind it names)."""
    match = _FINGERPRINT.match(value)
    if match is None:
        return False
    return fingerprint(obj, match.group("kind")) == value


def request_material(request: ModelRequest, model: str) -> dict[str, Any]:
    """Exactly what ``request_fingerprint`` covers, as a JSON object: messages, output
    name and schema, prompt version, temperature, token limit and model id.

    Provider settings (base URL, extra body fields, structured-output mode, timeouts)
    are not covered; fingerprint a ``ProviderConfig`` with its ``fingerprint()`` for that.
    """
    return {
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "output_name": request.output_name,
        "output_schema": request.output_schema,
        "prompt_version": request.prompt_version,
        "temperature": request.temperature,
        "max_output_tokens": request.max_output_tokens,
        "model": model,
    }


def request_fingerprint(request: ModelRequest, model: str) -> str:
    """``request-v1:sha256:...`` of ``request_material(request, model)``."""
    return fingerprint(request_material(request, model), "request")
