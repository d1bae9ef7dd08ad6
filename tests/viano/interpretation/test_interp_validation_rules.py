"""Every reference rule of the output contract, each with its own test, on hand-written
catalogues. A valid answer passes; each test breaks exactly one rule."""

from __future__ import annotations

import json

import pytest
from interp_catalogue import answer, catalogue, statement
from jsonschema import Draft202012Validator

from viano_bug_analysis.analysis.schema_file import output_schema
from viano_bug_analysis.analysis.validation import validate_output

SECTIONS = [
    "observed_behavior",
    "expected_behavior",
    "tester_assumptions",
    "confirmed_technical_facts",
    "behavior_gap",
    "first_known_divergence",
    "failure_stage",
    "contradictions",
    "unknowns",
    "relevant_entities",
    "investigation_direction",
    "interpretation_summary",
]


def rules(output: object, **kwargs: object) -> list[str]:
    return [v.rule for v in validate_output(output, catalogue(**kwargs))]  # type: ignore[arg-type]


def test_schema_file_has_exactly_the_twelve_required_sections() -> None:
    schema = output_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["required"] == SECTIONS
    assert sorted(schema["properties"]) == sorted(SECTIONS)
    assert schema["additionalProperties"] is False


def test_valid_answer_passes() -> None:
    assert rules(answer()) == []


def test_nullable_sections_and_empty_collections_pass() -> None:
    out = answer(
        observed_behavior=[],
        expected_behavior=[],
        tester_assumptions=[],
        confirmed_technical_facts=[],
        behavior_gap=None,
        first_known_divergence=None,
        failure_stage=None,
        contradictions=[],
        relevant_entities=[],
        investigation_direction=[],
    )
    assert rules(out) == []


@pytest.mark.parametrize("key", ["root_cause", "hypotheses", "patch", "tool_request", "case_id"])
def test_extra_top_level_keys_are_rejected(key: str) -> None:
    out = answer()
    out[key] = "anything"
    assert rules(out) == ["schema"]


def test_extra_key_inside_a_statement_is_rejected() -> None:
    out = answer()
    out["observed_behavior"][0]["root_cause"] = "the parser"
    assert rules(out) == ["schema"]


@pytest.mark.parametrize("key", SECTIONS)
def test_each_missing_section_is_rejected(key: str) -> None:
    out = answer()
    del out[key]
    assert rules(out) == ["schema"]


def test_statement_without_sources_is_rejected() -> None:
    out = answer(observed_behavior=[statement("Uncited.")])
    assert rules(out) == ["schema"]


def test_cited_source_must_exist() -> None:
    out = answer(observed_behavior=[statement("Invented.", "O0099")])
    assert rules(out) == ["unknown_source"]


def test_relevant_entity_must_be_a_real_n_alias() -> None:
    out = answer(relevant_entities=[{"entity_id": "N0042", "role": "invented"}])
    assert rules(out) == ["entity_not_entity"]


def test_relevant_entity_must_be_unique() -> None:
    item = {"entity_id": "N0001", "role": "twice"}
    out = answer(relevant_entities=[item, item])
    assert rules(out) == ["entity_duplicate"]


def test_relevant_entity_cannot_be_another_kind() -> None:
    out = answer(relevant_entities=[{"entity_id": "O0001", "role": "not an entity"}])
    assert rules(out) == ["schema"]  # the schema's N pattern already refuses it


def test_intended_behavior_cites_e_records_only() -> None:
    out = answer(expected_behavior=[statement("It should work.", "E0001", "O0001")])
    assert rules(out) == ["expected_not_expectation"]


def test_tester_assumptions_cite_t_or_c_only() -> None:
    out = answer(tester_assumptions=[statement("Assumed.", "T0001", "F0001")])
    assert rules(out) == ["assumption_not_tester"]


def test_confirmed_facts_cite_inline_facts_only() -> None:
    out = answer(confirmed_technical_facts=[statement("Log says so.", "F0002")])
    assert rules(out) == ["fact_not_local_inline"]


def test_tester_assumption_cannot_become_technical_proof() -> None:
    out = answer(confirmed_technical_facts=[statement("Tester thinks so.", "T0001")])
    assert rules(out) == ["fact_not_local_inline"]


def test_external_expectation_cannot_become_technical_proof() -> None:
    out = answer(confirmed_technical_facts=[statement("Docs say so.", "E0002")])
    assert rules(out) == ["fact_not_local_inline"]


def test_external_research_fact_is_not_local_proof() -> None:
    out = answer(confirmed_technical_facts=[statement("Found online.", "F0003")])
    assert rules(out) == ["fact_not_local_inline"]


@pytest.mark.parametrize("section", ["behavior_gap", "first_known_divergence"])
def test_divergence_needs_intended_behavior(section: str) -> None:
    out = answer(**{section: statement("Differs.", "O0001", "C0001")})
    assert rules(out) == ["divergence_without_intended"]


@pytest.mark.parametrize("section", ["behavior_gap", "first_known_divergence"])
def test_divergence_needs_an_observation(section: str) -> None:
    out = answer(**{section: statement("Differs.", "E0001", "F0001")})
    assert rules(out) == ["divergence_without_observed"]


@pytest.mark.parametrize("section", ["behavior_gap", "first_known_divergence"])
def test_reproduction_step_alone_does_not_establish_divergence(section: str) -> None:
    out = answer(**{section: statement("Step 2 differs.", "E0001", "S0001", "R0001")})
    assert rules(out) == ["divergence_without_observed"]


