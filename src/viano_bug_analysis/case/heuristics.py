"""Text heuristics of CaseBuilder: unread blocks, hypotheses, expectations (entities are
in ``entities.py``).

These are deliberately simple, documented pattern rules (docs/intake-format.md lists them). They
classify supplied text; they never decide anything about a cause. Several are written for
speed; the same rules written plainly (as first written) are kept in
``tests/viano/case_rules_reference.py``, and the tests compare the two.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

from viano_bug_analysis.case.textscan import LiteralScan, rust_search

# -- unread blocks (long logs, stack traces, long code) ---------------------------------

# A fenced block is what this pattern finds (``finditer``), read by ``fenced_blocks`` below
# with ``str.find`` because the lazy body costs ~50 ns per character in ``re``:
FENCED_PATTERN = r"(?m)^[ \t]*(```|~~~)[^\n]*\n(?P<body>.*?)(?:^[ \t]*\1[ \t\r]*$|\Z)"
_FENCE_MARKS = ("```", "~~~")
_TRACE_LINE = re.compile(
    r"^\s*(?:at\s+\S.*|File \".*\", line \d+.*|Traceback \(most recent call last\):?"
    r"|npm ERR!.*|#\d+\s+0x[0-9a-fA-F]+.*|\S+\.(?:js|ts|py|java|rs|go|c|cpp):\d+(?::\d+)?.*"
    r"|(?:\w+\.)*\w*(?:Error|Exception)(?::.*)?|Caused by:.*|\.\.\. \d+ more)\s*$"
)
_TRACE_HINTS = (
    "at ",
    "at\t",
    'File "',
    "Traceback",
    "npm ERR",
    "0x",
    "Caused by",
    "... ",
    "Error",
    "Exception",
)
_TRACE_FILE_HINT = re.compile(r"\.(?:js|ts|py|java|rs|go|c|cpp):\d")
_LOGISH = re.compile(r"(?i)\b(?:error|warn(?:ing)?|err!|exception|fatal|debug|info)\b")


TRACE_MIN_LINES = 10  # a stack trace this long is kept unread even below the byte threshold


@dataclass(frozen=True)
class Block:
    start: int
    end: int
    kind: str  # stack_trace | log | code
    lines: int


_CLASSIFY_SAMPLE_LINES = 200


def _classify(text: str) -> str:
    """Label a block by its first lines (a label only; the block stays unread):
    the plain rule (``classify_reference`` in the tests), each count stopped as soon as
    its outcome is known, and asked first of all the sample lines at once, then line by
    line, with necessary conditions run by the Rust engine (``_TRACE_MAY`` on ASCII
    lines; the hints of ``_LOGISH`` in the :func:`folded` lines)."""
    lines = _first_lines(text)
    n = len(lines)
    if not n:
        return "code"
    joined = "\n".join(lines)
    ascii_lines = joined.isascii()
    need = max(3, -(-n // 3))  # trace >= 3 and trace * 3 >= n
    if n >= 3 and (not ascii_lines or _TRACE_MAY(joined)):
        may = _TRACE_MAY if ascii_lines else None
        trace = 0
        left = n
        for ln in lines:
            left -= 1
            if (may is None or may(ln)) and _TRACE_LINE.match(ln):
                trace += 1
                if trace >= need:
                    return "stack_trace"
            elif trace + left < need:
                break
    low = folded(joined)
    if low is None:
        low_lines = None
    elif not _LOGISH_SCAN.any_in(low):
        return "code"  # no line holds a hint
    else:
        low_lines = low.split("\n")  # the folded lines (no line holds a line break)
    need = -(-n // 4)  # logish * 4 >= n
    logish = 0
    left = n
    for k, ln in enumerate(lines):
        left -= 1
        if (low_lines is None or _LOGISH_SCAN.any_in(low_lines[k])) and _LOGISH.search(ln):
            logish += 1
            if logish >= need:
                return "log"
        elif logish + left < need:
            break
    return "code"


# Necessary conditions of _TRACE_LINE on ASCII text, one line or many (a line begins at
# the start, after "\n", or after another ASCII line break of str.splitlines), where the
# ASCII white space of re's \s is [\t\n\x0b\x0c\r\x1c-\x1f ] and \d is [0-9]:
_TRACE_WS = r"[\t\n\x0B\x0C\r\x1C-\x1F ]"
_TRACE_MAY = rust_search(
    rf"(?m)(?:^|[\r\x0B\x0C\x1C-\x1E]){_TRACE_WS}*(?:at{_TRACE_WS}|File \"|Traceback \(|npm ERR!"
    r"|#[0-9]|Caused by:|\.\.\. [0-9])|Error|Exception|\.(?:js|ts|py|java|rs|go|c|cpp):[0-9]"
).isinstance_python
# What _LOGISH matches, folded, holds one of these:
_LOGISH_SCAN = LiteralScan(("error", "warn", "err!", "exception", "fatal", "debug", "info"))


_SAMPLE_CHARS = 200 * _CLASSIFY_SAMPLE_LINES
_FIRST_TRY_CHARS = 16 * 1024


def _first_lines(text: str) -> list[str]:
    """The first ``_CLASSIFY_SAMPLE_LINES`` non-blank lines of ``text[:_SAMPLE_CHARS]``.

    A shorter prefix is split first: every line of it but the last (which may be cut)
    is a line of the longer one, so when those hold enough non-blank lines they are
    the same lines."""
    if _FIRST_TRY_CHARS < min(len(text), _SAMPLE_CHARS):
        lines = text[:_FIRST_TRY_CHARS].splitlines()
        lines.pop()
        sample = list(islice((ln for ln in lines if ln.strip()), _CLASSIFY_SAMPLE_LINES))
        if len(sample) == _CLASSIFY_SAMPLE_LINES:
            return sample
    lines = text[:_SAMPLE_CHARS].splitlines()
    return list(islice((ln for ln in lines if ln.strip()), _CLASSIFY_SAMPLE_LINES))


def _find(text: str, needle: str, start: int = 0) -> int:
    """``text.find(needle, start)``, first looking for the needle's first character
    (a ``memchr``): much faster through long text that holds none of it."""
    i = text.find(needle[0], start)
    return i if i < 0 else text.find(needle, i)


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def find_unread_blocks(text: str, min_bytes: int, min_lines: int) -> list[Block]:
    """Long fenced blocks and long runs of stack-trace lines outside fences."""
    blocks: list[Block] = []
    covered: list[tuple[int, int]] = []
    for start, end, body_start, body_end in (
        fenced_blocks(text) if (_find(text, "```") >= 0 or _find(text, "~~~") >= 0) else ()
    ):
        body = text[body_start:body_end]
        covered.append((start, end))
        n_lines = body.count("\n") + 1
        long_enough = _utf8_len(body) >= min_bytes or n_lines >= min_lines
        kind = _classify(body) if long_enough or n_lines >= TRACE_MIN_LINES else "code"
        if long_enough or (kind == "stack_trace" and n_lines >= TRACE_MIN_LINES):
            blocks.append(Block(start, end, kind, n_lines))
    # stack-trace runs outside fences (skipped when no line can be a trace line)
    if "\n" not in text:
        return sorted(blocks, key=lambda b: b.start)
    segments: list[tuple[int, int]] = []
    pos = 0
    for a, b in covered:
        segments.append((pos, a))
        pos = b
    segments.append((pos, len(text)))
    outside = sum(b - a for a, b in segments)
    if outside * 4 >= len(text):
        if not _may_hold_trace(text):
            return sorted(blocks, key=lambda b: b.start)
        for seg_start, seg_end in segments:
            _trace_runs(text, seg_start, seg_end, min_bytes, min_lines, blocks)
    else:
        # mostly fenced text: scan the few lines outside first, the hints only if needed
        # (same result as checking the hints first, without scanning long logs for them)
        runs: list[Block] = []
        for seg_start, seg_end in segments:
            _trace_runs(text, seg_start, seg_end, min_bytes, min_lines, runs)
        if runs and _may_hold_trace(text):
            blocks.extend(runs)
    return sorted(blocks, key=lambda b: b.start)


_TRACE_SCAN = LiteralScan(_TRACE_HINTS)


def _may_hold_trace(text: str) -> bool:
    """Cheap pre-check: could any line of ``text`` be a stack-trace line?"""
    return _TRACE_SCAN.any_in(text) or bool(_TRACE_FILE_HINT.search(text))


def fenced_blocks(text: str) -> list[tuple[int, int, int, int]]:
    """``(start, end, body_start, body_end)`` of each match of ``FENCED_PATTERN`` in
    ``text``, in order, exactly as ``re.finditer`` reports them.

    An opening line is ``[ \\t]*`` then a fence (three backticks or tildes) then anything,
    and must end with a newline; the body runs to the first later line made of
    ``[ \\t]*``, the same fence and ``[ \\t\\r]*`` (the match ends before its newline),
    else to the end of the text."""
    out: list[tuple[int, int, int, int]] = []
    n = len(text)
    pos = 0
    marks = tuple(m for m in _FENCE_MARKS if _find(text, m) >= 0)
    while True:
        opening = _next_fence_line(text, pos, marks)
        if opening is None:
            return out
        start, mark_at, fence = opening
        newline = text.find("\n", mark_at + 3)
        if newline < 0:
            return out  # an opening needs its newline; no later line exists
        body_start = newline + 1
        closing = _closing_fence(text, body_start, fence)
        if closing is None:
            out.append((start, n, body_start, n))
            return out
        body_end, end = closing
        out.append((start, end, body_start, body_end))
        pos = end


def _line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


def _blank(text: str, a: int, b: int, chars: str) -> bool:
    return a >= b or not text[a:b].strip(chars)


def _next_fence_line(text: str, pos: int, marks: tuple[str, ...]) -> tuple[int, int, str] | None:
    """First line starting at or after ``pos`` whose first non-blank characters are a
    fence: (line start, fence position, fence)."""
    found = {m: _find(text, m, pos) for m in marks}
    while True:
        live = [(at, m) for m, at in found.items() if at >= 0]
        if not live:
            return None
        at, mark = min(live)
        start = _line_start(text, at)
        if start >= pos and _blank(text, start, at, " \t"):
            return start, at, mark
        found[mark] = _find(text, mark, at + 1)


def _closing_fence(text: str, body_start: int, fence: str) -> tuple[int, int] | None:
    """(line start, line end) of the first closing fence line at or after ``body_start``."""
    at = _find(text, fence, body_start)
    while at >= 0:
        start = _line_start(text, at)
        if _blank(text, start, at, " \t"):
            end = text.find("\n", at + 3)
            end = len(text) if end < 0 else end
            if _blank(text, at + 3, end, " \t\r"):
                return start, end
        at = _find(text, fence, at + 1)
    return None


def _trace_runs(
    text: str, seg_start: int, seg_end: int, min_bytes: int, min_lines: int, out: list[Block]
) -> None:
    """Runs of stack-trace lines in ``text[seg_start:seg_end]``, line by line. On ASCII
    text, ``_TRACE_MAY`` is asked of the whole segment first (no line can be a trace
    line: no run), then of each line before the pattern."""
    seg = text[seg_start:seg_end]
    may = None
    if seg.isascii():
        if not _TRACE_MAY(seg):
            return
        may = _TRACE_MAY
    match = _TRACE_LINE.match
    pos = seg_start
    run_start = run_end = -1
    run_lines = 0
    for line in seg.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        if (may is None or may(line)) and match(line.rstrip("\r\n")):
            if run_start < 0:
                run_start, run_lines = start, 0
            run_end = pos
            run_lines += 1
            continue
        if run_start >= 0:
            _close_run(text, run_start, run_end, run_lines, min_bytes, min_lines, out)
            run_start = -1
    if run_start >= 0:
        _close_run(text, run_start, run_end, run_lines, min_bytes, min_lines, out)


def _close_run(
    text: str, start: int, end: int, n: int, min_bytes: int, min_lines: int, out: list[Block]
) -> None:
    chunk = text[start:end]
    if n >= 3 and (_utf8_len(chunk) >= min_bytes or n >= min(min_lines, TRACE_MIN_LINES)):
        out.append(Block(start, end, "stack_trace", n))


# -- sentences: hypotheses and expectations -------------------------------------------

# A sentence (or line) runs to a newline, or to a run of ".!?" that ends the text or is
# followed by white space: the dots in "2.4.1", "core.js" or "https://example.org/a.b"
# are inside a sentence, not ends of one.
_SENTENCE = re.compile(r"(?:[^.!?\n]+|[.!?]+(?=[^.!?\s]))+(?:[.!?]+|$)", re.M)
_HYPOTHESIS = re.compile(
    r"(?i)\b(?:i think|i believe|i suspect|i guess|my guess|my theory|maybe|perhaps|probably"
    r"|possibly|might be|may be (?:caused|due|related|because)|could be (?:caused|due|related"
    r"|because|a)|seems? (?:like|to be)|looks like|likely|suspect|caused by|the cause"
    r"|root cause|because of)\b"
)
_EXPECTATION = re.compile(
    r"(?i)\b(?:should(?:n't| not)?|expected|i expect|would expect|supposed to|instead of"
    r"|ought to|intended to)\b"
)


def _backtick_fences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each fenced block of ``text`` when it holds three backticks (the
    sentence rules leave out the sentences that start inside one)."""
    return [(a, b) for a, b, _, _ in fenced_blocks(text)] if _find(text, "```") >= 0 else []


