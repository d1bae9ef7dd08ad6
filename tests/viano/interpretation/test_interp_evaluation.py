"""``viano eval``: case loading, and the counting over the real import/build/interpret path.

The model is a provider that reads the context it is sent (like a real one) and answers
per case; it goes through LLMGateway, the interpreter and its validation unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from interp_support import answer_for, config

from modelgate.providers import Provider
from modelgate.types import ModelRequest, ProviderResponse, Usage
from viano_bug_analysis.analysis.catalogue import Catalogue
from viano_bug_analysis.evaluation import (
    GAP,
    INVALID,
    NO_GAP,
    EvalCaseError,
    load_cases,
    render_text,
    run_evaluation,
    write_json,
)
from viano_bug_analysis.llm import GatewayConfig, LLMGateway

DEV_SET = Path(__file__).resolve().parents[3] / "eval" / "viano_dev"


class ContextReadingProvider(Provider):
    """Answers from the context in the request: valid, with an invented gap, or not JSON."""

    name = "scripted"
    model = "scripted-model"
    timeout_s = 5.0

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: ModelRequest) -> ProviderResponse:
        self.calls += 1
        user = request.messages[-1].content
        context = json.loads(user[user.index("{") :])
        catalogue = Catalogue(context["catalogue"])
        answer: Any = answer_for(catalogue)
        case_id = context["case_id"]
        if case_id == "slow-startup-no-expectation":  # no E record: an invented gap
            answer["behavior_gap"] = {
                "text": "It should start at once.",
                "source_ids": answer["observed_behavior"][0]["source_ids"],
            }
        text = "this is not JSON" if case_id == "injection-in-report" else json.dumps(answer)
        return ProviderResponse(
            text=text,
            model=self.model,
            usage=Usage(prompt_tokens=100, completion_tokens=40, source="provider"),
        )


def test_shipped_dev_set_loads() -> None:
    cases = load_cases(DEV_SET)
    assert [c.behavior_gap for c in cases] == [True, False, True]
    assert any("injection" in c.id for c in cases)


def test_bad_case_lines_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n", encoding="utf-8")
    (tmp_path / "cases.jsonl").write_text(
        '{"id": "a", "file": "a.md", "format": "markdown", "behavior_gap": "yes"}\n'
    )
    with pytest.raises(EvalCaseError, match=r"cases\.jsonl:1: behavior_gap"):
        load_cases(tmp_path)
    (tmp_path / "cases.jsonl").write_text(
        '{"id": "a", "file": "../a.md", "format": "markdown", "behavior_gap": true}\n'
    )
    with pytest.raises(EvalCaseError, match="is not a file in"):
        load_cases(tmp_path)


def test_figures_follow_what_the_model_answered(tmp_path: Path) -> None:
    provider = ContextReadingProvider()
    gateway_config: GatewayConfig = config(max_attempts=1)
    seen: list[str] = []
    report = run_evaluation(
        load_cases(DEV_SET),
        gateway_config,
        progress=lambda o: seen.append(o.id),
        gateway_factory=lambda c: LLMGateway(c, providers=[provider]),
    )
    assert provider.calls == 3
    by_id = {o.id: o for o in report.outcomes}
    accepted = by_id["export-twice"]
    assert (accepted.status, accepted.label, accepted.schema_valid) == ("COMPLETED", GAP, True)
    invented = by_id["slow-startup-no-expectation"]
    assert invented.status == "ERROR" and invented.label == GAP and invented.violations
    assert not invented.misleading  # validation kept the invented gap from being published
    broken = by_id["injection-in-report"]
    assert (broken.status, broken.label, broken.error_code) == (
        "ERROR",
        INVALID,
        "malformed_answer",
    )

    summary = report.summary()
    assert summary["outcomes"] == {"COMPLETED": 1, "ERROR": 2}
    assert summary["schema_valid_share"] == round(2 / 3, 4)
    assert summary["accepted_share"] == round(1 / 3, 4)
    assert summary["gap_label_accuracy"] == round(1 / 3, 4)
    assert summary["confusion"] == {
        GAP: {GAP: 1, NO_GAP: 0, INVALID: 1},
        NO_GAP: {GAP: 1, NO_GAP: 0, INVALID: 0},
    }
    assert summary["misleading_completed"] == 0
    assert summary["malformed_causes"] == {"other": 1}
    assert summary["tokens"] == {"prompt": 200, "completion": 80}  # schema-valid answers
    assert "misleading COMPLETED  0" in render_text(report)
    out = tmp_path / "viano-eval.json"
    write_json(report, out)
    assert json.loads(out.read_text(encoding="utf-8"))["summary"] == json.loads(json.dumps(summary))
    assert seen == ["export-twice", "slow-startup-no-expectation", "injection-in-report"]


def test_cases_can_name_a_record_of_a_real_data_file(tmp_path: Path) -> None:

    from viano_bug_analysis.evaluation import EvalCaseError, load_cases

    data = tmp_path / "data"
    (data / "bugs").mkdir(parents=True)
    lines = [{"id": 7, "summary": "a"}, {"id": 8, "summary": "b"}]
    (data / "bugs" / "all.json").write_text(
        "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8"
    )
    folder = tmp_path / "set"
    folder.mkdir()
    line = {"id": "bz-8", "data": "bugs/all.json", "record": 8, "format": "bugzilla"}
    (folder / "cases.jsonl").write_text(
        json.dumps({**line, "behavior_gap": False}) + "\n", encoding="utf-8"
    )
    (case,) = load_cases(folder, data)
    written = case.report(tmp_path)
    assert json.loads(written.read_text(encoding="utf-8")) == lines[1]
    (folder / "cases.jsonl").write_text(
        json.dumps({**line, "record": 9, "behavior_gap": False}) + "\n", encoding="utf-8"
    )
    (missing,) = load_cases(folder, data)
    with pytest.raises(EvalCaseError, match="record 9"):
        missing.report(tmp_path)
    (folder / "cases.jsonl").write_text(
        json.dumps({**line, "data": "../set/cases.jsonl", "behavior_gap": False}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(EvalCaseError, match="is not a file in"):
        load_cases(folder, data)


@pytest.mark.parametrize("name", ["viano_real", "viano_long"])
def test_the_real_sets_name_records_and_hold_no_report_text(name: str) -> None:
    folder = Path(__file__).resolve().parents[3] / "eval" / name
    rows = [
        json.loads(x) for x in (folder / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(rows) >= 14
    assert all(set(r) == {"id", "data", "record", "format", "behavior_gap"} for r in rows)
    assert sorted(p.name for p in folder.iterdir()) == ["cases.jsonl"]


def test_the_long_set_is_held_out_from_the_real_set() -> None:
    root = Path(__file__).resolve().parents[3] / "eval"

    def records(name: str) -> set[tuple[str, object]]:
        lines = (root / name / "cases.jsonl").read_text(encoding="utf-8").splitlines()
        return {(json.loads(x)["data"], json.loads(x)["record"]) for x in lines}

    assert not records("viano_real") & records("viano_long")


def test_report_length_and_bands(tmp_path: Path) -> None:
    from viano_bug_analysis.evaluation import length_band, report_chars

    bug = tmp_path / "bug.json"
    bug.write_text(
        json.dumps(
            {
                "id": 1,
                "summary": "a" * 10,
                "creator": "x" * 500,
                "comments": [{"text": "b" * 1990, "creator": "y" * 99}],
            }
        ),
        encoding="utf-8",
    )
    assert report_chars(bug, "bugzilla") == 2000  # title and comments, not metadata
    md = tmp_path / "r.md"
    md.write_text("c" * 6001, encoding="utf-8")
    assert report_chars(md, "markdown") == 6001
    assert [length_band(n) for n in (0, 1999, 2000, 5999, 6000)] == [
        "<2,000",
        "<2,000",
        "2,000-6,000",
        "2,000-6,000",
        ">6,000",
    ]


def test_a_report_that_cannot_fit_the_window_is_refused_and_the_run_goes_on() -> None:
    """An InterpretationError before sending (the minimum does not fit the window) is the
    case's outcome REFUSED, counted as refused for size; nothing is sent."""
    provider = ContextReadingProvider()
    data = config(max_attempts=1).model_dump(mode="json")
    data["providers"][0]["context_window_tokens"] = 4096  # less than prompt and answer
    tight = GatewayConfig.from_mapping(data)
    report = run_evaluation(
        load_cases(DEV_SET),
        tight,
        gateway_factory=lambda c: LLMGateway(c, providers=[provider]),
    )
    assert provider.calls == 0
    assert {o.status for o in report.outcomes} == {"REFUSED"}
    assert {o.error_code for o in report.outcomes} == {"interpretation.limit.context_window"}
    summary = report.summary()
    assert summary["refused_for_size"] == 3
    assert summary["by_length"]["<2,000"]["cases"] == 3
    assert "refused for size      3" in render_text(report)


def test_why_an_answer_was_not_json_is_read_from_its_round() -> None:
    from viano_bug_analysis.evaluation import malformed_cause

    assert malformed_cause('{"a": "line\nbreak"}', 300, 2048) == "raw_control_character"
    assert malformed_cause('{"a": "cut he', 2048, 2048) == "cut_at_token_limit"
    assert malformed_cause("this is not JSON", 40, 2048) == "other"
