"""Hand-written catalogues and answers for the pure validation tests."""

from __future__ import annotations

import copy
from typing import Any

from viano_bug_analysis.analysis.catalogue import Catalogue


def entry(
    source_id: str,
    *,
    origin: str = "original",
    inline: bool = True,
    unread: bool = False,
    data: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": source_id,
        "kind": source_id[0],
        "pointer": f"/test/{source_id}",
        "origin": origin,
        "inline": inline,
        "unread": unread,
        "author": "tester",
        "timestamp": "2024-01-02T03:04:05Z",
        "data": data or {"text": f"text of {source_id}"},
    }


def catalogue(*, completeness: str = "complete", with_expectation: bool = True) -> Catalogue:
    """A small catalogue: one of each kind, plus an unread fact and an external fact."""
    entries = [
        entry("O0001"),
        entry("O0002"),
        entry("C0001"),
        entry("T0001"),
        entry("F0001"),
        entry("F0002", inline=False, data={"value_ref": "original/log.txt"}),
        entry("F0003", origin="external_research"),
        entry("R0001"),
        entry("B0001"),
        entry("S0001"),
        entry("N0001"),
        entry("N0002"),
        entry("D0001"),
        entry("Q0001", data={"value": completeness, "origins": ["original"]}),
        entry("X0001", inline=False, unread=True, data={"member": "original/big.log"}),
    ]
    if with_expectation:
        entries.append(entry("E0001"))
        entries.append(entry("E0002", origin="external_research"))
    return Catalogue(entries)


def statement(text: str, *ids: str) -> dict[str, Any]:
    return {"text": text, "source_ids": list(ids)}


VALID_ANSWER: dict[str, Any] = {
    "observed_behavior": [statement("The fix option removes the space.", "O0001", "B0001")],
    "expected_behavior": [statement("The space should stay.", "E0001")],
    "tester_assumptions": [statement("The tester blames a rule interaction.", "T0001", "C0001")],
    "confirmed_technical_facts": [statement("Version 4.18.2 is used.", "F0001")],
    "behavior_gap": statement("Output differs from the intent.", "E0001", "O0001"),
    "first_known_divergence": statement("After the first fix pass.", "E0001", "C0001"),
    "failure_stage": statement("During automatic fixing.", "O0001"),
    "contradictions": [statement("Two observations disagree.", "O0001", "O0002")],
    "unknowns": [statement("Operating system is not given.", "D0001")],
    "relevant_entities": [{"entity_id": "N0001", "role": "the rule involved"}],
    "investigation_direction": [statement("Look at how fixes are chained.", "O0001", "S0001")],
    "interpretation_summary": statement("A fix pass changes meaning.", "O0001", "E0001"),
}


def answer(**changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(VALID_ANSWER)
    out.update(copy.deepcopy(changes))
    return out
