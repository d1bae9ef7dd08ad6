"""The context fitted to the model's window (analysis/budget.py): it fits, it keeps every
record id (a left-out entry as an unread reference with its pointer), it is
deterministic, and a case whose minimum cannot fit is refused before anything is sent."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from interp_support import BASIC_INTAKE, CASE_ID, PACKAGE_ID, built_store, config, members
from shortening_reference import built_case, whole_context

from modelgate.providers import ScriptedProvider
from viano_bug_analysis.analysis import CaseInterpreter, InterpretationError
from viano_bug_analysis.analysis.budget import (
    CONTEXT_WINDOW_CODE,
    MIN_TEXT_CHARS,
    ContextBudget,
    fit_context,
)
from viano_bug_analysis.analysis.catalogue import Catalogue
from viano_bug_analysis.analysis.limits import InterpretationLimits
from viano_bug_analysis.analysis.prompt_builder import PromptBuilder
from viano_bug_analysis.case import CaseBuilderLimits
from viano_bug_analysis.llm import GatewayConfig, LLMGateway
from viano_bug_analysis.packages import canonical_json

_PROV = {"origin": "original", "member": "original/intake.json", "json_pointer": "/x"}
_WORDS = st.sampled_from(["log line ", "é", "漢字 ", '"q" ', "\\", "\n", "word ", "0123 "])
_TEXT = st.builds(
    lambda parts, n: "".join(parts) * n, st.lists(_WORDS, max_size=6), st.integers(0, 300)
)


@st.composite
def _documents(draw: st.DrawFn) -> dict[str, Any]:
    records: list[dict[str, Any]] = [
        {"id": "B0001", "kind": "title", "role": "title", "text": draw(_TEXT), "provenance": _PROV}
    ]
    kinds = draw(st.lists(st.sampled_from("OCCCTNDE"), max_size=14))
    for n, letter in enumerate(kinds, 1):
        record: dict[str, Any] = {
            "id": f"{letter}{n:04d}",
            "kind": letter.lower(),
            "text": draw(_TEXT),
            "provenance": {**_PROV, "author": f"a{n}", "timestamp": f"2024-01-{n:02d}"},
        }
        if letter == "E":
            record["explicit"] = draw(st.booleans())
        if letter == "T" and len(records) > 1:
            record["derived_from"] = records[-1]["id"]
        records.append(record)
    records.append(
        {"id": "Q0001", "kind": "q", "value": "incomplete", "text": "q", "provenance": _PROV}
    )
    return {
        "case_format": "viano-canonical-case/1",
        "case_id": "c",
        "package_id": "p",
        "analysis_revision": 1,
        "raw_input_fingerprint": "0" * 64,
        "records": records,
    }


def _minimum_size(context: dict[str, Any]) -> int:
    """Serialised size with every text cut to MIN_TEXT_CHARS and every optional entry
    left out: what the budget must at least allow."""
    from viano_bug_analysis.analysis.budget import _leave_out_order, left_out
    from viano_bug_analysis.analysis.shortening import shorten_entry

    entries = [shorten_entry(e, MIN_TEXT_CHARS) for e in context["catalogue"]]
    for i in _leave_out_order(entries):
        entries[i] = left_out(dict(entries[i], data=context["catalogue"][i]["data"]))
    return len(canonical_json(dict(context, catalogue=entries)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=_documents(), data=st.data())
def test_fitted_context_fits_keeps_every_id_and_is_deterministic(
    document: dict[str, Any], data: Any
) -> None:
    case = built_case(canonical_json(document), document)
    context = whole_context(case)
    body = canonical_json(context)
    limit = data.draw(st.integers(len(body) // 4, len(body) + 10), label="limit")
    try:
        fitted, fitted_body = fit_context(copy.deepcopy(context), body, limit)
    except InterpretationError as exc:
        assert exc.code == CONTEXT_WINDOW_CODE
        assert _minimum_size(context) > limit  # refused only when the minimum cannot fit
        return
    assert len(fitted_body) <= limit
    assert fitted_body == canonical_json(fitted)
    before = [e["id"] for e in context["catalogue"]]
    after = [e["id"] for e in fitted["catalogue"]]
    assert after == before  # every record id, in case order
    for old, new in zip(context["catalogue"], fitted["catalogue"], strict=True):
        assert new["pointer"] == old["pointer"]
        if "left_out" in new:
            assert new["unread"] is True and new["inline"] is False and "data" not in new
            assert new["id"][:1] != "E" and new["id"] != "Q0001"
            assert Catalogue(fitted["catalogue"]).is_unread(new["id"])
    again = fit_context(copy.deepcopy(context), body, limit)
    assert again[1] == fitted_body  # deterministic
    if len(body) <= limit:
        assert fitted_body == body  # a context that fits is left whole


def _long_intake(comments: int, chars: int) -> dict[str, Any]:
    intake = copy.deepcopy(BASIC_INTAKE)
    intake["comments"] = [
        {
            "text": f"Comment {i}: " + "the export log shows the same line again. " * (chars // 42),
            "author": f"tester-{i}",
            "timestamp": f"2024-03-{i + 2:02d}T09:00:00Z",
        }
        for i in range(comments)
    ]
    return intake


def _window_config(window: int) -> GatewayConfig:
    data = config().model_dump(mode="json")
    data["providers"][0]["context_window_tokens"] = window
    data["providers"][0]["max_output_tokens"] = 2048
    return GatewayConfig.from_mapping(data)


def _prepared(store: Any, budget: ContextBudget | None) -> Any:
    from viano_bug_analysis.analysis.case_access import verify_built_case

    limits = InterpretationLimits()
    with store.current(CASE_ID, PACKAGE_ID).open() as reader:
        case = verify_built_case(reader, CASE_ID, PACKAGE_ID, limits, CaseBuilderLimits())
    return PromptBuilder(limits, budget).prepare(case)


def test_long_comments_are_cut_first_then_oldest_comments_left_out(tmp_path: Path) -> None:
    store = built_store(tmp_path, _long_intake(30, 3000))
    whole = _prepared(store, None)
    budget = ContextBudget(8192, 2048)
    fitted = _prepared(store, budget)
    request = PromptBuilder(InterpretationLimits(), budget).request(fitted, 2048)
    assert budget.fits(sum(len(m.content.encode("utf-8")) for m in request.messages))
    assert [e["id"] for e in fitted.catalogue.entries] == [e["id"] for e in whole.catalogue.entries]
    comments = [e for e in fitted.catalogue.entries if e["id"][:1] == "C"]
    left = [e for e in comments if "left_out" in e]
    kept = [e for e in comments if "left_out" not in e]
    assert left and kept
    # the oldest comments go first: every left-out comment precedes every kept one
    assert max(comments.index(e) for e in left) < min(comments.index(e) for e in kept)
    assert all(len(e["data"]["text"]) <= MIN_TEXT_CHARS + 40 for e in kept)
    title = next(e for e in fitted.catalogue.entries if e["id"][:1] == "B")
    assert "left_out" not in title
    assert all("left_out" not in e for e in fitted.catalogue.entries if e["id"][:1] == "E")


def test_a_report_that_fits_is_sent_whole(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    assert _prepared(store, ContextBudget(8192, 2048)).context_bytes == (
        _prepared(store, None).context_bytes
    )


async def test_a_minimum_over_the_window_is_refused_before_anything_is_sent(
    tmp_path: Path,
) -> None:
    store = built_store(tmp_path, _long_intake(3, 500))
    before = members(store)
    provider = ScriptedProvider([], name="scripted", model="scripted-model")
    gateway = LLMGateway(_window_config(2048 + 1100), providers=[provider])
    with pytest.raises(InterpretationError) as refused:
        await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    assert refused.value.code == CONTEXT_WINDOW_CODE
    assert provider.requests == []  # nothing sent
    assert members(store) == before  # nothing published: no round, not BLOCKED


async def test_the_budget_is_part_of_the_request_fingerprint(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    prints = []
    for window in (8192, 16384):
        fitted = _prepared(store, ContextBudget(window, 2048))
        request = PromptBuilder(InterpretationLimits()).request(fitted, 2048)
        prints.append(fitted.request_fingerprint(request, ContextBudget(window, 2048)))
    assert prints[0] != prints[1]
    assert json.dumps(ContextBudget(8192, 2048).to_json())
