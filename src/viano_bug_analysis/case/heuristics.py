"""Text heuristics of CaseBuilder: unread blocks, hypotheses, expectations, entities.

These are deliberately simple, documented pattern rules (docs/viano.md lists them). They
classify supplied text; they never decide anything about a cause.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

from viano_bug_analysis.case.textscan import LiteralScan, literal_pattern, may_search, rust_search

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
    :func:`classify_reference`, each count stopped as soon as its outcome is known, and
    asked first of all the sample lines at once, then line by line, with necessary
    conditions run by the Rust engine (``_TRACE_MAY`` on ASCII lines; the hints of
    ``_LOGISH`` in the :func:`folded` lines)."""
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


def classify_reference(text: str) -> str:
    """The block label as first written (kept for the tests)."""
    lines = [ln for ln in text[: 200 * _CLASSIFY_SAMPLE_LINES].splitlines() if ln.strip()]
    lines = lines[:_CLASSIFY_SAMPLE_LINES]
    if not lines:
        return "code"
    trace = sum(1 for ln in lines if _TRACE_LINE.match(ln))
    if trace >= 3 and trace * 3 >= len(lines):
        return "stack_trace"
    logish = sum(1 for ln in lines if _LOGISH.search(ln))
    return "log" if logish * 4 >= len(lines) else "code"


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
    """:func:`_trace_runs_reference`; on ASCII text, ``_TRACE_MAY`` is asked of the whole
    segment first (no line can be a trace line: no run), then of each line before the
    pattern."""
    seg = text[seg_start:seg_end]
    if not seg.isascii():
        _trace_runs_reference(text, seg_start, seg_end, min_bytes, min_lines, out)
        return
    if not _TRACE_MAY(seg):
        return
    may = _TRACE_MAY
    match = _TRACE_LINE.match
    pos = seg_start
    run_start = run_end = -1
    run_lines = 0
    for line in seg.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        if may(line) and match(line.rstrip("\r\n")):
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


def _trace_runs_reference(
    text: str, seg_start: int, seg_end: int, min_bytes: int, min_lines: int, out: list[Block]
) -> None:
    """Runs of stack-trace lines in ``text[seg_start:seg_end]`` (as first written)."""
    pos = seg_start
    run_start = run_end = -1
    run_lines = 0
    for line in text[seg_start:seg_end].splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        if _TRACE_LINE.match(line.rstrip("\r\n")):
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

_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)", re.M)
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


def sentences(text: str, keep: Callable[[str], bool] | None = None) -> list[tuple[str, int, int]]:
    """(sentence, start, end) for each non-trivial sentence or line of ``text``, leaving
    out fenced code and lines that look like stack-trace frames. ``keep`` (a pure test of
    the sentence) further selects; it runs after the cheap fence check and before the
    frame check (all pure tests: the order does not change the result)."""
    fences = [(a, b) for a, b, _, _ in fenced_blocks(text)] if _find(text, "```") >= 0 else []
    out: list[tuple[str, int, int]] = []
    for m in _SENTENCE.finditer(text):
        _add_sentence(m, fences, keep, out)
    return out


def sentences_reference(
    text: str, keep: Callable[[str], bool] | None = None
) -> list[tuple[str, int, int]]:
    """:func:`sentences` as first written: ``keep`` before the frame and fence checks
    (kept for the tests)."""
    fences = [(a, b) for a, b, _, _ in fenced_blocks(text)] if _find(text, "```") >= 0 else []
    out: list[tuple[str, int, int]] = []
    for m in _SENTENCE.finditer(text):
        _add_sentence_reference(m, fences, keep, out)
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
    if (keep is not None and not keep(stripped)) or _TRACE_LINE.match(stripped):
        return
    out.append((stripped, start, start + len(stripped)))


def _add_sentence_reference(
    m: re.Match[str],
    fences: list[tuple[int, int]],
    keep: Callable[[str], bool] | None,
    out: list[tuple[str, int, int]],
) -> None:
    raw = m.group(0)
    stripped = raw.strip()
    if len(stripped) < 8 or (keep is not None and not keep(stripped)):
        return
    if _TRACE_LINE.match(stripped):
        return
    lead = len(raw) - len(raw.lstrip())
    start = m.start() + lead
    if any(a <= start < b for a, b in fences):
        return
    out.append((stripped, start, start + len(stripped)))


