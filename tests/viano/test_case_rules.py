"""What CaseBuilder's text rules mean, on generated texts (the rules themselves are in
``viano_bug_analysis.case.heuristics`` and ``.entities``; the real reports are in
test_viano_realdata.py)."""

from __future__ import annotations

import itertools
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from viano_bug_analysis.case import entities as ent
from viano_bug_analysis.case import heuristics as h

PIECES = (
    *("I think", "maybe", "MAYBE", "the cause", "because of", "should", "Expected"),
    *("supposed to", "İ", "é", "GET /api/x", "https://ex.com/a.js", "node 18.2.0"),
    *("react@17.0.2", "v1.2.3", "src/app.tsx", "HTTP 500", "ECONNRESET", "TypeError"),
    *("at foo (bar.js:1:2)", 'File "x.py", line 3', "Caused by: x", "ERROR worker timeout"),
    *("```", "~~~", "\n", "\r\n", ".", "!", "?", " ", "> ", "word", "the export stops"),
    *("[unread X0001: log]", "```\nmaybe in code\n```", "...", "I expect it should work"),
)
PROSE = st.lists(st.sampled_from(PIECES), max_size=14).map(" ".join)
LINES = st.lists(
    st.sampled_from(
        [
            *("```\n", "~~~\n", "```", "  at foo (bar.js:1:2)\n", 'File "x.py", line 3\n'),
            *("TypeError: bad\n", "ERROR worker 12 timeout\n", "plain words here\n"),
            *("\n", "\r\n", "x" * 50 + "\n"),
        ]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(PROSE)
@example("It looks like the cache.\n> I think the worker is stuck again.")
def test_sentences_are_stripped_pieces_of_the_text_outside_quotes(text: str) -> None:
    found = h.sentences(text)
    assert [start for _, start, _ in found] == sorted(start for _, start, _ in found)
    for sentence, start, end in found:
        assert text[start:end] == sentence == sentence.strip()
        assert len(sentence) >= 8
        line = text[text.rfind("\n", 0, start) + 1 : start]
        assert not line.lstrip(" \t").startswith(">")


@settings(max_examples=300, deadline=None)
@given(PROSE)
@example("I think 🤔. Probably. I think the worker queue is full.")
def test_hypotheses_and_expectations_are_the_sentences_their_test_keeps(text: str) -> None:
    all_sentences = h.sentences(text)
    assert h.hypothesis_sentences(text) == [s for s in all_sentences if h.is_hypothesis(s[0])]
    assert h.expectation_sentences(text) == [s for s in all_sentences if h.is_expectation(s[0])]


@settings(max_examples=300, deadline=None)
@given(PROSE)
def test_a_hypothesis_has_three_words_outside_its_hint(text: str) -> None:
    for sentence, _, _ in h.sentences(text):
        low = sentence.lower()  # where the hint pattern is matched
        if len(low) != len(sentence):
            continue  # "İ" lower-cases to two characters: no word positions to compare
        match = re.search(h._HYPOTHESIS, low)
        outside = "" if match is None else low[: match.start()] + " " + low[match.end() :]
        assert h.is_hypothesis(sentence) == (
            match is not None and len(re.findall(r"[^\W_]+", outside)) >= 3
        )


@settings(max_examples=300, deadline=None)
@given(LINES, st.sampled_from([(40, 3), (1024, 25), (8, 2)]))
def test_unread_blocks_are_ordered_disjoint_and_long(text: str, limits: tuple[int, int]) -> None:
    min_bytes, min_lines = limits
    blocks = h.find_unread_blocks(text, min_bytes, min_lines)
    for before, after in itertools.pairwise(blocks):
        assert before.end <= after.start
    fences = h.fenced_blocks(text)
    for block in blocks:
        assert 0 <= block.start < block.end <= len(text)
        if not any(block.start == start for start, _, _, _ in fences):  # a trace run
            assert block.kind == "stack_trace" and block.lines >= 3
            chunk = text[block.start : block.end]
            assert len(chunk.encode()) >= min_bytes or block.lines >= min(
                min_lines, h.TRACE_MIN_LINES
            )
            assert all(h._TRACE_LINE.match(ln) for ln in chunk.splitlines())


@settings(max_examples=300, deadline=None)
@given(LINES)
def test_a_fenced_block_holds_its_body(text: str) -> None:
    end = 0
    for start, stop, body_start, body_end in h.fenced_blocks(text):
        assert end <= start <= body_start <= body_end <= stop <= len(text)
        assert text[start:body_start].lstrip(" \t")[:3] in ("```", "~~~")
        end = stop


@settings(max_examples=300, deadline=None)
@given(PROSE)
def test_files_error_codes_and_urls_are_words_of_the_text(text: str) -> None:
    for kind, value in ent.extract_entities(text):
        if kind in ("file", "error_code"):
            assert value in text
        if kind == "endpoint" and "://" in value:
            assert value in text


def test_each_kind_of_entity() -> None:
    found = set(
        ent.extract_entities(
            "GET /api/export fails on https://ex.com/a. react@17.0.2 and Node 18.2 log "
            "TypeError in src/app.tsx, EACCES, 2.3.4; each EACH node.js"
        )
    )
    assert found == {
        ("endpoint", "GET /api/export"),
        ("endpoint", "https://ex.com/a"),
        ("component", "react"),
        ("version", "react@17.0.2"),
        ("version", "Node 18.2"),
        ("version", "2.3.4"),
        ("error_code", "TypeError"),
        ("error_code", "EACCES"),
        ("file", "src/app.tsx"),
    }