def sentences(text: str, keep: Callable[[str], bool] | None = None) -> list[tuple[str, int, int]]:
    """(sentence, start, end) for each non-trivial sentence or line of ``text``, leaving
    out fenced code, quoted lines (``>``) and lines that look like stack-trace frames.
    ``keep`` (a pure test of the sentence) further selects; it runs after the cheap fence
    and quote checks and before the frame check (all pure tests: the order does not
    change the result)."""
    fences = _backtick_fences(text)
    out: list[tuple[str, int, int]] = []
    for m in _SENTENCE.finditer(text):
        _add_sentence(m, fences, keep, out)
    return out


def _add_sentence(
    m: re.Match[str],
    fences: list[tuple[int, int]],
    keep: Callable[[str], bool] | None,
    out: list[tuple[str, int, int]],
) -> None:
    raw = m.group(0)
    stripped = raw.strip()
    if len(stripped) < 8:
        return
    start = m.start() + len(raw) - len(raw.lstrip())
    if fences and any(a <= start < b for a, b in fences):
        return
    text = m.string
    if _QUOTED_LINE.match(text, text.rfind("\n", 0, start) + 1):
        return  # a quoted line: somebody else's words
    if (keep is not None and not keep(stripped)) or _TRACE_LINE.match(stripped):
        return
    out.append((stripped, start, start + len(stripped)))


