"""The durable lifecycle: three generations, pointers, immutable output, reuse."""

from __future__ import annotations

import json
from pathlib import Path

from interp_support import (
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


async def test_accepted_interpretation_is_published_in_three_generations(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    before = members(store)
    built_generation = store.current(CASE_ID, PACKAGE_ID).generation
    catalogue = prepared_context(store).catalogue
    gateway, provider = scripted_gateway(reply(answer_for(catalogue)))

    result = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)

    assert result.status is OutcomeStatus.COMPLETED, result
    assert result.package_generation == built_generation + 3
    assert len(provider.requests) == 1
    after = members(store)
    for name, data in before.items():
        if name != "manifest.json":
            assert after[name] == data  # old members byte-identical
    base = "analysis/interpretations/0001/"
    manifest = json.loads(after["manifest.json"])
    assert manifest["phase"] == "INTERPRETING_CASE"
    assert manifest["pointers"]["interpretation_context"] == base + "context.json"
    assert manifest["pointers"]["case_interpretation"] == base + "case_interpretation.json"
    assert manifest["pointers"]["case_interpretation_summary"] == base + "case_interpretation.md"
    names = [c["name"] for c in manifest["checkpoints"]]
    assert names[-2:] == ["case-interpreting", "case-interpreted"]
    wrapper = json.loads(after[base + "case_interpretation.json"])
    assert wrapper["case_id"] == CASE_ID and wrapper["analysis_revision"] == 1
    assert wrapper["llm_outcome_ref"] == result.round_ref
    assert wrapper["interpretation"] == answer_for(catalogue)
    assert after[base + "case_interpretation.md"].startswith(b"# Case interpretation")