def hinted_sentences(
    text: str,
    hints: tuple[str, ...],
    keep: Callable[[str], bool],
    scan: LiteralScan | None = None,
) -> list[tuple[str, int, int]]:
    """``sentences(text, keep)`` where ``keep`` is only ever true for a sentence whose
    :func:`folded` text holds one of ``hints`` (hints: lower-case ASCII without ``.!?``
    or newline), as for a sentence in which a case-insensitive ``re`` pattern of ASCII
    words matches.

    Only the sentences around a hint are looked at: a sentence is a maximal run without
    ``.!?`` or newline (plus its closing punctuation), so the one holding a hint at ``i``
    starts just after the last of those before ``i``, and ``_SENTENCE`` matched there is
    the match ``finditer`` gives. ``folded`` keeps every position (else the text goes the
    plain way), and it folds the sentences as the whole text. ``scan`` (a LiteralScan of
    ``hints``) finds the ``.``-separated pieces holding a hint first, then, in a piece
    holding ``!?`` or a newline, the pieces between those (same starts: no hint crosses a
    sentence end)."""
    low = folded(text)
    if low is None:
        return sentences(text, keep)
    starts: set[int] = set()
    if scan is None:
        for hint in hints:
            i = low.find(hint)
            while i >= 0:
                starts.add(max(text.rfind(c, 0, i) for c in ".!?\n") + 1)
                i = low.find(hint, i + 1)
    else:
        piece_start = 0
        holds_hint = scan.any_in_ascii if text.isascii() else scan.any_in
        for piece in low.split("."):
            if holds_hint(piece):
                if "\n" not in piece and "!" not in piece and "?" not in piece:
                    starts.add(piece_start)  # one sentence: the hint's
                else:  # the sentences of the piece that hold a hint
                    start = piece_start
                    for sentence in _SENTENCE_END.split(piece):
                        if holds_hint(sentence):
                            starts.add(start)
                        start += len(sentence) + 1
            piece_start += len(piece) + 1
    if not starts:
        return []
    fences = [(a, b) for a, b, _, _ in fenced_blocks(text)] if _find(text, "```") >= 0 else []
    out: list[tuple[str, int, int]] = []
    for start in sorted(starts):
        m = _SENTENCE.match(text, start)
        if m is not None:
            _add_sentence(m, fences, keep, out)
    return out


_SENTENCE_END = re.compile(r"[.!?\n]")


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


def hinted_sentences_reference(
    text: str,
    hints: tuple[str, ...],
    keep: Callable[[str], bool],
    scan: LiteralScan | None = None,
) -> list[tuple[str, int, int]]:
    """:func:`hinted_sentences` as first written (kept for the tests): ``sentences(text,
    keep)`` where ``keep`` is only ever true for a sentence whose
    lower-cased ASCII text holds one of ``hints`` (hints hold no ``.!?`` or newline).

    On ASCII text only the sentences around a hint are looked at: a sentence is a
    maximal run without ``.!?`` or newline (plus its closing punctuation), so the one
    holding a hint at ``i`` starts just after the last of those before ``i``, and
    ``_SENTENCE`` matched there is the match ``finditer`` gives. ``scan`` (a LiteralScan
    of ``hints``) finds the ``.``-separated pieces holding a hint first, so that the
    hints are searched for in those pieces only (same starts: no hint crosses a dot)."""
    if not text.isascii():
        return sentences_reference(text, keep)
    low = text.lower()
    starts: set[int] = set()
    if scan is None:
        for hint in hints:
            i = low.find(hint)
            while i >= 0:
                starts.add(max(text.rfind(c, 0, i) for c in ".!?\n") + 1)
                i = low.find(hint, i + 1)
    else:
        piece_start = 0
        holds_hint = scan.any_in_ascii
        for piece in low.split("."):
            if holds_hint(piece):
                if "\n" not in piece and "!" not in piece and "?" not in piece:
                    starts.add(piece_start)  # one sentence: the hint's
                else:
                    _hint_starts_in(text, low, hints, piece_start, piece_start + len(piece), starts)
            piece_start += len(piece) + 1
    if not starts:
        return []
    fences = [(a, b) for a, b, _, _ in fenced_blocks(text)] if _find(text, "```") >= 0 else []
    out: list[tuple[str, int, int]] = []
    for start in sorted(starts):
        m = _SENTENCE.match(text, start)
        if m is not None:
            _add_sentence_reference(m, fences, keep, out)
    return out


