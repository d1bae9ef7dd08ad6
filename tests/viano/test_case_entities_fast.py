"""The entity rules tried only where they can match give exactly the plain ``finditer``.

``entities._extract_entities`` tries each entity pattern only at candidate starts found
from a literal; ``_extract_entities_reference`` runs each pattern over the whole text. They
are compared on generated text (the characters each rule turns on, Unicode digits,
spaces and letters, lone surrogates) and on every text of the real public bug reports,
and the candidate starts are checked to hold every start ``finditer`` reports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import case_rules_reference as ref
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from viano_bug_analysis.case import entities as ent
from viano_bug_analysis.case import heuristics as h
from viano_bug_analysis.case.textscan import may_search

BITS = (
    *("E", "EA", "EABC", "ECONNRESET", "ERR_X", "ERR_", "NS_ERROR_FOO", "HTTP 404", "HTTP 5"),
    *("Error", "Exception", "TypeError", "NullPointerException", "FooErrorBar", "EABError"),
    *("GET", "GET ", "POST\t", "PATCH", "HEAD", "OPTIONS ", "DELETE", "/api/x", "/"),
    *("https://ex.com/a.js", "http://x", "://"),
    *("@", "@scope/pkg", "react@17.0.2", "a@v1.2", "@1.2.3", "x@y@1.2.3", "pkg@1.2-rc.1"),
    *("node", "Node", "node.js", "npm", "python", "go", "rustc", "Chrome", "Fo", "v"),
    *("Version", "Versions", "Since", "In", "Patch-2", "Step"),
    *("1", "12", "1.2", "1.2.3", "1.2.3.4.5", ".", "..", "-", "_", ":", "+", "v1.2.3"),
    *(".js", ".json", ".c", ".cc", ".lock", "a.b", "src/app.tsx", "1.2.js", "console.log"),
    *(" ", "  ", "\t", "\n", "\u00a0", "\u2003", "\u3000"),
    *("\u0663", "\u0664", "\uff11", "\u0967", "é", "İ", "ſ", "\u00b2", "\u2160", "\ud800"),
    *("a", "Z", "x", "word", "(", ")", '"', "'", ",", ";", "[", "]", "#", "=", "~", "\x00"),
)
ENTITY_TEXT = st.lists(st.sampled_from(BITS), max_size=24).map("".join)
CHAR_TEXT = st.text(
    alphabet=st.sampled_from("aAvEGTPRNSHO.@/-_:+ \t\n0129\u0663\uff11é/rorx"), max_size=40
)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(ENTITY_TEXT, CHAR_TEXT))
@example("Node 1.2 and Chrome/v120.0.1 in python  3.11.2 at foo.Bar-Baz 2.3")
@example("see x@y@1.2.3, @scope/pkg@v2.0.1-beta.1 and a/b/c/d@1.2")
@example("EABError NS_ERROR_FAILURE HTTP 404 xHTTP 500 ERR_X_Y EACCES")
@example("GET /a POST\t/b xGET /c PATCHEAD /d")
@example("x Abcdefghijklmnopqrstuvwxyz012345 1.2 Abcdefghijklmnopqrstuvwxyz0123456 1.2")
@example("Abcdefghijklmnopqrstuvwxyz012345/1.2 Abcdefghijklmnopqrstuvwxyz0123456/v1.2")
@example("1.2.3.4.5 v1.2.3 \u0663.\u0664.\u0665 :1.2.3 a.1.2.3 foo.js.map.json")
def test_fast_entities_equal_the_reference(text: str) -> None:
    assert ent._extract_entities(text) == ref._extract_entities_reference(text)
    assert ent.extract_entities(text) == ref.extract_entities_reference(text)


def _finditer_starts(pattern: re.Pattern[str], text: str) -> set[int]:
    """Every position at which ``pattern`` matches (not only those finditer reports)."""
    return {s for s in range(len(text) + 1) if pattern.match(text, s)}


@settings(max_examples=800, deadline=None)
@given(st.one_of(ENTITY_TEXT, CHAR_TEXT))
def test_candidate_starts_hold_every_start_where_a_pattern_matches(text: str) -> None:
    """The premise of ``_matches_at``: each start at which a pattern matches (anywhere,
    not only where finditer arrives) is a candidate."""
    back = ent._Back(text)
    dots = ent._digit_dots(text)
    assert dots == [m.start() + 1 for m in re.finditer(r"(?=\d\.\d)", text)]
    verbs = [m.start() for m in ent._VERB_AT.finditer(text)]
    hints = [m.start() for m in ent._FILE_HINT.finditer(text)]
    errors = [m.start() for m in ent._ERROR_AT.finditer(text)]
    cases: list[tuple[re.Pattern[str], list[int]]] = [
        (ent._HTTP_PATH, verbs),
        (ent._PKG_VERSION, ent._pkg_starts(text, back)),
        (ent._NAMED_VERSION, ent._named_starts(text, dots, back)),
        (ent._FILE, ent._Back(text).run_starts(ent._NAME_RUN, hints)),
        (ent._ERROR_CODE, ent._Back(text).run_starts(ent._LETTER_RUN, errors)),
    ]
    for pattern, starts in cases:
        assert _finditer_starts(pattern, text) <= set(starts), pattern.pattern
    assert _finditer_starts(ent._BARE_VERSION, text) <= set(ent._bare_starts(text, dots))
    for pattern in (
        ent._HTTP_PATH,
        ent._PKG_VERSION,
        ent._NAMED_VERSION,
        ent._FILE,
        ent._ERROR_CODE,
    ):
        starts = sorted(_finditer_starts(pattern, text))
        assert [m.span() for m in ent._matches_at(pattern, text, starts)] == [
            m.span() for m in pattern.finditer(text)
        ]


@settings(max_examples=500, deadline=None)
@given(st.one_of(ENTITY_TEXT, CHAR_TEXT, st.text(max_size=20)))
def test_rust_prechecks_answer_as_the_patterns(text: str) -> None:
    found = ent._ERROR_AT.search(text) is not None
    assert may_search(ent._ERROR_AT_RUST, text) >= found
    if "\ud800" not in text:
        assert may_search(ent._ERROR_AT_RUST, text) == found
    assert ent._HTTP_VERB_SCAN.any_in(text) == any(v in text for v in ent._HTTP_VERBS)
    if text.isascii():
        assert ent._DIGIT_DOT_ASCII(text) == bool(ent._DIGIT_DOT.search(text))
        assert ent._FILE_HINT_ASCII(text) == bool(ent._FILE_HINT.search(text))


def test_the_replacements_are_those_of_sub() -> None:
    text = "a https://x.y/z b http://q c"
    assert ent._replaced(text, list(ent._URL.finditer(text))) == ent._URL.sub(" ", text)
    assert ent._replaced(text, []) is text


# -- every text of the real public bug reports ---------------------------------------------


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _real_texts(folder: Path) -> list[str]:
    texts: dict[str, None] = {}
    for path in sorted((folder / "bug_reports").rglob("*.json*")):
        raw = path.read_text(encoding="utf-8")
        try:
            values = [json.loads(raw)]
        except ValueError:
            values = []
            for line in raw.splitlines():
                try:
                    values.append(json.loads(line))
                except ValueError:
                    continue
        for value in values:
            texts.update((s, None) for s in _strings(value) if s)
    return list(texts)


@pytest.fixture(scope="module")
def real_texts(real_data_dir: Path) -> list[str]:
    if not (real_data_dir / "bug_reports").is_dir():
        pytest.skip(f"no bug_reports folder in the real data folder {real_data_dir}")
    texts = _real_texts(real_data_dir)
    assert len(texts) > 1000
    return texts


def test_fast_entities_equal_the_reference_on_every_real_text(real_texts: list[str]) -> None:
    differ = [
        t[:80] for t in real_texts if ent._extract_entities(t) != ref._extract_entities_reference(t)
    ]
    assert not differ
    assert sum(1 for t in real_texts if ent._extract_entities(t)) > 500  # the rules do fire


def test_fast_sentences_equal_the_reference_on_every_real_text(real_texts: list[str]) -> None:
    differ = []
    for text in real_texts:
        everything = ref.sentences_reference(text)
        if (
            h.sentences(text) != everything
            or h.hypothesis_sentences(text)
            != [s for s in everything if ref.is_hypothesis_reference(s[0])]
            or h.expectation_sentences(text) != [s for s in everything if h.is_expectation(s[0])]
        ):
            differ.append(text[:80])
    assert not differ


def test_fast_unread_rules_equal_the_reference_on_every_real_text(real_texts: list[str]) -> None:
    differ = []
    for text in real_texts:
        runs: list[h.Block] = []
        runs_ref: list[h.Block] = []
        h._trace_runs(text, 0, len(text), 1024, 25, runs)
        ref.trace_runs_reference(text, 0, len(text), 1024, 25, runs_ref)
        if runs != runs_ref or any(
            h._classify(text[b:e]) != ref.classify_reference(text[b:e])
            for _, _, b, e in h.fenced_blocks(text)
        ):
            differ.append(text[:80])
    assert not differ


def test_real_texts_build_the_same_records_with_the_reference_rules(
    real_texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """All real texts in one intake (observations and comments): the same canonical
    records, byte for byte, with the fast rules and with the reference rules."""
    from viano_bug_analysis.case.limits import CaseBuilderLimits
    from viano_bug_analysis.case.records import RecordSet
    from viano_bug_analysis.intake.native import parse_native
    from viano_bug_analysis.packages.canonical import canonical_json

    long_texts = [t for t in real_texts if len(t) >= 40][:4000]
    data = json.dumps(
        {
            "intake_format": "viano-intake/1",
            "title": "Real texts",
            "observations": long_texts[:1500],
            "comments": [{"text": t, "author": "commenter"} for t in long_texts[1500:]],
        }
    ).encode()
    limits = CaseBuilderLimits(max_records=1_000_000, max_entities=1_000_000)

    def build() -> bytes:
        records = RecordSet(limits)
        records.add_document(parse_native(data, "original/intake.json"))
        records.finish()
        return canonical_json(records.records)

    fast = build()
    monkeypatch.setattr(ent, "_extract_entities", ref._extract_entities_reference)
    for name in ("hinted_sentences", "is_hypothesis", "sentences"):
        monkeypatch.setattr(h, name, getattr(ref, f"{name}_reference"))
    monkeypatch.setattr(h, "_trace_runs", ref.trace_runs_reference)
    monkeypatch.setattr(h, "_classify", ref.classify_reference)
    assert build() == fast
