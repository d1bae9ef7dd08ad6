"""Canonical JSON and versioned SHA-256 fingerprints.

``canonical_json`` writes JSON with sorted object keys, compact separators
(``,`` and ``:``), UTF-8 without ASCII escaping, and refuses NaN and infinities.
Object keys must be strings (an ``int`` key would otherwise collide with its string
form); tuples are written as arrays. This follows RFC 8785 in spirit (sorted keys,
no whitespace) but keeps Python's float formatting (``0.0`` stays ``0.0``), so a
float and an int of the same value give different fingerprints on purpose.

Speed without a second rule: a value made only of ``dict`` (string keys), ``list``,
``tuple``, ``str``, ``int`` (64-bit), ``bool`` and ``None`` is written by orjson, which
gives exactly these bytes for those types (its sorted keys compare as UTF-8 bytes, which
is code-point order). Anything else (floats, whose text orjson writes differently,
subclasses, big integers, non-string keys, lone surrogates) takes the ``json`` path
above, which is the reference and raises the reference errors. ``plain_json`` is that
fast path on its own, for callers with their own reference (Viano's packages).

``fingerprint(obj, kind)`` returns ``"<kind>-v1:sha256:<64 hex>"``; the hash covers the
canonical bytes of ``obj`` only. The ``v1`` is the version of this scheme: a change of
canonical form must bump it so that old fingerprints are never silently reinterpreted.
"""

from __future__ import annotations

import copy
import gc
import hashlib
import json
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from modelgate.types import ModelRequest

SCHEME_VERSION = "v1"
_KIND = re.compile(r"^[a-z][a-z0-9_.-]*[a-z0-9]$|^[a-z]$")
_FINGERPRINT = re.compile(r"^(?P<kind>[a-z][a-z0-9_.-]*)-v1:sha256:(?P<hex>[0-9a-f]{64})$")


class CanonicalJSONError(ValueError):
    """The value cannot be written as canonical JSON (NaN, non-string key, unknown type)."""


def _check(value: Any, path: str) -> None:
    if value is None or isinstance(value, bool | int | str):
        return
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise CanonicalJSONError(f"{path}: NaN and infinity have no canonical JSON form")
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalJSONError(f"{path}: object key {key!r} is not a string")
            _check(item, f"{path}.{key}")
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check(item, f"{path}[{index}]")
        return
    raise CanonicalJSONError(f"{path}: {type(value).__name__} is not a JSON value")


def _refuse(value: Any) -> Any:
    raise CanonicalJSONError(f"{type(value).__name__} is not a JSON value")


_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_refuse
)


_PLAIN_TYPES = frozenset({dict, list, tuple, str, int, bool, type(None)})
_ORJSON_OPTIONS = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)


def _orjson_refuse(value: Any) -> Any:
    raise TypeError  # orjson then raises JSONEncodeError and the caller's reference runs


def only_plain_types(obj: Any) -> bool:
    """True if every object reachable from ``obj`` has a type in ``_PLAIN_TYPES``.

    Breadth-first over ``gc.get_referents`` (containers report their items; exact ``str``
    dict keys are not reported, which is fine: they are plain). Call it only after orjson
    has written ``obj`` (``orjson_candidate``), so the graph is a finite, acyclic tree."""
    if type(obj) not in _PLAIN_TYPES:
        return False
    level: list[Any] = [obj]
    while level:
        level = gc.get_referents(*level)
        if not _PLAIN_TYPES.issuperset(map(type, level)):
            return False
    return True


def orjson_candidate(obj: Any, *, indent: bool = False) -> bytes | None:
    """orjson's bytes of ``obj`` (``indent``: two-space indented, final newline), or
    ``None`` when orjson refuses it. They are the canonical bytes only if
    :func:`only_plain_types` holds; :func:`plain_json` asks both."""
    options = _ORJSON_OPTIONS
    if indent:
        options |= orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
    try:
        return orjson.dumps(obj, default=_orjson_refuse, option=options)
    except orjson.JSONEncodeError:
        return None


