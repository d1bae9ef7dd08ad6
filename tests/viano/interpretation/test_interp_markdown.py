"""Escaped, deterministic Markdown summaries, and the output/Markdown size limits."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from interp_catalogue import VALID_ANSWER
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

from viano_bug_analysis.analysis import CaseInterpreter, InterpretationLimits, OutcomeStatus
from viano_bug_analysis.analysis.markdown import escape, render_markdown

HOSTILE = "# Title\n- item <script>alert(1)</script> [x](http://evil) `code` *b* _i_ | a |"


def _wrapper(text: str) -> dict[str, Any]:
    answer = copy.deepcopy(VALID_ANSWER)
    answer["interpretation_summary"]["text"] = text
    answer["observed_behavior"][0]["text"] = text
    return {"case_id": "c", "package_id": "p", "interpretation": answer, "sources": {}}


def test_every_markdown_control_is_escaped() -> None:
    out = escape(HOSTILE)
    assert "\n" not in out and "<script>" not in out and "&lt;script&gt;" in out
    for raw in ("[x](", "`code`", "*b*", "_i_", "| a |"):
        assert raw not in out
    assert out.startswith("\\# Title \\- item")
    assert escape("a\\b") == "a\\\\b"


def test_rendering_is_deterministic_and_adds_no_interpretation() -> None:
    wrapper = _wrapper(HOSTILE)
    one, two = render_markdown(wrapper), render_markdown(copy.deepcopy(wrapper))
    assert one == two
    lines = one.splitlines()
    assert not [line for line in lines if line.startswith("# ") and line != "# Case interpretation"]
    assert all("<" not in line for line in lines)
    headings = [line for line in lines if line.startswith("## ")]
    assert len(headings) == 13  # twelve sections and the cited sources


async def test_published_summary_is_the_escaped_rendering(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    answer = answer_for(prepared_context(store).catalogue, summary=HOSTILE)
    gateway, _ = scripted_gateway(reply(answer))
    result = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    names = members(store)
    markdown = names[result.pointers["case_interpretation_summary"]].decode("utf-8")
    assert "&lt;script&gt;" in markdown and "<script>" not in markdown
    assert "\\# Title \\- item" in markdown


async def test_markdown_over_its_limit_is_a_rejection(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    answer = answer_for(prepared_context(store).catalogue, summary="*" * 3000)
    gateway, _ = scripted_gateway(reply(answer))
    limits = InterpretationLimits(max_markdown_bytes=4000)
    result = await CaseInterpreter(store, gateway, limits=limits).interpret(CASE_ID, PACKAGE_ID)
    assert result.status is OutcomeStatus.ERROR
    assert [v["rule"] for v in result.violations] == ["markdown_too_large"]


async def test_accepted_output_over_its_limit_is_a_rejection(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    answer = answer_for(prepared_context(store).catalogue, summary="x" * 5000)
    gateway, _ = scripted_gateway(reply(answer))
    limits = InterpretationLimits(max_output_bytes=4000)
    result = await CaseInterpreter(store, gateway, limits=limits).interpret(CASE_ID, PACKAGE_ID)
    assert result.status is OutcomeStatus.ERROR
    assert "output_too_large" in [v["rule"] for v in result.violations]
    assert "case_interpretation" not in store.current(CASE_ID, PACKAGE_ID).manifest.pointers


async def test_a_raised_limit_publishes_the_confirmed_round_without_a_new_call(
    tmp_path: Path,
) -> None:
    """Rejected only for an operational limit; the same attempt under a raised limit
    re-validates the persisted round and publishes it. The provider is asked once, and
    the rejection report stays."""
    store = built_store(tmp_path)
    answer = answer_for(prepared_context(store).catalogue, summary="x" * 5000)
    gateway, provider = scripted_gateway(reply(answer))
    small = InterpretationLimits(max_output_bytes=4000, max_markdown_bytes=4000)
    first = await CaseInterpreter(store, gateway, limits=small).interpret(CASE_ID, PACKAGE_ID)
    assert first.status is OutcomeStatus.ERROR and first.rejection_ref
    same = await CaseInterpreter(store, gateway, limits=small).interpret(CASE_ID, PACKAGE_ID)
    assert same.status is OutcomeStatus.ERROR and same.rejection_ref == first.rejection_ref
    done = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert done.status is OutcomeStatus.COMPLETED, done
    assert done.round_ref == first.round_ref and done.attempt_hash == first.attempt_hash
    assert len(provider.requests) == 1
    names = members(store)
    assert first.rejection_ref in names
    assert names[done.pointers["case_interpretation"]].count(b"x" * 5000) == 1
    reused = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert reused.status is OutcomeStatus.COMPLETED and reused.reused


async def test_a_reference_rejection_is_final_for_its_attempt(tmp_path: Path) -> None:
    """A rejection for a broken rule (not a limit) is returned as is: raising limits
    does not publish it."""
    store = built_store(tmp_path)
    answer = answer_for(prepared_context(store).catalogue, summary="x" * 5000)
    answer["interpretation_summary"]["source_ids"] = ["O9999"]
    gateway, provider = scripted_gateway(reply(answer))
    small = InterpretationLimits(max_output_bytes=4000)
    first = await CaseInterpreter(store, gateway, limits=small).interpret(CASE_ID, PACKAGE_ID)
    assert first.status is OutcomeStatus.ERROR
    again = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert again.status is OutcomeStatus.ERROR and again.rejection_ref == first.rejection_ref
    assert "case_interpretation" not in store.current(CASE_ID, PACKAGE_ID).manifest.pointers
    assert len(provider.requests) == 1
