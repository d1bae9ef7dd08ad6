"""Typed answers: closed sets, a strict schema, no coercion."""

from __future__ import annotations

import enum
from typing import Literal

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, create_model

from modelgate.answers import closed_enum, output_schema, parse_answer
from modelgate.errors import MalformedAnswer, OutOfSetAnswer


class Attribution(enum.StrEnum):
    DIRECT = "DIRECT"
    RELAY = "RELAY"
    UNCLEAR = "UNCLEAR"


def _menu_model() -> type[BaseModel]:
    menu = closed_enum("SourceChoice", ["Nepal Police Demo", "Central Hospital Demo", "NONE"])
    return create_model(
        "AttributionResult", attribution=(Attribution, ...), referenced_source=(menu, ...)
    )


class Nested(BaseModel):
    class Item(BaseModel):
        text: str
        source_ids: list[str]

    items: list[Item]
    kind: Literal["a", "b"]
    gap: Item | None


def test_closed_enum_values_and_refusals() -> None:
    menu = closed_enum("Menu", ["Org A", "NONE"])
    assert [m.value for m in menu] == ["Org A", "NONE"]
    assert menu("Org A") == "Org A"
    for bad in ([], ["x", "x"], [""]):
        with pytest.raises(ValueError):
            closed_enum("Menu", bad)


def test_schema_is_closed_flat_and_strict() -> None:
    schema = output_schema(Nested)
    Draft202012Validator.check_schema(schema)
    text = str(schema)
    assert "$ref" not in text and "$defs" not in text and "'default'" not in text
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["gap", "items", "kind"]
    item = schema["properties"]["items"]["items"]
    assert item["additionalProperties"] is False and item["required"] == ["source_ids", "text"]
    schema["title"] = "mutated"
    assert output_schema(Nested)["title"] == "Nested"  # callers get a copy


def test_menu_enum_appears_in_the_schema() -> None:
    schema = output_schema(_menu_model())
    assert schema["properties"]["referenced_source"]["enum"] == [
        "Nepal Police Demo",
        "Central Hospital Demo",
        "NONE",
    ]


def test_valid_answer_parses() -> None:
    model = _menu_model()
    value = parse_answer(
        '{"attribution": "RELAY", "referenced_source": "Nepal Police Demo"}', model
    )
    assert value.attribution is Attribution.RELAY  # type: ignore[attr-defined]
    nested = parse_answer(
        '{"items": [{"text": "t", "source_ids": ["O1"]}], "kind": "a", "gap": null}', Nested
    )
    assert nested.items[0].source_ids == ["O1"]


@pytest.mark.parametrize(
    "text",
    [
        '{"attribution": "MAYBE", "referenced_source": "NONE"}',
        '{"attribution": "RELAY", "referenced_source": "Invented Org"}',
        '{"attribution": "direct", "referenced_source": "NONE"}',
    ],
)
def test_value_outside_the_set_is_out_of_set(text: str) -> None:
    with pytest.raises(OutOfSetAnswer) as caught:
        parse_answer(text, _menu_model())
    assert caught.value.raw_text == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "DIRECT",
        "NaN",
        '```json\n{"attribution": "DIRECT", "referenced_source": "NONE"}\n```',
        '["DIRECT", "NONE"]',
        '{"attribution": "DIRECT"}',
        '{"attribution": "DIRECT", "referenced_source": "NONE", "root_cause": "x"}',
        '{"attribution": 1, "referenced_source": "NONE"}',
        '{"attribution": ["DIRECT"], "referenced_source": "NONE"}',
    ],
)
def test_wrong_shape_is_malformed(text: str) -> None:
    with pytest.raises(MalformedAnswer):
        parse_answer(text, _menu_model())


def test_no_coercion() -> None:
    class Counted(BaseModel):
        count: int
        flag: bool

    with pytest.raises(MalformedAnswer):
        parse_answer('{"count": "3", "flag": true}', Counted)
    with pytest.raises(MalformedAnswer):
        parse_answer('{"count": 3, "flag": "true"}', Counted)
    with pytest.raises(MalformedAnswer):
        parse_answer('{"count": 3.0, "flag": true}', Counted)
    assert parse_answer('{"count": 3, "flag": true}', Counted).count == 3


def test_literal_violation_is_out_of_set() -> None:
    with pytest.raises(OutOfSetAnswer):
        parse_answer('{"items": [], "kind": "c", "gap": null}', Nested)


def test_closed_enum_keeps_values_enum_would_treat_as_reserved_names() -> None:
    """Member names are generated: a value such as ``__0__``, ``_x_`` or ``mro`` is a
    value like any other (as a member name, enum dropped or refused it)."""
    values = ["__0__", "_x_", "mro", "name", "value", "NONE"]
    menu = closed_enum("Menu", values)
    assert [m.value for m in menu] == values
