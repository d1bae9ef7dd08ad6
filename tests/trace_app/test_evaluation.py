"""``trace eval``: case parsing, and the counting over the real investigation path.

The model is modelgate's ScriptedProvider, going through the same service, gateway and
ledger as a live one; the figures are checked against what the script answered.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from modelgate.providers import ScriptedProvider
from trace_app.evaluation import (
    INVALID,
    EvalCase,
    EvalCaseError,
    load_cases,
    parse_case,
    render_text,
    run_evaluation,
    sample_cases,
    write_json,
)
from trace_app.investigation.model_settings import ModelSettings

DEV_SET = Path(__file__).resolve().parents[2] / "eval" / "trace_dev.jsonl"
HOSPITAL = "Lakeside Hospital Test"


def _case(case_id: str, label: str, referenced: str, text: str, named: list[str]) -> EvalCase:
    return parse_case(
        {
            "id": case_id,
            "text": text,
            "source": "Field Team Test",
            "named_sources": named,
            "label": label,
            "referenced_source": referenced,
            "person": "Asha Test",
        },
        where=case_id,
    )


def test_shipped_dev_set_loads_and_covers_every_label_and_injections() -> None:
    cases = load_cases(DEV_SET)
    assert len(cases) >= 12
    assert {c.label for c in cases} == {"DIRECT", "RELAY", "UNCLEAR"}
    assert sum(c.id.startswith("injection") for c in cases) >= 3
    for case in cases:  # a named source is on the menu only when it appears verbatim
        assert all(name in case.text for name in case.named_sources), case.id


def test_the_dev_set_holds_the_kinds_issue_25_names() -> None:
    ids = {c.id for c in load_cases(DEV_SET)}
    for kind in ("reproduced", "in-his-words", "quotes-witness", "retweet", "hope", "opinion"):
        assert any(kind in case_id for case_id in ids), kind


def test_a_sample_keeps_every_direct_case_and_draws_the_others_by_seed() -> None:
    cases = load_cases(DEV_SET)
    direct = [c for c in cases if c.label == "DIRECT"]
    first = sample_cases(cases, 5, seed=1)
    assert [c for c in first if c.label == "DIRECT"] == direct
    assert len(first) == len(direct) + 5
    assert first == sample_cases(cases, 5, seed=1)  # the same seed, the same draw
    assert {c.id for c in first} != {c.id for c in sample_cases(cases, 5, seed=2)}
    assert sample_cases(cases, 10_000, seed=1) == cases  # all of them, in order


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not json", "not JSON"),
        ('{"text": "x", "source": "A"}', "missing keys"),
        (
            '{"text": "x", "source": "A", "named_sources": [], "label": "MAYBE", '
            '"referenced_source": "NONE"}',
            "label must be",
        ),
        (
            '{"text": "x", "source": "A", "named_sources": [], "label": "RELAY", '
            '"referenced_source": "B"}',
            "referenced_source must be",
        ),
        (
            '{"text": "x", "source": "A", "named_sources": [], "label": "RELAY", '
            '"referenced_source": "NONE", "extra": 1}',
            "unknown keys",
        ),
    ],
)
def test_bad_case_lines_are_refused_with_their_line(
    tmp_path: Path, line: str, problem: str
) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text("# comment\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(EvalCaseError, match=problem) as caught:
        load_cases(path)
    assert "cases.jsonl:3" in str(caught.value)


async def test_figures_follow_what_the_model_answered(tmp_path: Path) -> None:
    cases = [
        _case("direct", "DIRECT", "NONE", "I registered Asha Test myself at noon.", []),
        _case(
            "relay-shown-as-direct",
            "RELAY",
            HOSPITAL,
            f"{HOSPITAL} says Asha Test was admitted. We did not see her.",
            [HOSPITAL],
        ),
        _case(
            "relay-compared",
            "RELAY",
            HOSPITAL,
            f"According to {HOSPITAL}, Asha Test is stable.",
            [HOSPITAL],
        ),
        _case("unclear-out-of-set", "UNCLEAR", "NONE", "Maybe Asha Test went north.", []),
    ]
    provider = ScriptedProvider(
        [
            {"attribution": "DIRECT", "referenced_source": "NONE"},
            {"attribution": "DIRECT", "referenced_source": "NONE"},
            {"attribution": "RELAY", "referenced_source": HOSPITAL},
            {"support": "SUPPORTS"},
            {"attribution": "RELAY", "referenced_source": "Invented Org"},
        ],
        model="scripted-model",
    )
    settings = ModelSettings.from_env(
        {"TRACE_MODEL": "scripted-model", "TRACE_MODEL_BASE_URL": "http://127.0.0.1:9/v1"}
    )
    seen: list[str] = []
    report = await run_evaluation(
        cases,
        settings,
        workdir=tmp_path / "work",
        provider_factory=lambda config: provider,
        progress=lambda outcome: seen.append(outcome.id),
    )
    assert seen == [c.id for c in cases]
    by_id = {o.id: o for o in report.outcomes}
    assert by_id["direct"].status == "COMPLETED"
    # the model called a relay first-hand; the cues in its text ("says", "We did not see
    # her") lower it to NEEDS_REVIEW, and the figures say so
    assert by_id["relay-shown-as-direct"].status == "NEEDS_REVIEW"
    assert by_id["relay-shown-as-direct"].lowered_by == ("relay", "hearsay")
    assert by_id["direct"].lowered_by == ()
    assert by_id["relay-compared"].status == "NEEDS_REVIEW"
    assert by_id["relay-compared"].requests_sent == 2
    assert by_id["relay-compared"].support == "SUPPORTS"
    assert by_id["unclear-out-of-set"].status == "FAILED"
    assert by_id["unclear-out-of-set"].label == INVALID

    summary = report.summary()
    assert summary["cases"] == 4
    assert summary["label_accuracy"] == 0.5
    assert summary["source_accuracy"] == 0.5
    assert summary["valid_answer_share"] == 0.75
    assert summary["misleading_completed"] == 0 and summary["misleading_ids"] == []
    assert summary["first_hand_recall"] == 1.0 and summary["first_hand_cases"] == 1
    assert summary["lowered_by_evidence"] == {
        "total": 1,
        "by_kind": {"hearsay": 1, "relay": 1},
    }
    # without the rule the same run would have shown the relay as first-hand
    assert summary["rule_off"]["misleading_completed"] == 1
    assert summary["rule_off"]["misleading_ids"] == ["relay-shown-as-direct"]
    assert summary["rule_off"]["statuses"] == {"COMPLETED": 2, "FAILED": 1, "NEEDS_REVIEW": 1}
    assert summary["model_calls"] == 5
    assert summary["ledger_requests"] == 5
    assert summary["confusion"]["RELAY"] == {"DIRECT": 1, "RELAY": 1, "UNCLEAR": 0, INVALID: 0}
    assert summary["confusion"]["UNCLEAR"][INVALID] == 1
    assert summary["statuses"] == {"COMPLETED": 1, "FAILED": 1, "NEEDS_REVIEW": 2}
    assert len(provider.requests) == 5

    text = render_text(report)
    assert "misleading COMPLETED  0" in text and "without the evidence rule" not in text
    compared = render_text(report, rule_off=True)
    assert "misleading COMPLETED  1 " in compared.split("without the evidence rule")[1]
    assert "relay-shown-as-direct" in compared
    out = tmp_path / "out" / "eval.json"
    write_json(report, out)
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["summary"] == json.loads(json.dumps(summary))
    assert [c["id"] for c in written["cases"]] == seen
    assert not list(out.parent.glob(".eval.json.*"))  # no temp file left behind
