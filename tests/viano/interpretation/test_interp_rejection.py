"""Invalid answers are rejected atomically; provenance comes from the case."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from interp_support import (
    BASIC_INTAKE,
    CASE_ID,
    PACKAGE_ID,
    answer_for,
    built_store,
    members,
    prepared_context,
    reply,
    scripted_gateway,
)

from viano_bug_analysis.analysis import CaseInterpreter, OutcomeStatus
from viano_bug_analysis.packages import PackageStore

POINTERS = ("interpretation_context", "case_interpretation", "case_interpretation_summary")


def assert_nothing_published(store: PackageStore) -> dict[str, bytes]:
    current = store.current(CASE_ID, PACKAGE_ID)
    assert current.manifest.phase == "INTERPRETING_CASE"
    assert not set(POINTERS) & set(current.manifest.pointers)
    names = members(store)
    assert not [n for n in names if n.endswith(("case_interpretation.json", ".md"))]
    assert "case-interpreted" not in [c.name for c in current.manifest.checkpoints]
    return names


async def test_reference_violation_is_rejected_with_a_report_and_the_raw_round(
    tmp_path: Path,
) -> None:
    store = built_store(tmp_path)
    bad = answer_for(prepared_context(store).catalogue)
    bad["observed_behavior"][0]["source_ids"] = ["O0999"]
    gateway, _ = scripted_gateway(reply(bad))
    result = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)

    assert result.status is OutcomeStatus.ERROR
    assert [v["rule"] for v in result.violations] == ["unknown_source"]
    names = assert_nothing_published(store)
    assert result.rejection_ref is not None and result.round_ref is not None
    report = json.loads(names[result.rejection_ref])
    assert result.rejection_ref.endswith(f"/errors/{result.attempt_hash}.json")
    assert report["reason"] == "response_invalid"
    assert report["llm_outcome_ref"] == result.round_ref
    assert report["phase"] == "INTERPRETING_CASE"
    round_record = json.loads(names[result.round_ref])
    assert round_record["outcome"]["status"] == "COMPLETED"  # the gateway's own outcome
    assert json.loads(round_record["outcome"]["raw_text"]) == bad


async def test_schema_violation_is_rejected_and_not_retried(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    bad = answer_for(prepared_context(store).catalogue)
    bad["root_cause"] = "a race in the upload queue"
    gateway, provider = scripted_gateway(reply(bad), reply(bad))
    interpreter = CaseInterpreter(store, gateway)
    result = await interpreter.interpret(CASE_ID, PACKAGE_ID)
    assert result.status is OutcomeStatus.ERROR
    assert [v["rule"] for v in result.violations] == ["schema"]
    names = assert_nothing_published(store)
    report = json.loads(names[result.rejection_ref or ""])
    assert report["gateway_error"]["code"] == "malformed_answer"
    again = await interpreter.interpret(CASE_ID, PACKAGE_ID)  # same attempt: reused, not resent
    assert again.status is OutcomeStatus.ERROR and again.reused
    assert len(provider.requests) == 1


async def test_corrected_answer_under_a_new_attempt_id_keeps_the_old_report(
    tmp_path: Path,
) -> None:
    store = built_store(tmp_path)
    good = answer_for(prepared_context(store).catalogue)
    bad = copy.deepcopy(good)
    bad["expected_behavior"][0]["source_ids"] = ["O0001"]
    gateway, _ = scripted_gateway(reply(bad), reply(good))
    interpreter = CaseInterpreter(store, gateway)
    rejected = await interpreter.interpret(CASE_ID, PACKAGE_ID)
    report = members(store)[rejected.rejection_ref or ""]
    accepted = await interpreter.interpret(CASE_ID, PACKAGE_ID, attempt_id="corrected")
    assert accepted.status is OutcomeStatus.COMPLETED
    after = members(store)
    assert after[rejected.rejection_ref or ""] == report
    assert accepted.analysis_revision == rejected.analysis_revision
    wrapper = json.loads(after["analysis/interpretations/0001/case_interpretation.json"])
    assert wrapper["attempt_id"] == "corrected"


def _no_expectation_intake() -> dict[str, Any]:
    intake = copy.deepcopy(BASIC_INTAKE)
    intake["title"] = "Draft attachment list is empty"
    intake["summary"] = "Reopened drafts show no attachment."
    del intake["expected_behavior"]
    return intake


async def test_missing_expectations_cannot_be_invented(tmp_path: Path) -> None:
    store = built_store(tmp_path, _no_expectation_intake())
    catalogue = prepared_context(store).catalogue
    assert catalogue.ids("E") == [] and catalogue.completeness() == "missing"
    invented = answer_for(catalogue)
    invented["expected_behavior"] = [
        {"text": "Attachments should persist.", "source_ids": ["B0001"]}
    ]
    invented["behavior_gap"] = {"text": "It loses them.", "source_ids": ["O0001", "B0001"]}
    gateway, _ = scripted_gateway(reply(invented))
    result = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert result.status is OutcomeStatus.ERROR
    assert {v["rule"] for v in result.violations} == {
        "expected_not_expectation",
        "divergence_without_intended",
    }
    assert_nothing_published(store)


async def test_missing_expectations_stay_an_unknown_citing_q0001(tmp_path: Path) -> None:
    store = built_store(tmp_path, _no_expectation_intake())
    catalogue = prepared_context(store).catalogue
    silent = answer_for(catalogue)
    silent["unknowns"] = [{"text": "Which OS?", "source_ids": ["O0001"]}]
    honest = answer_for(catalogue)
    gateway, _ = scripted_gateway(reply(silent), reply(honest))
    interpreter = CaseInterpreter(store, gateway)
    first = await interpreter.interpret(CASE_ID, PACKAGE_ID)
    assert [v["rule"] for v in first.violations] == ["incompleteness_not_unknown"]
    second = await interpreter.interpret(CASE_ID, PACKAGE_ID, attempt_id="honest")
    assert second.status is OutcomeStatus.COMPLETED
    wrapper = json.loads(members(store)["analysis/interpretations/0001/case_interpretation.json"])
    assert wrapper["expected_behavior_status"]["completeness"] == "missing"
    assert wrapper["interpretation"]["behavior_gap"] is None


async def test_provenance_and_completeness_are_copied_from_the_case(tmp_path: Path) -> None:
    intake = copy.deepcopy(BASIC_INTAKE)
    intake["expected_behavior"] = [
        {
            "text": "The vendor guide says attachments persist in drafts.",
            "origin": "external_research",
            "author": "researcher-c",
            "timestamp": "2024-03-03T08:00:00Z",
        },
    ]
    store = built_store(tmp_path, intake)
    context = prepared_context(store)
    entry = context.catalogue.get("E0001")
    assert entry is not None and entry["origin"] == "external_research"
    assert entry["author"] == "researcher-c" and entry["timestamp"] == "2024-03-03T08:00:00Z"
    answer = answer_for(context.catalogue)
    # external intended behaviour can never be cited as a confirmed local fact
    proof = copy.deepcopy(answer)
    proof["confirmed_technical_facts"].append({"text": "Guide says so.", "source_ids": ["E0001"]})
    gateway, _ = scripted_gateway(reply(proof), reply(answer))
    interpreter = CaseInterpreter(store, gateway)
    rejected = await interpreter.interpret(CASE_ID, PACKAGE_ID)
    assert [v["rule"] for v in rejected.violations] == ["fact_not_local_inline"]
    accepted = await interpreter.interpret(CASE_ID, PACKAGE_ID, attempt_id="second")
    assert accepted.status is OutcomeStatus.COMPLETED
    wrapper = json.loads(members(store)["analysis/interpretations/0001/case_interpretation.json"])
    with store.current(CASE_ID, PACKAGE_ID).open() as reader:
        case = json.loads(reader.read(reader.require_manifest().pointers["canonical_case"]))
    q = next(r for r in case["records"] if r["id"] == "Q0001")
    assert wrapper["expected_behavior_status"]["completeness"] == q["value"]
    assert wrapper["expected_behavior_status"]["provenance"] == q["expected_behavior_provenance"]
    assert q["expected_behavior_provenance"] == "external_research"
    assert q["provenance"]["origin"] == "derived"  # the Q record itself is the builder's
    assert wrapper["sources"]["E0001"]["origin"] == "external_research"
    assert wrapper["sources"]["E0001"]["author"] == "researcher-c"
    facts = wrapper["interpretation"]["confirmed_technical_facts"]
    assert all(
        wrapper["sources"][i]["origin"] == "original" for f in facts for i in f["source_ids"]
    )


async def test_model_cannot_overwrite_authoritative_fields(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    answer = answer_for(prepared_context(store).catalogue)
    answer["case_id"] = "someone-else"
    answer["analysis_revision"] = 99
    gateway, _ = scripted_gateway(reply(answer))
    result = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert result.status is OutcomeStatus.ERROR
    assert_nothing_published(store)


async def test_builder_made_sources_are_derived_in_the_wrapper(tmp_path: Path) -> None:
    """D and Q entries are the builder's own records: the context and the wrapper's
    sources say ``derived``, never that they are supplied data."""
    intake = copy.deepcopy(BASIC_INTAKE)
    intake["expected_behavior"] = "Works."  # too short: incomplete, Q0001 must be cited
    intake["steps"] = []  # a missing_steps D record
    store = built_store(tmp_path, intake)
    context = prepared_context(store)
    made = [e for e in context.catalogue.entries if e["id"][0] in "DQ"]
    assert {e["id"][0] for e in made} == {"D", "Q"}
    assert all(e["origin"] == "derived" for e in made)
    assert context.expected_behavior_status()["provenance"] == "original"
    answer = answer_for(context.catalogue)
    d_ids = [e["id"] for e in made if e["id"][0] == "D"]
    answer["unknowns"].append({"text": "Quality issues were found.", "source_ids": d_ids})
    gateway, _ = scripted_gateway(reply(answer))
    result = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert result.status is OutcomeStatus.COMPLETED, result
    wrapper = json.loads(members(store)[result.pointers["case_interpretation"]])
    assert wrapper["sources"]["Q0001"]["origin"] == "derived"
    assert all(wrapper["sources"][i]["origin"] == "derived" for i in d_ids)
    assert wrapper["expected_behavior_status"]["provenance"] == "original"