def _hint_starts_in(
    text: str, low: str, hints: tuple[str, ...], piece_start: int, piece_end: int, starts: set[int]
) -> None:
    """Add the sentence start of every hint in ``low[piece_start:piece_end]`` (a piece
    between dots) to ``starts``."""
    for hint in hints:
        i = low.find(hint, piece_start, piece_end)
        while i >= 0:
            # the last "." before i ends the previous piece
            last = max(text.rfind(c, piece_start, i) for c in "!?\n")
            starts.add(max(last + 1, piece_start))
            i = low.find(hint, i + 1, piece_end)


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

    :func:`is_hypothesis_reference` without scanning the whole sentence with the
    case-insensitive pattern: every match, :func:`folded`, is the lower-case text of an
    alternative, which holds a hint at a known offset (``_HYPOTHESIS_HINT_OFFSETS``), so
    the pattern is tried only at those starts (the leftmost success is what ``search``
    finds); the words are counted only as far as the rule needs. Short sentences take
    the plain way after the hint check."""
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


def is_hypothesis_reference(sentence: str) -> bool:
    """:func:`is_hypothesis` as first written (kept for the tests)."""
    if sentence.isascii() and not may_hold_hypothesis(sentence):
        return False
    match = _HYPOTHESIS.search(sentence)
    if match is None:
        return False
    words = len(_WORD.findall(sentence)) - len(_WORD.findall(match.group(0)))
    return words >= MIN_HYPOTHESIS_WORDS


def is_expectation(sentence: str) -> bool:
    if sentence.isascii() and not may_hold_expectation(sentence):
        return False
    return bool(_EXPECTATION.search(sentence))


# -- entities -----------------------------------------------------------------------------

_URL = re.compile(r"https?://[^\s<>()\"'`\]\[{}|\\^]+")
_HTTP_PATH = re.compile(r"\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+(/[^\s\"'`<>]*)")
_PKG_VERSION = re.compile(
    r"(?<![\w@/.-])(?P<name>@?[a-z0-9][\w.-]*(?:/[\w.-]+)?)@v?(?P<ver>\d+(?:\.\d+){1,3}"
    r"(?:-[0-9A-Za-z.]+)?)\b"
)
_NAMED_VERSION = re.compile(
    r"\b(?P<name>[A-Z][A-Za-z][\w.+-]{0,30}|node(?:\.?js)?|npm|yarn|python|java|go|rustc)"
    r"(?:\s+|/)v?(?P<ver>\d+\.\d+(?:\.\d+){0,2})\b"
)
_BARE_VERSION = re.compile(r"(?<![\w.@/:-])v?(?P<ver>\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)(?![\w.])")
_FILE = re.compile(
    r"(?<![\w/.@-])(?P<f>(?:[\w.-]+/)*[\w-][\w.-]*\.(?:jsx?|tsx?|mjs|cjs|json|py|rb|go|rs|java"
    r"|kt|c|cc|cpp|h|hpp|cs|css|scss|less|html?|vue|svelte|ya?ml|toml|lock|sh|xml|gradle"
    r"|php|swift|sql|ini|cfg|conf|log))\b"
)
_ERROR_CODE = re.compile(
    r"\b(?P<e>E[A-Z]{3,}[A-Z0-9]*|ERR_[A-Z0-9_]+|[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:Error|Exception)"
    r"|NS_ERROR_[A-Z_]+|HTTP [45]\d\d)\b"
)
# library names and calls that look like file names
_FILE_STOP = {
    "node.js",
    "console.log",
    "vue.js",
    "next.js",
    "nuxt.js",
    "react.js",
    "express.js",
    "three.js",
    "chart.js",
    "d3.js",
    "moment.js",
    "ember.js",
    "angular.js",
    "backbone.js",
    "socket.io",
    "deno.js",
    "bun.js",
}
_HTTP_VERBS = ("GET ", "POST ", "PUT ", "PATCH ", "DELETE ", "HEAD ", "OPTIONS ")
_DIGIT_DOT = re.compile(r"\d\.\d")
_FILE_HINT = re.compile(
    r"\.(?:jsx?|tsx?|mjs|cjs|json|py|rb|go|rs|java|kt|c|cc|cpp|h|hpp|cs|css|scss|less|html?"
    r"|vue|svelte|ya?ml|toml|lock|sh|xml|gradle|php|swift|sql|ini|cfg|conf|log)\b"
)
_ERROR_HINTS = ("Error", "Exception", "ERR_", "HTTP 4", "HTTP 5")
_ERROR_E_HINT = re.compile(r"E[A-Z]{3}")
# Literals at least one of which occurs in ASCII text whenever one of the checks in
# extract_entities can succeed: "://", the HTTP verbs and error hints, every ASCII
# digit-dot-digit, and a dot before the first letters of each file extension.
_ENTITY_LITERALS = (
    "://",
    *_HTTP_VERBS,
    *_ERROR_HINTS,
    *(f"{a}.{b}" for a in range(10) for b in range(10)),
    *(".js", ".ts", ".mjs", ".py", ".rb", ".go", ".rs", ".java", ".kt", ".c", ".h"),
    *(".less", ".vue", ".svelte", ".yml", ".yaml", ".toml", ".lock", ".sh", ".xml"),
    *(".scss", ".gradle", ".php", ".swift", ".sql", ".ini", ".log"),
)
_ENTITY_SCAN = LiteralScan(_ENTITY_LITERALS)
# The whole pre-check of ASCII text in one Rust pass: the literals, the 100 digit-dot-digit
# literals written as one class (scanned several times faster than 100 alternatives), and
# _ERROR_E_HINT (the same ASCII classes in both engines).
_ENTITY_ASCII_SCAN = rust_search(
    "|".join(literal_pattern(x) for x in _ENTITY_LITERALS if not _DIGIT_DOT.fullmatch(x))
    + r"|[0-9]\.[0-9]|E[A-Z]{3}"
)


def may_hold_entities(text: str) -> bool:
    """Cheap pre-check: ``extract_entities(text)`` is empty when this is false (it may be
    true for text that holds none)."""
    if not text.isascii():
        return True  # Unicode digits and case rules: the exact checks decide
    return _ENTITY_ASCII_SCAN.isinstance_python(text)


def may_hold_entities_reference(text: str) -> bool:
    """:func:`may_hold_entities` as first written (kept for the tests)."""
    if not text.isascii():
        return True
    return _ENTITY_SCAN.any_in(text) or _ERROR_E_HINT.search(text) is not None


_ERROR_CODE_STOP = {"EACH", "ELSE", "EDIT", "EVEN", "EVER", "EXIT", "ETC", "EVERY", "EXACT"}


_ENTITY_GROUP = 64


def may_hold_entities_each(texts: list[str]) -> list[bool]:
    """``[may_hold_entities(t) for t in texts]``, asked of groups of texts at once: when
    none of the literals (nor ``E[A-Z]{3}``) occurs in a group's ASCII texts joined by
    NUL, none occurs in any of them; otherwise each text is asked alone."""
    out: list[bool] = []
    for i in range(0, len(texts), _ENTITY_GROUP):
        group = texts[i : i + _ENTITY_GROUP]
        joined = "\x00".join(group)
        if joined.isascii() and not _ENTITY_ASCII_SCAN.isinstance_python(joined):
            out.extend([False] * len(group))
        else:
            out.extend(may_hold_entities(t) for t in group)
    return out


def extract_entities(text: str) -> list[tuple[str, str]]:
    """(entity_type, value) pairs found in ``text`` (unordered, may repeat)."""
    return _extract_entities(text) if may_hold_entities(text) else []


def extract_entities_reference(text: str) -> list[tuple[str, str]]:
    """:func:`extract_entities` with the entity rules as first written (for the tests)."""
    return _extract_entities_reference(text) if may_hold_entities(text) else []


def _extract_entities(text: str) -> list[tuple[str, str]]:
    """:func:`_extract_entities_reference`, each pattern tried only where it can match.

    ``finditer`` over a whole text is the leftmost non-overlapping sequence of
    ``pattern.match(text, s)`` successes; a match at ``s`` does not depend on where the
    scan started (lookbehinds and ``\\b`` see the text before ``s``). So trying
    ``match`` at the sorted candidate starts, skipping those before the end of the last
    match (:func:`_matches_at`), gives the same matches whenever every start at which
    the pattern matches is a candidate. The candidates of each pattern come from a
    literal (or ``\\.(?=\\d)``) found with a prefix-searched pattern, then from the
    pattern's own rules (see each ``_*_starts``). ``sub`` with a non-empty pattern
    replaces exactly those matches. The guards are those of the reference (some only
    speed it up, ``"GET "`` and the like also decide), asked of the Rust engine where
    its answer is the same: literals and ASCII ranges on any text, ``\\b`` and digits
    on ASCII text only."""
    found: list[tuple[str, str]] = []
    no_urls = text
    if "://" in text:
        urls = list(_URL.finditer(text))
        for m in urls:
            found.append(("endpoint", m.group(0).rstrip(".,;:!?")))
        no_urls = _replaced(text, urls)
    ascii_text = no_urls.isascii()
    if _HTTP_VERB_SCAN.any_in(no_urls):  # any(verb in no_urls for verb in _HTTP_VERBS)
        for m in _matches_at(_HTTP_PATH, no_urls, [m.start() for m in _VERB_AT.finditer(no_urls)]):
            found.append(("endpoint", m.group(0)))
    back = _Back(no_urls)
    dots = _digit_dots(no_urls) if not ascii_text or _DIGIT_DOT_ASCII(no_urls) else []
    if dots:
        without_pkg = no_urls
        if "@" in no_urls:
            pkgs = _matches_at(_PKG_VERSION, no_urls, _pkg_starts(no_urls, back))
            for m in pkgs:
                found.append(("component", m.group("name")))
                found.append(("version", f"{m.group('name')}@{m.group('ver')}"))
            if pkgs:
                without_pkg = _replaced(no_urls, pkgs)
        named = set()
        for m in _matches_at(_NAMED_VERSION, no_urls, _named_starts(no_urls, dots, back)):
            found.append(("version", f"{m.group('name')} {m.group('ver')}"))
            named.add(m.group("ver"))
        bare_dots = dots if without_pkg is no_urls else _digit_dots(without_pkg)
        for m in _matches_at(_BARE_VERSION, without_pkg, _bare_starts(without_pkg, bare_dots)):
            if m.group("ver") not in named:
                found.append(("version", m.group("ver")))
    hints = (
        [m.start() for m in _FILE_HINT.finditer(no_urls)]
        if not ascii_text or _FILE_HINT_ASCII(no_urls)
        else []
    )
    if hints:
        for m in _matches_at(_FILE, no_urls, back.run_starts(_NAME_RUN, hints)):
            value = m.group("f")
            if value.lower() not in _FILE_STOP and not re.fullmatch(
                r"[\d.]+", value.rsplit(".", 1)[0]
            ):
                found.append(("file", value))
    error_at = (
        [m.start() for m in _ERROR_AT.finditer(no_urls)]
        if may_search(_ERROR_AT_RUST, no_urls)
        else []
    )
    if error_at:
        # the start of the letters before each hit (CamelCaseError), which is the hit
        # itself where a \b is before it (where the other alternatives start)
        for m in _matches_at(_ERROR_CODE, no_urls, back.run_starts(_LETTER_RUN, error_at)):
            if m.group("e") not in _ERROR_CODE_STOP:
                found.append(("error_code", m.group("e")))
    return found


# -- where each entity pattern can start (for _extract_entities) -------------------------

_VERB_AT = re.compile(r"GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS")
_ERROR_AT = re.compile(r"E[A-Z]{3}|ERR_|NS_ERROR_|HTTP [45]|Error|Exception")
_DOT_BEFORE_DIGIT = re.compile(r"\.(?=\d)")
_NAME_RUN = re.compile(r"[\w@/.-]*")  # the class of the lookbehinds of _PKG_VERSION, _FILE
_LETTER_RUN = re.compile(r"[A-Za-z]*")
_NAME_START = re.compile(r"\b[A-Za-z]")
_NAMED_NAME_RUN = re.compile(r"[\w.+-]*")  # the characters of the names of _NAMED_VERSION
_HTTP_VERB_SCAN = LiteralScan(_HTTP_VERBS)
# the same answers as re on ASCII text (the ASCII digits and word characters of both):
_DIGIT_DOT_ASCII = rust_search(r"[0-9]\.[0-9]").isinstance_python
_FILE_HINT_ASCII = rust_search(_FILE_HINT.pattern).isinstance_python
# the same answers as re on any text the engine reads (literals and ASCII ranges):
_ERROR_AT_RUST = rust_search(_ERROR_AT.pattern)
_NAMED_NAME_MAX = 32  # [A-Z][A-Za-z][\w.+-]{0,30}; the literal names are shorter


def _matches_at(pattern: re.Pattern[str], text: str, starts: list[int]) -> list[re.Match[str]]:
    """``list(pattern.finditer(text))`` when every position at which ``pattern.match``
    succeeds is in ``starts`` (a pattern that never matches the empty string)."""
    out: list[re.Match[str]] = []
    end = 0
    match = pattern.match
    for s in sorted(set(starts)):
        if s >= end and (m := match(text, s)) is not None:
            out.append(m)
            end = m.end()
    return out


def _replaced(text: str, matches: list[re.Match[str]]) -> str:
    """``pattern.sub(" ", text)`` given ``matches``, the (non-empty) matches of
    ``pattern.finditer(text)``."""
    if not matches:
        return text
    pieces: list[str] = []
    pos = 0
    for m in matches:
        pieces.append(text[pos : m.start()])
        pos = m.end()
    pieces.append(text[pos:])
    return " ".join(pieces)


def _digit_dots(text: str) -> list[int]:
    """Every ``p`` (ascending, overlapping ones too) with ``text[p - 1:p + 2]`` matching
    ``\\d\\.\\d`` (``str.isdecimal`` is ``\\d`` of ``re``: Unicode category Nd)."""
    out: list[int] = []
    for m in _DOT_BEFORE_DIGIT.finditer(text):
        p = m.start()
        if p and text[p - 1].isdecimal():
            out.append(p)
    return out


def _digit_run_start(text: str, p: int) -> int:
    """Start of the run of digits ending at ``p - 1`` (``text[p - 1]`` is a digit)."""
    q = p - 1
    while q and text[q - 1].isdecimal():
        q -= 1
    return q


class _Back:
    """Starts of runs of a character class ending before given positions, read right to
    left with the class's pattern on the reversed text (reversed once, when needed)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._rev: str | None = None

    def run_starts(self, run: re.Pattern[str], ends: list[int]) -> list[int]:
        """For each ``i`` of ``ends`` (ascending): the start of the longest run of
        characters matched by ``run`` (``[class]*``) ending at ``i - 1`` (``i`` when
        ``text[i - 1]`` is not one), each start once. A run read once serves every later
        ``i`` inside it, so the work is linear in the text."""
        text = self.text
        n = len(text)
        if self._rev is None:
            self._rev = text[::-1]
        rev = self._rev
        out: list[int] = []
        start = run_end = -1
        for i in ends:
            if start <= i <= run_end:
                continue  # text[start:i] is in the run read last: the same start
            r = n - i  # rev[r] is text[i - 1]
            start = i - (run.match(rev, r).end() - r)  # type: ignore[union-attr]
            run_end = run.match(text, start).end()  # type: ignore[union-attr]
            out.append(start)
        return out

    def run_start(self, run: re.Pattern[str], i: int, limit: int) -> int:
        """Start of the run of characters of ``run`` (``[class]*``) ending at ``i - 1``,
        at most ``limit`` characters long."""
        n = len(self.text)
        if self._rev is None:
            self._rev = self.text[::-1]
        r = n - i
        return i - (run.match(self._rev, r, r + limit).end() - r)  # type: ignore[union-attr]


