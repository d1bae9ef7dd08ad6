"""The output schema derived per request from the catalogue: a strict subset of the
static file, read from the same rule table as the validator."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from interp_catalogue import answer, catalogue, entry, statement
from jsonschema import Draft202012Validator

from viano_bug_analysis.analysis.catalogue import Catalogue
from viano_bug_analysis.analysis.request_schema import (
    BOUNDS_LADDER,
    CHARS_PER_TOKEN,
    answer_bounds,
    derive_schema,
)
from viano_bug_analysis.analysis.rules import RULES, CitationRule, letters
from viano_bug_analysis.analysis.schema_file import output_schema
from viano_bug_analysis.analysis.validation import validate_output

STATIC = Draft202012Validator(output_schema())
# rules the derived schema cannot state portably; every other rule it makes unbreakable
VALIDATOR_ONLY = frozenset({"contradiction_too_few", "entity_duplicate"})
# the keywords derive_schema writes; the generator below refuses any other
KEYWORDS = frozenset(
    {
        "$schema",
        "title",
        "type",
        "additionalProperties",
        "required",
        "properties",
        "$defs",
        "$ref",
        "anyOf",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "enum",
        "minLength",
        "maxLength",
        "pattern",
    }
)


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def section_ids(schema: dict[str, Any], section: str) -> list[str] | None:
    """The ids a section's statements may cite (None: the section must be empty/null)."""
    node = resolve(schema, schema["properties"][section])
    if node.get("type") == "null" or node.get("maxItems") == 0:
        return None
    if "anyOf" in node:
        node = resolve(schema, node["anyOf"][0])
    if node.get("type") == "array":
        node = resolve(schema, node["items"])
    ids = resolve(schema, node["properties"]["source_ids"])
    if "anyOf" in ids:  # a required citation first: the longest form lists the rest
        ids = ids["anyOf"][-1]
    items = resolve(schema, ids.get("items") or ids["prefixItems"][-1])
    return list(items["enum"])


