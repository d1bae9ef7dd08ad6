"""Canonical JSON and fingerprints: key order never matters, any value change does."""

from __future__ import annotations

import dataclasses
import enum
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
    # Python's float text, where orjson would write 1e-7 and 1e16
    assert canonical_json({"x": 1e-7, "y": [1e16]}) == b'{"x":1e-07,"y":[1e+16]}'
    assert canonical_json({"b": "\u2028", "a": ("é", 2**70)}) == (
        '{"a":["é",1180591620717411303424],"b":"\u2028"}'.encode()
    )


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


def test_a_schema_changed_in_place_changes_the_fingerprint() -> None:
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
def test_canonical_json_is_the_documented_json_dumps(value: Any) -> None:
    # the definition in the module docstring, for every JSON value it accepts
    assert canonical_json(value) == _reference(value)


def test_subclasses_are_written_as_their_plain_value() -> None:
    class Text(str):
        pass

    class Colour(enum.StrEnum):
        RED = "red"

    value = {"a": Text("x"), "b": [Colour.RED], Text("k"): 1}
    assert canonical_json(value) == _reference({"a": "x", "b": ["red"], "k": 1})


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ({"a": [1, {"b": math.nan}]}, "$.a[1].b: NaN"),
        ({"a": {2: []}}, "$.a: object key 2"),
        ([{"x": object()}], "$[0].x: object is not"),
    ],
)
def test_a_refusal_names_the_place(bad: Any, where: str) -> None:
    with pytest.raises(CanonicalJSONError) as caught:
        canonical_json(bad)
    assert str(caught.value).startswith(where)


def test_a_lone_surrogate_has_no_utf8_form() -> None:
    with pytest.raises(UnicodeEncodeError):
        canonical_json({"a": "\ud800"})
