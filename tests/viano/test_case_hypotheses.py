"""Tester-hypothesis detection: a hint needs some content to make a T record."""

from __future__ import annotations

import pytest

from viano_bug_analysis.case import heuristics as h


@pytest.mark.parametrize(
    "sentence",
    [
        "I think 🤔",
        "I think so.",
        "Probably.",
        "Maybe, maybe not.",
        "Looks like a bug.",
        "I think so too!",
    ],
)
def test_a_bare_hint_is_no_hypothesis(sentence: str) -> None:
    assert not h.is_hypothesis(sentence)
    assert h.hypothesis_sentences(f"The page is blank. {sentence}") == []


@pytest.mark.parametrize(
    "sentence",
    [
        "Maybe the worker queue is full.",
        "I think the export endpoint times out.",
        "The upload is probably the cause.",
        "It looks like the cache keeps a stale entry.",
        "Je pense que c'est peut-être lié au cache, maybe the proxy drops it.",
    ],
)
def test_a_hint_with_a_claim_is_a_hypothesis(sentence: str) -> None:
    assert h.is_hypothesis(sentence)
    found = [text for text, _, _ in h.hypothesis_sentences(f"The page is blank. {sentence}")]
    assert found == [sentence]