def instances(schema: dict[str, Any], node: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A strategy for instances of ``node`` (the keywords derive_schema writes only)."""
    unknown = set(node) - KEYWORDS
    assert not unknown, unknown
    if "$ref" in node:
        return instances(schema, resolve(schema, node))
    if "anyOf" in node:
        return st.one_of([instances(schema, option) for option in node["anyOf"]])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node["type"]
    if kind == "null":
        return st.none()
    if kind == "string":
        assert "pattern" not in node or "enum" in node
        return st.text(min_size=node.get("minLength", 0), max_size=min(node["maxLength"], 20))
    if kind == "array" and "prefixItems" in node:
        assert node["items"] is False and node["minItems"] == len(node["prefixItems"])
        return st.tuples(*(instances(schema, item) for item in node["prefixItems"])).map(list)
    if kind == "array":
        if node["maxItems"] == 0:
            return st.just([])
        return st.lists(
            instances(schema, node["items"]),
            min_size=node.get("minItems", 0),
            max_size=min(node["maxItems"], 4),
        )
    assert kind == "object" and node["additionalProperties"] is False
    return st.fixed_dictionaries(
        {name: instances(schema, sub) for name, sub in node["properties"].items()}
    )


@st.composite
def catalogues(draw: st.DrawFn) -> Catalogue:
    entries = []
    for letter in "OCTEFRBSNDX":
        for n in range(1, draw(st.integers(0, 3)) + 1):
            inline = draw(st.booleans()) if letter == "F" else True
            entries.append(
                entry(
                    f"{letter}{n:04d}",
                    origin=draw(st.sampled_from(["original", "tester", "external_research"])),
                    inline=inline and letter != "X",
                    unread=letter == "X" or not inline,
                )
            )
    completeness = draw(st.sampled_from(["complete", "incomplete", "missing", "conflicting"]))
    entries.append(entry("Q0001", data={"value": completeness}))
    return Catalogue(draw(st.permutations(entries)))


@st.composite
def derived_instances(draw: st.DrawFn) -> tuple[Catalogue, dict[str, Any], Any]:
    cat = draw(catalogues())
    budget = draw(st.sampled_from([None, 512, 2048, 4096, 100_000]))
    schema = derive_schema(cat, max_output_tokens=budget)
    return cat, schema, draw(instances(schema, schema))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(derived_instances())
def test_every_instance_of_a_derived_schema_is_valid_under_the_static_file(
    drawn: tuple[Catalogue, dict[str, Any], Any],
) -> None:
    cat, schema, value = drawn
    Draft202012Validator.check_schema(schema)
    assert Draft202012Validator(schema).is_valid(value)
    problems = validate_output(value, cat)
    if not problems:  # what the validator accepts is valid under the published file
        assert STATIC.is_valid(value)
    assert STATIC.is_valid(value)  # and in fact every instance is
    # the rules the schema states are never broken by an instance of it
    assert {p.rule for p in problems} <= VALIDATOR_ONLY, problems


def test_bounds_keep_the_largest_answer_inside_the_output_limit() -> None:
    previous = None
    for bounds in BOUNDS_LADDER:  # from the file's bounds down, each smaller
        if previous is not None:
            assert bounds.worst_chars() < previous.worst_chars()
        previous = bounds
    assert answer_bounds(None) == BOUNDS_LADDER[0]
    for tokens in (1536, 2048, 4096, 8192, 65536):
        bounds = answer_bounds(tokens)
        assert bounds.worst_chars() <= tokens * CHARS_PER_TOKEN
        schema = derive_schema(catalogue(), max_output_tokens=tokens)
        observed = schema["properties"]["observed_behavior"]
        assert observed["maxItems"] == bounds.items
        text = resolve(schema, observed["items"])["properties"]["text"]
        assert text["maxLength"] == min(8000, bounds.chars)
    assert answer_bounds(2048).chars < answer_bounds(8192).chars


def test_derivation_is_deterministic_and_fresh() -> None:
    first = derive_schema(catalogue())
    second = derive_schema(catalogue())
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    first["properties"].clear()
    assert derive_schema(catalogue())["properties"]


def test_sections_allow_exactly_what_the_rules_allow() -> None:
    schema = derive_schema(catalogue())
    everything = [e["id"] for e in catalogue().entries]
    assert section_ids(schema, "observed_behavior") == everything
    assert section_ids(schema, "unknowns") == everything
    assert section_ids(schema, "expected_behavior") == ["E0001", "E0002"]
    assert section_ids(schema, "tester_assumptions") == ["C0001", "T0001"]
    assert section_ids(schema, "confirmed_technical_facts") == ["F0001"]
    readable = [i for i in everything if i not in ("F0002", "X0001")]
    assert section_ids(schema, "contradictions") == readable
    entities = resolve(schema, schema["properties"]["relevant_entities"]["items"])
    assert resolve(schema, entities["properties"]["entity_id"])["enum"] == ["N0001", "N0002"]
    assert schema["properties"]["relevant_entities"]["maxItems"] == 2


def test_without_expectations_intended_behaviour_and_gaps_are_closed() -> None:
    schema = derive_schema(catalogue(completeness="missing", with_expectation=False))
    assert schema["properties"]["expected_behavior"]["maxItems"] == 0
    assert schema["properties"]["behavior_gap"] == {"type": "null"}
    assert schema["properties"]["first_known_divergence"] == {"type": "null"}
    unknowns = schema["properties"]["unknowns"]["anyOf"]
    assert [form["minItems"] for form in unknowns] == [1, 2, 3, 4]
    first = resolve(schema, unknowns[0]["prefixItems"][0])["properties"]["source_ids"]["anyOf"]
    assert resolve(schema, first[0]["prefixItems"][0])["enum"] == ["Q0001"]
    assert not Draft202012Validator(schema).is_valid(
        answer(unknowns=[statement("Operating system unknown.", "D0001")])
    )
    invented = answer(
        expected_behavior=[statement("It should work.", "O0001")],
        behavior_gap=None,
        first_known_divergence=None,
        interpretation_summary=statement("Summary.", "O0001"),
        unknowns=[statement("No intended behaviour given.", "Q0001")],
    )
    assert not Draft202012Validator(schema).is_valid(invented)


def test_gaps_cite_intended_behaviour_and_an_observation_first() -> None:
    schema = derive_schema(catalogue())
    check = Draft202012Validator(schema)
    gap = resolve(schema, schema["properties"]["behavior_gap"]["anyOf"][0])
    forms = gap["properties"]["source_ids"]["anyOf"]
    assert resolve(schema, forms[0]["prefixItems"][0])["enum"] == ["E0001", "E0002"]
    observed = resolve(schema, forms[0]["prefixItems"][1])["enum"]
    assert observed == ["O0001", "O0002", "C0001", "B0001"]
    assert check.is_valid(answer())
    assert not check.is_valid(answer(behavior_gap=statement("Differs.", "O0001", "C0001")))
    assert not check.is_valid(answer(behavior_gap=statement("Differs.", "E0001", "S0001")))


def test_a_changed_rule_changes_the_schema_and_the_validator_alike() -> None:
    cat = catalogue()
    tester = next(r for r in RULES.citations if r.section == "tester_assumptions")
    only_t = dataclasses.replace(tester, admits=letters("T"), kinds="T")
    changed = dataclasses.replace(
        RULES,
        citations=(
            *(only_t if r is tester else r for r in RULES.citations),
            CitationRule(
                "investigation_direction",
                "direction_not_observed",
                letters("O"),
                "O",
                "{section} may cite only {kinds} records, not {id}",
            ),
        ),
    )
    before, after = derive_schema(cat), derive_schema(cat, changed)
    assert section_ids(before, "tester_assumptions") == ["C0001", "T0001"]
    assert section_ids(after, "tester_assumptions") == ["T0001"]
    assert section_ids(after, "investigation_direction") == ["O0001", "O0002"]

    from viano_bug_analysis.analysis.validation import reference_violations

    out = answer(tester_assumptions=[statement("A comment assumes.", "C0001")])
    assert reference_violations(out, cat) == []
    assert [v.rule for v in reference_violations(out, cat, changed)] == [
        "assumption_not_tester",
        "direction_not_observed",  # the shared answer's direction cites S0001
    ]


@pytest.mark.parametrize("size", [2, 64, 2048])
def test_large_catalogues_keep_each_id_set_once(size: int) -> None:
    entries = [entry(f"O{n:04d}") for n in range(1, size)]
    entries.append(entry("Q0001", data={"value": "missing"}))
    schema = derive_schema(Catalogue(entries))
    Draft202012Validator.check_schema(schema)
    text = json.dumps(schema)
    assert text.count('"O0001"') == 1  # every section refers to the same id set