# A line quoted from another message (Markdown and mail quoting, as in Bugzilla's "In reply
# to" comments): its sentences are not the hypotheses or expectations of the record's
# author, who only quotes them.
_QUOTED_LINE = re.compile(r"[ \t]*>")


def hinted_sentences(
    text: str,
    hints: tuple[str, ...],
    keep: Callable[[str], bool],
    scan: LiteralScan | None = None,
) -> list[tuple[str, int, int]]:
    """``sentences(text, keep)`` where ``keep`` is only ever true for a sentence whose
    :func:`folded` text holds one of ``hints`` (lower-case ASCII without ``.!?`` or
    newline), as for a sentence in which a case-insensitive ``re`` pattern of ASCII words
    matches.

    Only the sentences around a hint are looked at. ``folded`` keeps every position (else
    the text goes the plain way) and folds each sentence as the whole text. ``scan`` (a
    LiteralScan of ``hints``, made here when not given) finds the ``.``-separated pieces
    of the folded text that hold a hint. A piece without ``!?`` or newline holds no end
    of a sentence (:func:`sentence_start`), so it lies in the one sentence that starts
    after the last end before it, and ``_SENTENCE`` matched there is the match
    ``finditer`` gives; a text with any other hinted piece is split into all its
    sentences."""
    low = folded(text)
    if low is None:
        return sentences(text, keep)
    scan = scan or LiteralScan(hints)
    holds_hint = scan.any_in_ascii if text.isascii() else scan.any_in
    starts: set[int] = set()
    piece_start = 0
    for piece in low.split("."):
        if holds_hint(piece):
            if "\n" in piece or "!" in piece or "?" in piece:
                return _hinted_by_sentence(text, low, holds_hint, keep)
            starts.add(sentence_start(text, piece_start))
        piece_start += len(piece) + 1
    if not starts:
        return []
    fences = _backtick_fences(text)
    out: list[tuple[str, int, int]] = []
    for start in sorted(starts):
        m = _SENTENCE.match(text, start)
        if m is not None:
            _add_sentence(m, fences, keep, out)
    return out