def plain_json(obj: Any, *, indent: bool = False) -> bytes | None:
    """The canonical bytes of ``obj`` (``indent``: two-space indented, with a final newline)
    when it is made only of plain types, else ``None``: the caller then uses its
    reference encoder."""
    data = orjson_candidate(obj, indent=indent)
    return data if data is not None and only_plain_types(obj) else None


def canonical_json(obj: Any) -> bytes:
    """Sorted keys, compact separators, UTF-8, no NaN: the bytes every fingerprint hashes."""
    fast = plain_json(obj)
    if fast is not None:
        return fast
    try:
        text = _ENCODER.encode(obj)
    except (ValueError, TypeError):
        _check(obj, "$")  # names the offending place
        raise
    # json.dumps silently writes non-string keys as strings; a round trip that does not
    # give the same value back sends us to the precise (slower) walk.
    if json.loads(text) != obj:
        _check(obj, "$")
    return text.encode("utf-8")


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
    """Exactly what ``request_fingerprint`` covers, as a JSON object."""
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
    """``request-v1:sha256:...`` over messages, output name and schema, prompt version,
    temperature, token limit and model id (see ``request_material``).

    Provider settings (base URL, extra body fields, structured-output mode, timeouts)
    are not covered; fingerprint a ``ProviderConfig`` with its ``fingerprint()`` for that.

    The result equals ``fingerprint(request_material(request, model), "request")``; it is
    assembled from canonical pieces (keys in sorted order) so that the usually large,
    rarely changing output schema is serialised once per schema object.
    """
    # two encodes around the memoised schema; sorted keys put output_schema between
    # output_name and prompt_version, so the joined text is the canonical JSON itself
    head = _piece(
        {
            "max_output_tokens": request.max_output_tokens,
            "messages": [{"content": m.content, "role": m.role} for m in request.messages],
            "model": model,
            "output_name": request.output_name,
        }
    )
    tail = _piece({"prompt_version": request.prompt_version, "temperature": request.temperature})
    text = (
        head[:-1] + ',"output_schema":' + _canonical_schema(request.output_schema) + "," + tail[1:]
    )
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"request-{SCHEME_VERSION}:sha256:{digest}"


# The C encoder that ``_ENCODER.encode`` builds on every call, built once: the same
# code and settings (sorted keys, compact, no ASCII escaping, NaN refused), without the
# per-call set-up. No cycle check: pieces are built here from strings and numbers.
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_PIECE_ENCODER = (
    None
    if _c_make_encoder is None
    else _c_make_encoder(
        None,
        _refuse,
        json.encoder.encode_basestring,
        None,
        ":",
        ",",
        True,
        False,
        False,
    )
)


def _piece(value: Any) -> str:
    """Canonical JSON of a piece whose object keys are known to be strings (built here):
    the round-trip check of ``canonical_json`` is not needed, NaN is still refused."""
    try:
        if _PIECE_ENCODER is None:
            return _ENCODER.encode(value)
        return "".join(_PIECE_ENCODER(value, 0))
    except ValueError as exc:  # NaN or infinity
        raise CanonicalJSONError(str(exc)) from None


# id(schema) -> (the schema object, a snapshot of it, its canonical JSON)
_SCHEMA_MEMO: dict[int, tuple[Any, Any, str]] = {}


def _canonical_schema(schema: Any) -> str:
    hit = _SCHEMA_MEMO.get(id(schema))
    if hit is not None and hit[0] is schema and hit[1] == schema:  # same object, unchanged
        return hit[2]
    text = canonical_json(schema).decode("utf-8")
    if len(_SCHEMA_MEMO) >= 256:
        _SCHEMA_MEMO.clear()
    _SCHEMA_MEMO[id(schema)] = (schema, copy.deepcopy(schema), text)
    return text