def _pkg_starts(text: str, back: _Back) -> list[int]:
    """Candidate starts of ``_PKG_VERSION``: its name and separator ``@`` (followed by
    ``v?\\d``) are characters of its lookbehind's class, which the character before the
    match is not, so the match starts where the run of that class before the ``@``
    starts."""
    ats: list[int] = []
    i = text.find("@")
    while i >= 0:
        nxt = text[i + 1 : i + 3]
        if i and nxt and (nxt[0].isdecimal() or (nxt[0] == "v" and nxt[1:].isdecimal())):
            ats.append(i)
        i = text.find("@", i + 1)
    return back.run_starts(_NAME_RUN, ats)


def _named_starts(text: str, dots: list[int], back: _Back) -> list[int]:
    """Candidate starts of ``_NAMED_VERSION``. Its version starts with the run of digits
    before the first dot of a digit-dot-digit, after an optional ``v``, a separator (one
    ``/`` or a whole run of white space: names hold neither) and a name ending at the
    separator: at most 32 characters of ``[\\w.+-]``, beginning with an ASCII letter at
    a ``\\b``."""
    starts: list[int] = []
    for p in dots:
        q = _digit_run_start(text, p)
        e = q - 1 if q and text[q - 1] == "v" else q
        if not e:
            continue
        c = text[e - 1]
        if c == "/":
            t = e - 1
        elif c.isspace():  # str.isspace is \s of re
            t = e - 1
            while t and text[t - 1].isspace():
                t -= 1
        else:
            continue
        lo = back.run_start(_NAMED_NAME_RUN, t, _NAMED_NAME_MAX) if t else t
        if lo < t:
            starts.extend(m.start() for m in _NAME_START.finditer(text, lo, t))
    return starts