def sentence_start(text: str, end: int) -> int:
    """Where the sentence of ``_SENTENCE`` that holds ``text[end]`` begins, for an ``end``
    at which no sentence ends: just after the last sentence end before ``end`` (a newline,
    or a ``.!?`` followed by white space or by the end of the text), else 0."""
    i = end
    while True:
        p = max(text.rfind(".", 0, i), text.rfind("!", 0, i), text.rfind("?", 0, i))
        p = max(p, text.rfind("\n", p + 1, i))
        if p < 0:
            return 0
        if text[p] == "\n" or p + 1 == len(text) or text[p + 1].isspace():
            return p + 1
        i = p


def _hinted_by_sentence(
    text: str, low: str, holds_hint: Callable[[str], bool], keep: Callable[[str], bool]
) -> list[tuple[str, int, int]]:
    """:func:`hinted_sentences` sentence by sentence: the sentences whose slice of ``low``
    (the folded text) holds a hint."""
    fences = _backtick_fences(text)
    out: list[tuple[str, int, int]] = []
    for m in _SENTENCE.finditer(text):
        if holds_hint(low[m.start() : m.end()]):
            _add_sentence(m, fences, keep, out)
    return out


# Characters other than ASCII letters that re's IGNORECASE matches with an ASCII letter
# (a test checks every code point): "İ" (lower-cased to two characters, so a text holding
# it goes the plain way), "K" (lower-cased to "k"), and these two, lower-case already:
_FOLD_TO_ASCII = (("\u0131", "i"), ("\u017f", "s"))