def test_contradiction_needs_two_distinct_sources() -> None:
    out = answer(contradictions=[statement("Self contradiction.", "O0001", "O0001")])
    assert rules(out) == ["contradiction_too_few"]


def test_contradiction_cannot_use_unread_reference() -> None:
    out = answer(contradictions=[statement("Log disagrees.", "O0001", "X0001")])
    assert rules(out) == ["contradiction_unread"]


def test_contradiction_cannot_use_value_ref_fact() -> None:
    out = answer(contradictions=[statement("Attachment disagrees.", "O0001", "F0002")])
    assert rules(out) == ["contradiction_unread"]


@pytest.mark.parametrize("completeness", ["incomplete", "missing", "conflicting"])
def test_incomplete_intended_behavior_must_remain_an_unknown(completeness: str) -> None:
    out = answer(unknowns=[statement("OS unknown.", "D0001")])
    assert rules(out, completeness=completeness) == ["incompleteness_not_unknown"]
    fixed = answer(unknowns=[statement("Intended behaviour is unclear.", "Q0001")])
    assert rules(fixed, completeness=completeness) == []


def test_without_e_records_an_invented_expectation_cannot_pass() -> None:
    out = answer(
        expected_behavior=[statement("It should keep the space.", "E0001")],
        behavior_gap=None,
        first_known_divergence=None,
        interpretation_summary=statement("Summary.", "O0001"),
        unknowns=[statement("No intended behaviour given.", "Q0001")],
    )
    assert rules(out, completeness="missing", with_expectation=False) == ["unknown_source"]
    borrowed = answer(
        expected_behavior=[statement("It should keep the space.", "O0001")],
        behavior_gap=None,
        first_known_divergence=None,
        interpretation_summary=statement("Summary.", "O0001"),
        unknowns=[statement("No intended behaviour given.", "Q0001")],
    )
    assert rules(borrowed, completeness="missing", with_expectation=False) == [
        "expected_not_expectation"
    ]


def test_without_e_records_a_justified_gap_cannot_pass() -> None:
    out = answer(
        expected_behavior=[],
        behavior_gap=statement("Differs from what users want.", "O0001", "C0001"),
        first_known_divergence=None,
        interpretation_summary=statement("Summary.", "O0001"),
        unknowns=[statement("No intended behaviour given.", "Q0001")],
    )
    assert rules(out, completeness="missing", with_expectation=False) == [
        "divergence_without_intended"
    ]


def test_every_violation_is_reported_with_its_location() -> None:
    out = answer(
        observed_behavior=[statement("Invented.", "O0099")],
        tester_assumptions=[statement("Assumed.", "F0001")],
    )
    found = validate_output(out, catalogue())
    assert [(v.rule, v.at) for v in found] == [
        ("unknown_source", "/observed_behavior/0/source_ids/0"),
        ("assumption_not_tester", "/tester_assumptions/0/source_ids/0"),
    ]
    json.dumps([v.to_json() for v in found])


def _mirror_samples() -> list[object]:
    samples: list[object] = [answer(), answer(behavior_gap=None, relevant_entities=[])]
    extra = answer()
    extra["root_cause"] = "x"
    samples.append(extra)
    missing = answer()
    del missing["unknowns"]
    samples.append(missing)
    samples.append(answer(observed_behavior=[statement("t")]))  # no source ids
    samples.append(answer(observed_behavior=[statement("t", "O1")]))  # bad id pattern
    samples.append(answer(observed_behavior=[statement("", "O0001")]))  # empty text
    samples.append(answer(observed_behavior=[statement("x" * 8001, "O0001")]))
    samples.append(answer(interpretation_summary=None))
    samples.append(answer(relevant_entities=[{"entity_id": "N0001"}]))
    samples.append(answer(relevant_entities=[{"entity_id": "O0001", "role": "r"}]))
    samples.append(answer(observed_behavior="not a list"))
    samples.append(answer(unknowns=[{"text": "t", "source_ids": ["D0001"], "extra": 1}]))
    samples.append(answer(contradictions=[statement("t", "O0001")] * 257))
    return samples


@pytest.mark.parametrize("index", range(14))
def test_pydantic_mirror_agrees_with_the_schema_file(index: int) -> None:
    from pydantic import ValidationError

    from viano_bug_analysis.analysis.output_model import InterpretationOutput

    sample = _mirror_samples()[index]
    by_file = not Draft202012Validator(output_schema()).is_valid(sample)
    try:
        InterpretationOutput.model_validate_json(json.dumps(sample), strict=True)
        by_mirror = False
    except ValidationError:
        by_mirror = True
    assert by_file == by_mirror


def test_gateway_sends_the_schema_file() -> None:
    from modelgate.answers import output_schema as sent_schema
    from viano_bug_analysis.analysis.output_model import InterpretationOutput

    sent = sent_schema(InterpretationOutput)
    assert sorted(sent["required"]) == sorted(SECTIONS)
    assert (
        sent["properties"]["relevant_entities"]["items"]["properties"]["entity_id"]["pattern"]
        == output_schema()["$defs"]["entity_reference"]["properties"]["entity_id"]["pattern"]
    )


def test_llm_package_imports_on_its_own() -> None:
    import subprocess
    import sys

    code = "from viano_bug_analysis.llm import GatewayConfig, LLMGateway; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr
