"""Canonical JSON and fingerprints: key order never matters, any value change does."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mg_helpers import make_request

from modelgate.fingerprint import (
    CanonicalJSONError,
    canonical_json,
    fingerprint,
    request_fingerprint,
    verify_fingerprint,
)
from modelgate.types import Message

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
objects = st.dictionaries(st.text(max_size=8), json_values, min_size=1, max_size=6)


def _reorder(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reorder(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reorder(v) for v in value]
    return value


@given(objects)
def test_key_order_does_not_matter(obj: dict[str, Any]) -> None:
    assert canonical_json(_reorder(obj)) == canonical_json(obj)
    assert fingerprint(_reorder(obj), "case") == fingerprint(obj, "case")


@given(objects, st.data())
def test_any_change_of_a_value_changes_the_fingerprint(obj: dict[str, Any], data: Any) -> None:
    key = data.draw(st.sampled_from(sorted(obj)))
    new_value = data.draw(json_values)
    # the same JSON value written differently (e.g. 1 vs True) is a different value here
    if json.dumps(new_value, sort_keys=True) == json.dumps(obj[key], sort_keys=True):
        return
    changed = {**obj, key: new_value}
    assert fingerprint(changed, "case") != fingerprint(obj, "case")


@given(objects, st.text(min_size=1, max_size=8))
def test_adding_a_key_changes_the_fingerprint(obj: dict[str, Any], key: str) -> None:
    if key in obj:
        return
    assert fingerprint({**obj, key: None}, "case") != fingerprint(obj, "case")


@given(objects)
def test_round_trip_and_verify(obj: dict[str, Any]) -> None:
    value = fingerprint(obj, "case")
    assert value.startswith("case-v1:sha256:") and len(value) == len("case-v1:sha256:") + 64
    assert json.loads(canonical_json(obj)) == obj
    assert verify_fingerprint(obj, value)


def test_canonical_form_is_exact() -> None:
    assert canonical_json({"b": [1, 2.5, "é"], "a": None}) == '{"a":null,"b":[1,2.5,"é"]}'.encode()
    assert canonical_json({"x": 1}) != canonical_json({"x": 1.0})


@pytest.mark.parametrize(
    "bad", [{"x": math.nan}, {"x": math.inf}, {1: "int key"}, {"x": {1, 2}}, {"x": b"bytes"}]
)
def test_values_without_a_canonical_form_are_refused(bad: Any) -> None:
    with pytest.raises(CanonicalJSONError):
        canonical_json(bad)


def test_kind_must_be_a_plain_name() -> None:
    with pytest.raises(ValueError):
        fingerprint({}, "Bad Kind")
    assert not verify_fingerprint({}, "not-a-fingerprint")
    assert not verify_fingerprint({"a": 1}, fingerprint({"a": 2}, "case"))


def test_request_fingerprint_covers_what_the_docs_say() -> None:
    base = make_request()
    reference = request_fingerprint(base, "model-a")
    assert reference.startswith("request-v1:sha256:")
    assert request_fingerprint(make_request(), "model-a") == reference
    variants = [
        dataclasses.replace(base, messages=(*base.messages, Message("user", "more"))),
        dataclasses.replace(base, output_name="Other"),
        dataclasses.replace(base, output_schema={**base.output_schema, "title": "Other"}),
        dataclasses.replace(base, prompt_version="test-v2"),
        dataclasses.replace(base, temperature=0.5),
        dataclasses.replace(base, max_output_tokens=33),
    ]
    assert len({request_fingerprint(v, "model-a") for v in variants}) == len(variants)
    assert reference not in {request_fingerprint(v, "model-a") for v in variants}
    assert request_fingerprint(base, "model-b") != reference


@given(
    st.lists(st.tuples(st.sampled_from(["system", "user", "assistant"]), st.text()), max_size=3),
    st.text(max_size=10),
    objects,
    st.text(max_size=10),
    st.floats(min_value=0, max_value=2),
    st.integers(min_value=1, max_value=4096),
    st.text(max_size=10),
)
def test_request_fingerprint_is_the_fingerprint_of_its_material(
    messages: list[tuple[str, str]],
    name: str,
    schema: dict[str, Any],
    version: str,
    temperature: float,
    tokens: int,
    model: str,
) -> None:
    from modelgate.fingerprint import request_material
    from modelgate.types import ModelRequest

    request = ModelRequest(
        messages=tuple(Message(role, text) for role, text in messages),  # type: ignore[arg-type]
        output_name=name,
        output_schema=schema,
        prompt_version=version,
        temperature=temperature,
        max_output_tokens=tokens,
    )
    expected = fingerprint(request_material(request, model), "request")
    assert request_fingerprint(request, model) == expected
    assert request_fingerprint(request, model) == expected  # from the schema memo


def test_a_mutated_schema_is_not_served_from_the_memo() -> None:
    request = make_request()
    before = request_fingerprint(request, "m")
    request.output_schema["title"] = "Changed in place"
    assert request_fingerprint(request, "m") != before


def _reference(obj: Any) -> bytes:
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


wide_scalars = (
    st.none()
    | st.booleans()
    | st.integers()  # beyond 64 bits too: orjson refuses them, the reference writes them
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12)
)
wide_values = st.recursive(
    wide_scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=25,
)


@given(wide_values)
def test_fast_path_writes_the_reference_bytes(value: Any) -> None:
    # orjson writes plain values; floats, big integers and the rest go the json way:
    # either way the bytes are those of the reference encoder
    assert canonical_json(value) == _reference(value)


def test_fast_path_refuses_what_the_reference_refuses() -> None:
    class Text(str):
        pass

    assert canonical_json({"a": Text("x")}) == _reference({"a": "x"})  # subclass: reference
    for bad in ({1: "int key"}, {"a": float("nan")}, {"a": {2: []}}, {"a": object()}):
        with pytest.raises(CanonicalJSONError):
            canonical_json(bad)
    with pytest.raises(UnicodeEncodeError):  # a lone surrogate has no UTF-8 form
        canonical_json({"a": "\ud800"})