def folded(text: str) -> str | None:
    """``text.lower()`` with "ı" and "ſ" as "i" and "s", when that keeps every position
    (else None): a position holds a lower-case ASCII letter exactly where ``text`` holds
    a character that the letter matches case-insensitively in ``re``."""
    low = text.lower()
    if text.isascii():
        return low
    if len(low) != len(text):
        return None  # a character lower-cased to several, such as "İ"
    for c, ascii_c in _FOLD_TO_ASCII:
        if c in low:
            low = low.replace(c, ascii_c)
    return low


_HYPOTHESIS_HINTS = (  # "caused by" and "because of" contain "cause": no separate scan
    "think",
    "believe",
    "suspect",
    "guess",
    "theory",
    "maybe",
    "perhaps",
    "probably",
    "possibly",
    "might be",
    "may be",
    "could be",
    "seem",
    "looks like",
    "likely",
    "cause",
)
_EXPECTATION_HINTS = ("should", "expect", "supposed to", "instead of", "ought to", "intended")


_HYPOTHESIS_SCAN = LiteralScan(_HYPOTHESIS_HINTS)
_EXPECTATION_SCAN = LiteralScan(_EXPECTATION_HINTS)


def hypothesis_sentences(text: str) -> list[tuple[str, int, int]]:
    """The sentences of ``text`` that state a hypothesis (``is_hypothesis``)."""
    return hinted_sentences(text, _HYPOTHESIS_HINTS, is_hypothesis, _HYPOTHESIS_SCAN)


def expectation_sentences(text: str) -> list[tuple[str, int, int]]:
    """The sentences of ``text`` that state an expectation (``is_expectation``)."""
    return hinted_sentences(text, _EXPECTATION_HINTS, is_expectation, _EXPECTATION_SCAN)