def _bare_starts(text: str, dots: list[int]) -> list[int]:
    """Candidate starts of ``_BARE_VERSION``: an optional ``v`` and the run of digits
    before the first dot ``p`` of a digit-dot-digit, where the next digit-dot-digit
    follows digits after ``p`` (``\\d+\\.\\d+\\.\\d``) and no ``.`` is just before the run
    (the lookbehind)."""
    starts: list[int] = []
    last = len(dots) - 1
    for k, p in enumerate(dots):
        if k == last or not text[p + 1 : dots[k + 1]].isdecimal():
            continue
        q = _digit_run_start(text, p)
        if q and text[q - 1] == ".":
            continue
        starts.append(q - 1 if q and text[q - 1] == "v" else q)
    return starts


def _extract_entities_reference(text: str) -> list[tuple[str, str]]:
    """The entity rules as first written: each pattern's ``finditer`` over the whole
    text (kept for the tests; :func:`_extract_entities` gives the same list)."""
    found: list[tuple[str, str]] = []
    no_urls = text
    if "://" in text:
        for m in _URL.finditer(text):
            found.append(("endpoint", m.group(0).rstrip(".,;:!?")))
        no_urls = _URL.sub(" ", text)
    if any(verb in no_urls for verb in _HTTP_VERBS):
        for m in _HTTP_PATH.finditer(no_urls):
            found.append(("endpoint", m.group(0)))
    if _DIGIT_DOT.search(no_urls):
        without_pkg = no_urls
        if "@" in no_urls:
            for m in _PKG_VERSION.finditer(no_urls):
                found.append(("component", m.group("name")))
                found.append(("version", f"{m.group('name')}@{m.group('ver')}"))
            without_pkg = _PKG_VERSION.sub(" ", no_urls)
        named = set()
        for m in _NAMED_VERSION.finditer(no_urls):
            found.append(("version", f"{m.group('name')} {m.group('ver')}"))
            named.add(m.group("ver"))
        for m in _BARE_VERSION.finditer(without_pkg):
            if m.group("ver") not in named:
                found.append(("version", m.group("ver")))
    if _FILE_HINT.search(no_urls):
        for m in _FILE.finditer(no_urls):
            value = m.group("f")
            if value.lower() not in _FILE_STOP and not re.fullmatch(
                r"[\d.]+", value.rsplit(".", 1)[0]
            ):
                found.append(("file", value))
    if any(hint in no_urls for hint in _ERROR_HINTS) or _ERROR_E_HINT.search(no_urls):
        for m in _ERROR_CODE.finditer(no_urls):
            if m.group("e") not in _ERROR_CODE_STOP:
                found.append(("error_code", m.group("e")))
    return found


def version_key(entity_value: str) -> tuple[str, str] | None:
    """(component name, version) of a version entity, for conflict detection."""
    if "@" in entity_value[1:]:
        name, _, ver = entity_value.rpartition("@")
        return name.lower(), ver
    if " " in entity_value:
        name, _, ver = entity_value.rpartition(" ")
        return name.lower(), ver
    return None
