"""Typed answers: closed enums, the output schema sent upstream, strict parsing.

(This module was ``modelgate.typed``. The data types a request and an answer are made
of, ``ModelRequest``, ``Answer``, ``Usage`` and the rest, are in ``modelgate.types``;
this module turns a pydantic output type into the schema sent upstream and checks the
answer text against it.)

An answer is JSON text. ``parse_answer`` checks it against the same schema that
``output_schema`` sends to the provider (every property required, no extra keys),
then validates it with pydantic in strict mode. Nothing is coerced and nothing is
re-asked: an answer of the right shape whose only faults are values outside an
enum (or a ``Literal``) raises ``OutOfSetAnswer``; anything else wrong (not JSON, a
missing or extra key, a wrong type, also together with an out-of-set value) raises
``MalformedAnswer``.
"""

from __future__ import annotations

import copy
import enum
import functools
import json
from typing import Any, TypeVar

import orjson
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError

from modelgate.errors import MalformedAnswer, OutOfSetAnswer

ModelT = TypeVar("ModelT", bound=BaseModel)

_OUT_OF_SET_KEYWORDS = frozenset({"enum", "const"})
_OUT_OF_SET_PYDANTIC = frozenset({"enum", "literal_error"})
# Keywords that strict json_schema modes (OpenAI, NIM) or llama.cpp's grammar do not take.
_DROPPED_KEYWORDS = frozenset({"default", "examples"})


def closed_enum(name: str, values: list[str] | tuple[str, ...]) -> type[enum.StrEnum]:
    """A string enum built for one request, e.g. a menu of source names plus ``"NONE"``.

    Member names are generated (``v0``, ``v1``, ...): a value such as ``__0__`` or ``_x_``
    would be a reserved enum name, dropped or refused. Only values are ever used. Empty or
    duplicate values are refused.
    """
    items = list(values)
    if not items:
        raise ValueError(f"closed enum {name!r} needs at least one value")
    if len(set(items)) != len(items):
        raise ValueError(f"closed enum {name!r} has duplicate values")
    if not all(isinstance(v, str) and v for v in items):
        raise ValueError(f"closed enum {name!r} values must be non-empty strings")
    members = [(f"v{index}", value) for index, value in enumerate(items)]
    return enum.StrEnum(name, members)  # type: ignore[return-value]


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        key = ref.removeprefix("#/$defs/")
        if key in seen:
            raise ValueError(f"recursive output type {key!r} cannot be sent as a closed schema")
        target = _inline(defs[key], defs, (*seen, key))
        siblings = {k: v for k, v in node.items() if k != "$ref" and k not in _DROPPED_KEYWORDS}
        return {**target, **{k: _inline(v, defs, seen) for k, v in siblings.items()}}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED_KEYWORDS or key == "$defs":
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _inline(sub, defs, seen) for name, sub in value.items()}
        else:
            out[key] = _inline(value, defs, seen)
    if out.get("type") == "object" or "properties" in out:
        out["additionalProperties"] = False
        out["required"] = sorted(out.get("properties", {}))
    return out


@functools.lru_cache(maxsize=256)
def _schema_and_validator(model_cls: type[BaseModel]) -> tuple[str, Draft202012Validator]:
    raw = model_cls.model_json_schema()
    schema = _inline(raw, raw.get("$defs", {}), ())
    Draft202012Validator.check_schema(schema)
    return json.dumps(schema), Draft202012Validator(schema)


def output_schema(model_cls: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent upstream for ``model_cls``.

    ``$defs`` are inlined (llama.cpp and older servers handle flat schemas best),
    every object gets ``additionalProperties: false`` and lists all its properties in
    ``required`` (what OpenAI's strict ``json_schema`` mode demands), and defaults are
    dropped. Recursive models are refused. A fresh copy is returned on every call.
    """
    text, _ = _schema_and_validator(model_cls)
    return copy.deepcopy(json.loads(text))


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not valid JSON")


def _decode(text: str) -> Any:
    """Strict JSON: orjson first (no NaN or Infinity); what it refuses is read again by
    the standard decoder, so the accepted set and the error message stay those of
    ``json.loads`` with NaN and Infinity refused."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text, parse_constant=_reject_constant)


def parse_answer(text: str, model_cls: type[ModelT], *, provider: str | None = None) -> ModelT:
    """Parse and strictly validate an answer; ``OutOfSetAnswer`` or ``MalformedAnswer``."""
    try:
        data = _decode(text)
    except (ValueError, TypeError) as exc:
        raise MalformedAnswer(
            f"answer is not JSON: {exc}", raw_text=text, provider=provider
        ) from None
    if model_cls.model_config.get("extra") != "allow":
        # fast path: strict pydantic, then a round trip proving no key was dropped or
        # filled in by a default; anything else goes through the full schema check
        # (the validator and serializer behind model_validate_json and model_dump)
        try:
            value: ModelT = model_cls.__pydantic_validator__.validate_json(text, strict=True)
        except ValidationError:
            pass
        else:
            if model_cls.__pydantic_serializer__.to_python(value, mode="json") == data:
                return value
    _, validator = _schema_and_validator(model_cls)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(root)"
        if all(e.validator in _OUT_OF_SET_KEYWORDS for e in errors):
            # the shape is right; only values fall outside their closed sets
            raise OutOfSetAnswer(
                f"value at {where} is outside the allowed set", raw_text=text, provider=provider
            )
        raise MalformedAnswer(
            f"answer does not match {model_cls.__name__} at {where}: {first.message}",
            raw_text=text,
            provider=provider,
        )
    try:
        return model_cls.model_validate_json(text, strict=True)
    except ValidationError as exc:
        kinds = {err["type"] for err in exc.errors()}
        if kinds & _OUT_OF_SET_PYDANTIC:
            raise OutOfSetAnswer(
                f"answer has a value outside the allowed set for {model_cls.__name__}",
                raw_text=text,
                provider=provider,
            ) from None
        raise MalformedAnswer(
            f"answer does not validate as {model_cls.__name__}: {exc.error_count()} error(s)",
            raw_text=text,
            provider=provider,
        ) from None