# may_hold_hypothesis(text) of an ASCII text, given text.lower():
hypothesis_hint_ascii = _HYPOTHESIS_SCAN.any_in_ascii


def may_hold_hypothesis(text: str) -> bool:
    """Cheap pre-check (substring scan of the lower-cased text) before sentence-level
    matching: is one of ``_HYPOTHESIS_HINTS`` in ``text.lower()``?"""
    low = text.lower()
    return _HYPOTHESIS_SCAN.any_in_ascii(low) if low.isascii() else _HYPOTHESIS_SCAN.any_in(low)


def may_hold_expectation(text: str) -> bool:
    return _EXPECTATION_SCAN.any_in(text.lower())


MIN_HYPOTHESIS_WORDS = 3  # words besides the hint: "I think 🤔" or "Probably." say nothing
_WORD = re.compile(r"[^\W_]+")


def is_hypothesis(sentence: str) -> bool:
    """A sentence with a hypothesis hint and at least ``MIN_HYPOTHESIS_WORDS`` words
    besides the hint itself (a bare "I think", "maybe so" or an emoji is no claim).

    The plain rule (``is_hypothesis_reference`` in the tests) without scanning the whole
    sentence with the case-insensitive pattern: every match, :func:`folded`, is the
    lower-case text of an alternative, which holds a hint at a known offset
    (``_HYPOTHESIS_HINT_OFFSETS``), so the pattern is tried only at those starts (the
    leftmost success is what ``search`` finds); the words are counted only as far as the
    rule needs. Short sentences take the plain way after the hint check."""
    low = folded(sentence)
    if low is None:
        match = _HYPOTHESIS.search(sentence)
    elif not (
        _HYPOTHESIS_SCAN.any_in_ascii(low) if low.isascii() else _HYPOTHESIS_SCAN.any_in(low)
    ):
        return False
    elif len(sentence) < _SHORT_SENTENCE:
        match = _HYPOTHESIS.search(sentence)  # cheaper than the hint search when short
    else:
        match = _hypothesis_search(sentence, low)
    if match is None:
        return False
    if len(sentence) < _SHORT_SENTENCE:
        words = len(_WORD.findall(sentence)) - len(_WORD.findall(match.group(0)))
        return words >= MIN_HYPOTHESIS_WORDS
    need = MIN_HYPOTHESIS_WORDS + len(_WORD.findall(match.group(0)))
    return sum(1 for _ in islice(_WORD.finditer(sentence), need)) == need


_SHORT_SENTENCE = 64  # characters: below, the pattern over the whole sentence is cheaper


# For each hint, the offsets at which it begins in the alternatives of _HYPOTHESIS that
# hold it ("i think": 2, "my guess": 3, "root cause": 5, ...); every alternative holds one.
_HYPOTHESIS_HINT_OFFSETS: dict[str, tuple[int, ...]] = {
    "think": (2,),
    "believe": (2,),
    "suspect": (0, 2),
    "guess": (2, 3),
    "theory": (3,),
    "maybe": (0,),
    "perhaps": (0,),
    "probably": (0,),
    "possibly": (0,),
    "might be": (0,),
    "may be": (0,),
    "could be": (0,),
    "seem": (0,),
    "looks like": (0,),
    "likely": (0,),
    "cause": (0, 2, 4, 5),  # caused by, because of, the cause, root cause
}


def _hypothesis_search(sentence: str, low: str) -> re.Match[str] | None:
    """``_HYPOTHESIS.search(sentence)`` given ``low = folded(sentence)``."""
    starts: set[int] = set()
    for hint, offsets in _HYPOTHESIS_HINT_OFFSETS.items():
        i = low.find(hint)
        while i >= 0:
            starts.update(i - off for off in offsets if off <= i)
            i = low.find(hint, i + 1)
    match = _HYPOTHESIS.match
    for start in sorted(starts):
        m = match(sentence, start)
        if m is not None:
            return m
    return None


def is_expectation(sentence: str) -> bool:
    if sentence.isascii() and not may_hold_expectation(sentence):
        return False
    return bool(_EXPECTATION.search(sentence))
