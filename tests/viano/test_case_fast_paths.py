"""The fast paths of the case build give exactly what the plain rules give.

Each speed-up (the str.find fence reader, the one-pass literal
scan, the cheap pre-checks) is compared here, on generated input, with the rule written
the slow and obvious way. Canonical JSON is modelgate's, tested in
``tests/modelgate/test_fingerprint.py``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import case_rules_reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

from viano_bug_analysis.case import entities as ent
from viano_bug_analysis.case import heuristics as h
from viano_bug_analysis.case.textscan import LiteralScan

# -- fenced blocks -------------------------------------------------------------------------

FENCED = re.compile(h.FENCED_PATTERN, re.S)
FENCE_TEXT = st.lists(
    st.sampled_from(["```", "~~~", "````", "`", "~", " ", "\t", "\r", "\n", "a", "py", "x y"]),
    max_size=40,
).map("".join)


@settings(max_examples=600, deadline=None)
@given(FENCE_TEXT)
def test_fenced_blocks_equal_the_pattern(text: str) -> None:
    expected = [(m.start(), m.end(), m.start("body"), m.end("body")) for m in FENCED.finditer(text)]
    assert h.fenced_blocks(text) == expected


# -- literal scan --------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=6),
    st.text(max_size=40),
)
def test_literal_scan_equals_any_in(literals: list[str], text: str) -> None:
    scan = LiteralScan(literals)
    assert scan.any_in(text) == any(lit in text for lit in literals)
    for lit in literals:
        assert scan.any_in(text + lit)


def test_literal_scan_reads_special_characters_and_surrogates() -> None:
    scan = LiteralScan(["a.b", "(x|y)", "\\", "é", "\ud800", " \t\n"])
    assert not scan.any_in("axb x|y")
    assert scan.any_in("1 a.b 2") and scan.any_in("(x|y)") and scan.any_in("\\")
    assert scan.any_in("café") and scan.any_in("z\ud800z") and scan.any_in("- \t\n-")
    assert LiteralScan(["think"]).any_in("I think \ud800")  # not UTF-8: scanned in Python
    assert not LiteralScan(["think"]).any_in("no \ud800")


# -- heuristics pre-checks -----------------------------------------------------------------

WORD_LIST = (
    "I think",
    "maybe",
    "MAYBE",
    "ſuspect",
    "the cause",
    "because of",
    "should",
    "Expected",
    "supposed to",
    "İ",
    "é",
    "GET /api/x",
    "https://ex.com/a.js",
    "node 18.2.0",
    "react@17.0.2",
    "v1.2.3",
    "src/app.tsx",
    "x.scss",
    "a.c",
    "HTTP 500",
    "ECONNRESET",
    "TypeError",
    "٣.٤",
    "at foo (bar.js:1:2)",
    'File "x.py", line 3',
    "Caused by: x",
    "npm ERR! x",
    "#1 0xdeadbeef f",
    "ERROR worker timeout",
    "```",
    "~~~",
    "\n",
    "\r\n",
    ".",
    "!",
    " ",
    "word",
    "[unread X0001: log]",
    "```\nmaybe in code\n```",
    "...",
    "I expect it should work",
)
WORDS = st.sampled_from(WORD_LIST)
PROSE = st.lists(WORDS, max_size=12).map(" ".join)
EXTENSIONS = (
    "js jsx ts tsx mjs cjs json py rb go rs java kt c cc cpp h hpp cs css scss less html htm "
    "vue svelte yml yaml toml lock sh xml gradle php swift sql ini cfg conf log"
).split()


def test_entity_precheck_flags_each_kind_alone() -> None:
    words = [f"name.{ext}" for ext in EXTENSIONS] + [
        w for w in WORD_LIST if ent._extract_entities(w)
    ]
    for word in words:
        text = f"see {word} now"
        assert ent._extract_entities(text), text
        assert ent.may_hold_entities(text), text


ENTITY_BITS = st.sampled_from(
    [
        *("E", "EA", "EAB", "EABC", "Eabc", "0", "9", ".", "1.2", "a.", ".jsx", ".c", ":/"),
        *("://", "GET", "GET ", "HTTP 4", "HTTP 6", "ERR", "ERR_", "Erro", "Error", "x", " "),
        "\x00",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(PROSE, st.lists(ENTITY_BITS, max_size=12).map("".join)))
def test_one_pass_entity_precheck_equals_the_first_rule(text: str) -> None:
    """The Rust pass (digit classes, E[A-Z]{3}) answers as the literal scan plus the
    Python pattern did."""
    assert ent.may_hold_entities(text) == ref.may_hold_entities_reference(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(PROSE, max_size=150))
def test_grouped_entity_precheck_equals_each_alone(texts: list[str]) -> None:
    assert ent.may_hold_entities_each(texts) == [ent.may_hold_entities(t) for t in texts]


@settings(max_examples=400, deadline=None)
@given(PROSE)
def test_entity_precheck_never_hides_an_entity(text: str) -> None:
    found = ent._extract_entities(text)
    if found:
        assert ent.may_hold_entities(text)
    assert ent.extract_entities(text) == found


@settings(max_examples=400, deadline=None)
@given(PROSE)
def test_sentence_checks_equal_the_patterns(text: str) -> None:
    for sentence, _, _ in h.sentences(text):
        assert h.is_hypothesis(sentence) == reference_is_hypothesis(sentence)
        assert h.is_expectation(sentence) == bool(h._EXPECTATION.search(sentence))
    assert h.sentences(text, h.is_hypothesis) == [
        s for s in h.sentences(text) if h.is_hypothesis(s[0])
    ]
    all_sentences = h.sentences(text)
    assert h.hypothesis_sentences(text) == [
        s for s in all_sentences if reference_is_hypothesis(s[0])
    ]
    assert h.expectation_sentences(text) == [
        s for s in all_sentences if h._EXPECTATION.search(s[0])
    ]
    low = text.lower()
    assert h.may_hold_hypothesis(text) == any(x in low for x in FIRST_HYPOTHESIS_HINTS)
    for hints, keep in (
        (h._HYPOTHESIS_HINTS, h.is_hypothesis),
        (h._EXPECTATION_HINTS, h.is_expectation),
    ):
        # searching the hints only in the dot-separated pieces that hold one: same result
        assert h.hinted_sentences(text, hints, keep, LiteralScan(hints)) == h.hinted_sentences(
            text, hints, keep
        )


def reference_is_hypothesis(sentence: str) -> bool:
    """The pattern on the whole sentence, plus at least three words (runs of letters or
    digits) outside the first hint it matches."""
    match = h._HYPOTHESIS.search(sentence)
    if match is None:
        return False
    outside = sentence[: match.start()] + " " + sentence[match.end() :]
    return len(re.findall(r"[^\W_]+", outside)) >= 3


FIRST_HYPOTHESIS_HINTS = (
    *("think", "believe", "suspect", "guess", "theory", "maybe", "perhaps", "probably"),
    *("possibly", "might be", "may be", "could be", "seem", "looks like", "likely"),
    *("caused by", "cause", "because of"),
)


def reference_unread_blocks(text: str, min_bytes: int, min_lines: int) -> list[h.Block]:
    """find_unread_blocks as first written: the fence pattern, the trace hints first."""
    blocks: list[h.Block] = []
    covered: list[tuple[int, int]] = []
    for m in FENCED.finditer(text) if ("```" in text or "~~~" in text) else ():
        body = m.group("body")
        covered.append((m.start(), m.end()))
        n_lines = body.count("\n") + 1
        long_enough = len(body.encode("utf-8")) >= min_bytes or n_lines >= min_lines
        labelled = long_enough or n_lines >= h.TRACE_MIN_LINES
        kind = ref.classify_reference(body) if labelled else "code"
        if long_enough or (kind == "stack_trace" and n_lines >= h.TRACE_MIN_LINES):
            blocks.append(h.Block(m.start(), m.end(), kind, n_lines))
    if "\n" not in text or not (
        any(hint in text for hint in h._TRACE_HINTS) or h._TRACE_FILE_HINT.search(text)
    ):
        return sorted(blocks, key=lambda b: b.start)
    pos = 0
    segments = []
    for a, b in covered:
        segments.append((pos, a))
        pos = b
    segments.append((pos, len(text)))
    for seg_start, seg_end in segments:
        ref.trace_runs_reference(text, seg_start, seg_end, min_bytes, min_lines, blocks)
    return sorted(blocks, key=lambda b: b.start)


LINES = st.sampled_from(
    [
        "```\n",
        "~~~\n",
        "```",
        "  at foo (bar.js:1:2)\n",
        "at\u00a0x\n",
        'File "x.py", line 3, in f\n',
        "TypeError: bad\n",
        "ERROR worker 12 timeout\n",
        "plain words here\n",
        "\n",
        "\r\n",
        "x" * 50 + "\n",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(LINES, max_size=40).map("".join), st.sampled_from([(40, 3), (1024, 25), (8, 2)]))
def test_unread_blocks_equal_the_first_rule(text: str, limits: tuple[int, int]) -> None:
    assert h.find_unread_blocks(text, *limits) == reference_unread_blocks(text, *limits)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=260).map("".join))
def test_block_label_with_early_stops_equals_the_first_rule(text: str) -> None:
    assert h._classify(text) == ref.classify_reference(text)


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="`~ab\n", max_size=30),
    st.sampled_from(["```", "~~~", "\n"]),
    st.integers(0, 31),
)
def test_find_by_first_character_equals_str_find(text: str, needle: str, start: int) -> None:
    assert h._find(text, needle, start) == text.find(needle, start)


# -- large members deflated in pieces --------------------------------------------------------


def test_large_member_is_deflated_in_pieces_readably_and_reproducibly(tmp_path: Any) -> None:
    import random
    import zipfile

    from viano_bug_analysis.packages import Manifest, PackageReader, PackageWriter
    from viano_bug_analysis.packages.writer import DEFLATE_PIECE_BYTES

    rng = random.Random(4)
    words = [b"alpha ", b"beta ", b"\xc3\xa9t\xc3\xa9 ", b"{}\n"]
    big = b"".join(rng.choice(words) for _ in range(3 * DEFLATE_PIECE_BYTES // 4 + 99))
    outputs = []
    for name in ("a.zip", "b.zip"):
        writer = PackageWriter.new(Manifest(package_id="p", case_id="c"))
        writer.add_bytes("original/big.txt", big)
        writer.add_bytes("original/small.txt", b"small")
        writer.add_bytes("original/stored.bin", big, compress=False)
        with open(tmp_path / name, "wb") as f:
            writer.write(f)
        outputs.append((tmp_path / name).read_bytes())
    assert outputs[0] == outputs[1]  # the same bytes, whatever the threads did
    with zipfile.ZipFile(tmp_path / "a.zip") as z:
        assert z.testzip() is None
        info = z.getinfo("original/big.txt")
        assert info.compress_type == zipfile.ZIP_DEFLATED
        assert info.compress_size < info.file_size
        assert z.read("original/big.txt") == big
        assert z.getinfo("original/stored.bin").compress_type == zipfile.ZIP_STORED
    with PackageReader(tmp_path / "a.zip") as reader:
        assert reader.read("original/big.txt") == big
        assert reader.read("original/small.txt") == b"small"


# -- native lists kept as parsed values (RawItems) ----------------------------------------

RAW_TEXT = st.lists(
    st.sampled_from(["I think the cache is stale. ", "It should work.", "\n", "```\n", " ", "é"])
    | st.just("x" * 40),
    max_size=6,
).map("".join)
PLAIN_OBJECT = st.fixed_dictionaries(
    {"text": RAW_TEXT},
    optional={
        "author": st.sampled_from(["ann", None]),
        "timestamp": st.sampled_from(["2024-05-02", None]),
        "origin": st.just("original"),
    },
)
OTHER_OBJECT = st.fixed_dictionaries(
    {"text": RAW_TEXT},
    optional={
        "origin": st.just("external_research"),
        "source_uri": st.just("https://example.com"),
    },
)
RAW_VALUE = st.one_of(RAW_TEXT, PLAIN_OBJECT, RAW_TEXT, PLAIN_OBJECT, RAW_TEXT, OTHER_OBJECT)


def _records_of(doc: Any, limits: Any) -> tuple[str, Any]:
    from viano_bug_analysis.case.records import RecordSet
    from viano_bug_analysis.errors import VianoError

    records = RecordSet(limits)
    try:
        records.add_document(doc)
        records.finish()
    except VianoError as exc:
        return "error", (type(exc).__name__, exc.code, str(exc))
    return "ok", records.records


@settings(max_examples=200, deadline=None)
@given(
    st.lists(RAW_VALUE, max_size=8),
    st.lists(RAW_VALUE, max_size=8),
    st.sampled_from([None, "rep"]),
    st.sampled_from([None, "2024-01-01"]),
    st.sampled_from([(1 << 20, 200_000), (60, 200_000), (1 << 20, 7)]),
)
def test_raw_native_lists_give_the_records_of_their_items(
    observations: list[Any],
    comments: list[Any],
    reporter: str | None,
    created: str | None,
    limits: tuple[int, int],
) -> None:
    """Records made from RawItems equal those made from the Items the lists stand for,
    and RawItems.items() are the Items the parser makes of the same values."""
    from viano_bug_analysis.case.limits import CaseBuilderLimits
    from viano_bug_analysis.intake.model import RawItems
    from viano_bug_analysis.intake.native import _Ctx, parse_native

    intake: dict[str, Any] = {
        "intake_format": "viano-intake/1",
        "title": "Export",
        "observations": observations,
        "comments": comments,
    }
    if reporter:
        intake["reporter"] = reporter
    if created:
        intake["created_at"] = created
    data = json.dumps(intake).encode()
    lim = CaseBuilderLimits(
        max_record_text_bytes=limits[0], max_records=limits[1], unread_block_lines=3
    )
    fast = parse_native(data, "original/intake.json")
    slow = parse_native(data, "original/intake.json")

    def plain(values: list[Any]) -> bool:
        return bool(values) and all(
            isinstance(v, str) or ("source_uri" not in v and v.get("origin") != "external_research")
            for v in values
        )

    assert (fast.raw_observations() is not None) == plain(observations)
    assert (fast.raw_comments() is not None) == plain(comments)
    assert slow.observations is not None and slow.comments is not None  # now Items
    assert slow.raw_observations() is None and slow.raw_comments() is None
    assert _records_of(fast, lim) == _records_of(slow, lim)
    ctx = _Ctx("original/intake.json", reporter, created)
    for key, role in (("observations", "reporter"), ("comments", "commenter")):
        raw = ctx.raw_items(intake, key, role)
        if isinstance(raw, RawItems):
            assert raw.items() == ctx.items(intake, key, role)


@settings(max_examples=400, deadline=None)
@given(st.lists(LINES, max_size=60).map("".join), st.integers(1, 200), st.integers(1, 8))
def test_first_sample_lines_from_a_shorter_prefix_are_the_same(
    text: str, first_try: int, sample_lines: int
) -> None:
    """Shrunk sizes (first try, sample lines and characters) so that both paths run."""
    import pytest

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(h, "_FIRST_TRY_CHARS", first_try)
        mp.setattr(h, "_CLASSIFY_SAMPLE_LINES", sample_lines)
        mp.setattr(h, "_SAMPLE_CHARS", 40 * sample_lines)
        got = h._first_lines(text)
    lines = [ln for ln in text[: 40 * sample_lines].splitlines() if ln.strip()]
    assert got == lines[:sample_lines]


# -- sentences: non-ASCII text, hint offsets, the fence check first -------------------------

SENTENCE_BITS = st.sampled_from(
    [
        *("I think", "i THINK", "ı think", "I thınk", "İ think", "my guess", "MY GUESS"),
        *("the cause", "root cause", "because of", "caused by", "ROOT CAUSE", "becauſe of"),
        *("seems like", "seem to be", "looks likely", "likely", "suſpect", "I ſuspect"),
        *("may be due", "could be a", "might be", "maybe", "perhaps", "probably", "possibly"),
        *("should", "shouldn't", "expected", "I expect", "ſhould", "inſtead of", "KEEP"),
        *("word", "two words", "Σ", "ς", "é", "ß", "ẞ", "🤔", "_", "x1", "\ud800"),
        *(" ", ".", "!", "?", "\n", "\r\n", "```\n", "  at foo (a.js:1:2)", "TypeError"),
        *("-" * 70, "_" * 40, "🤔" * 30),  # long sentences with few words
        # dots, ! and ? inside a sentence, white space that ends one
        *("2.4.1", "core.js", "https://x.org/a?b=1", "e.g.", "...", ".x", "!x", "?.", "a.b."),
        *("\u00a0", "\x1c", "\t", "\u2003", ".\u00a0", "?\x1c", "!!", "\r"),
        *(">", "> ", "\n> ", "\n  > > ", " \t>", "\n\u00a0>"),  # quoted lines
    ]
)
SENTENCE_TEXT = st.one_of(
    st.lists(SENTENCE_BITS, max_size=30).map(" ".join),
    st.lists(SENTENCE_BITS, max_size=30).map("".join),
)


@settings(max_examples=600, deadline=None)
@given(st.one_of(SENTENCE_TEXT, PROSE))
def test_fast_sentences_equal_the_first_rules(text: str) -> None:
    everything = ref.sentences_reference(text)
    assert h.sentences(text) == everything
    for sentence, _, _ in everything:
        assert h.is_hypothesis(sentence) == ref.is_hypothesis_reference(sentence), sentence
    assert h.sentences(text, h.is_hypothesis) == ref.sentences_reference(
        text, ref.is_hypothesis_reference
    )
    assert h.hypothesis_sentences(text) == [
        s for s in everything if ref.is_hypothesis_reference(s[0])
    ]
    assert h.expectation_sentences(text) == [s for s in everything if h.is_expectation(s[0])]
    for hints, keep, keep_ref in (
        (h._HYPOTHESIS_HINTS, h.is_hypothesis, ref.is_hypothesis_reference),
        (h._EXPECTATION_HINTS, h.is_expectation, h.is_expectation),
    ):
        for scan in (None, LiteralScan(hints)):
            assert h.hinted_sentences(text, hints, keep, scan) == ref.hinted_sentences_reference(
                text, hints, keep_ref, scan
            )


@settings(max_examples=400, deadline=None)
@given(SENTENCE_TEXT)
def test_sentence_start_is_where_finditer_starts_the_sentence(text: str) -> None:
    """For every position inside a sentence match, ``sentence_start`` (after skipping the
    white space that ``finditer`` keeps at the start) finds the start of that match."""
    for m in h._SENTENCE.finditer(text):
        for i in range(m.start(), m.end()):
            if text[i] in ".!?":
                continue  # sentence_start is asked only where no sentence ends
            assert h._SENTENCE.match(text, h.sentence_start(text, i)) is not None
            assert h._SENTENCE.match(text, h.sentence_start(text, i)).span() == m.span()


def test_hint_offsets_cover_the_hypothesis_hints() -> None:
    assert set(h._HYPOTHESIS_HINT_OFFSETS) == set(h._HYPOTHESIS_HINTS)
    for phrase in ("The root cause is x y z", "so the cause is x y", "My theory: a b c d"):
        assert h.is_hypothesis(phrase) == ref.is_hypothesis_reference(phrase) is True
    for padding in ("", "-" * 70, "_" * 70, "\U0001f914" * 70):  # short and long sentences
        for words in range(5):
            for hint in ("I think", "maybe", "root cause"):
                sentence = " ".join([hint, padding, *["word"] * words])
                assert h.is_hypothesis(sentence) == ref.is_hypothesis_reference(sentence)
                assert h.is_hypothesis(sentence) == (words >= 3)


def test_folding_matches_what_re_ignorecase_matches_with_ascii_letters() -> None:
    """Every character that re's IGNORECASE matches with an ASCII letter folds to that
    letter at the same position (or makes ``folded`` give up), checked over all code
    points; no other character folds to an ASCII letter or to a sentence end."""
    letter = re.compile(r"(?i)[a-z' ]")
    for cp in range(0x80, 0x110000):
        c = chr(cp)
        low = h.folded("a" + c)
        if low is None:
            continue  # the plain way
        assert len(low) == 2 and low[0] == "a", hex(cp)
        if letter.fullmatch(c):
            assert low[1] in "abcdefghijklmnopqrstuvwxyz", hex(cp)
            assert re.fullmatch(f"(?i){low[1]}", c), hex(cp)
        else:
            assert low[1] not in "abcdefghijklmnopqrstuvwxyz' .!?\n", hex(cp)


# -- unread blocks: Rust necessary conditions of the trace and log line patterns ------------

WEIRD_LINES = st.sampled_from(
    [
        *("  at foo (bar.js:1:2)", "\tat x", "at\u00a0x", "at\x1cx", "at\x0bx", "\x1f at y"),
        *('File "x.py", line 3, in f', "Traceback (most recent call last):", "npm ERR! x"),
        *("#12 0xdeadbeef f", "#1  0x1", "Caused by: x", "... 12 more", "... \u0663 more"),
        *("x.js:1", "a.b.py:12:3 z", "x.js:\u0663", "TypeError", "a.b.FooException: z"),
        *("ERROR worker", "Warning: x", "[info] y", "DEBUG", "fatal", "eRR! z", "ınfo", "İnfo"),
        *("ſome", "plain words", "", " ", "\u3000", "é", "K"),
    ]
)
BREAKS = st.sampled_from(["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1e", "\x85", "\u2028"])
WEIRD_TEXT = st.lists(st.tuples(WEIRD_LINES, BREAKS), max_size=40).map(
    lambda parts: "".join(a + b for a, b in parts)
)


def test_trace_whitespace_class_is_the_ascii_white_space_of_re() -> None:
    ascii_ws = {c for c in map(chr, range(128)) if re.fullmatch(r"\s", c)}
    assert ascii_ws == {c for c in map(chr, range(128)) if re.fullmatch(h._TRACE_WS, c)}
    ascii_breaks = {c for c in map(chr, range(128)) if len(f"a{c}b".splitlines()) == 2}
    assert ascii_breaks == set("\n\r\x0b\x0c\x1c\x1d\x1e")


@settings(max_examples=500, deadline=None)
@given(st.one_of(WEIRD_TEXT, st.lists(LINES, max_size=40).map("".join)))
def test_trace_and_log_prechecks_are_necessary(text: str) -> None:
    lines = text.splitlines()
    if text.isascii():
        hits = [ln for ln in lines if h._TRACE_LINE.match(ln)]
        for ln in hits:
            assert h._TRACE_MAY(ln), ln
        assert h._TRACE_MAY(text) or not hits
    for ln in lines:
        low = h.folded(ln)
        if low is not None and h._LOGISH.search(ln):
            assert h._LOGISH_SCAN.any_in(low), ln


@settings(max_examples=500, deadline=None)
@given(st.one_of(WEIRD_TEXT, st.lists(LINES, max_size=60).map("".join)), st.integers(0, 3))
def test_fast_trace_runs_and_labels_equal_the_first_rules(text: str, cut: int) -> None:
    for limits in ((40, 3), (8, 2), (1024, 25)):
        fast: list[h.Block] = []
        slow: list[h.Block] = []
        h._trace_runs(text, cut, len(text), *limits, fast)
        ref.trace_runs_reference(text, cut, len(text), *limits, slow)
        assert fast == slow
    assert h._classify(text) == ref.classify_reference(text)
