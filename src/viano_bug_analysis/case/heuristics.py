"""Text rules of CaseBuilder: unread blocks, sentences, hypotheses, expectations (entities
are in ``entities.py``).

These are deliberately simple pattern rules, each written once (docs/intake-format.md
lists them). They classify supplied text; they never decide anything about a cause.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# -- unread blocks (long logs, stack traces, long code) ---------------------------------

# An opening fence line, then the body: whole lines up to the first closing fence line
# (the same fence alone on its line), else everything to the end of the text. The body
# steps over whole lines: ``re`` does that far faster than trying the closing line after
# every character, as ``(?s).*?`` would (a long log costs ~60 ns a character then).
_FENCED = re.compile(
    r"(?m)^[ \t]*(```|~~~)[^\n]*\n"
    r"(?P<body>(?:[^\n]*\n)*?(?:[^\n]+\Z)??)"
    r"(?:^[ \t]*\1[ \t\r]*$|\Z)"
)
_TRACE_LINE = re.compile(
    r"^\s*(?:at\s+\S.*|File \".*\", line \d+.*|Traceback \(most recent call last\):?"
    r"|npm ERR!.*|#\d+\s+0x[0-9a-fA-F]+.*|\S+\.(?:js|ts|py|java|rs|go|c|cpp):\d+(?::\d+)?.*"
    r"|(?:\w+\.)*\w*(?:Error|Exception)(?::.*)?|Caused by:.*|\.\.\. \d+ more)\s*$"
)
_LOGISH = re.compile(r"(?i)\b(?:error|warn(?:ing)?|err!|exception|fatal|debug|info)\b")

TRACE_MIN_LINES = 10  # a stack trace this long is kept unread even below the byte threshold
_CLASSIFY_SAMPLE_LINES = 200


@dataclass(frozen=True)
class Block:
    start: int
    end: int
    kind: str  # stack_trace | log | code
    lines: int


def fenced_blocks(text: str) -> list[tuple[int, int, int, int]]:
    """``(start, end, body_start, body_end)`` of each fenced block of ``text``, in order.

    An opening line is ``[ \\t]*`` then a fence (three backticks or tildes) then anything,
    and must end with a newline; the body runs to the first later line made of
    ``[ \\t]*``, the same fence and ``[ \\t\\r]*`` (the block ends before its newline),
    else to the end of the text."""
    if "```" not in text and "~~~" not in text:
        return []  # no fence
    return [(m.start(), m.end(), m.start("body"), m.end("body")) for m in _FENCED.finditer(text)]


def classify_block(text: str) -> str:
    """Label a block by its first 200 non-blank lines (a label only; the block stays
    unread): ``stack_trace`` when at least 3 of them, and a third, are stack-trace lines;
    else ``log`` when a quarter hold a log word (error, warning, debug, ...); else
    ``code``."""
    sample = text[: 200 * _CLASSIFY_SAMPLE_LINES].splitlines()
    lines = [ln for ln in sample if ln.strip()][:_CLASSIFY_SAMPLE_LINES]
    if not lines:
        return "code"
    trace = sum(1 for ln in lines if _TRACE_LINE.match(ln))
    if trace >= 3 and trace * 3 >= len(lines):
        return "stack_trace"
    logish = sum(1 for ln in lines if _LOGISH.search(ln))
    return "log" if logish * 4 >= len(lines) else "code"


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def find_unread_blocks(text: str, min_bytes: int, min_lines: int) -> list[Block]:
    """The blocks of ``text`` left unread, in order: fenced blocks of at least
    ``min_bytes`` UTF-8 bytes or ``min_lines`` lines (and fenced stack traces of
    ``TRACE_MIN_LINES`` lines), and runs of stack-trace lines outside fences
    (:func:`_trace_runs`)."""
    blocks: list[Block] = []
    outside: list[tuple[int, int]] = []  # the text between the fenced blocks
    pos = 0
    for start, end, body_start, body_end in fenced_blocks(text):
        outside.append((pos, start))
        pos = end
        body = text[body_start:body_end]
        n_lines = body.count("\n") + 1
        long_enough = _utf8_len(body) >= min_bytes or n_lines >= min_lines
        kind = classify_block(body) if long_enough or n_lines >= TRACE_MIN_LINES else "code"
        if long_enough or (kind == "stack_trace" and n_lines >= TRACE_MIN_LINES):
            blocks.append(Block(start, end, kind, n_lines))
    outside.append((pos, len(text)))
    for seg_start, seg_end in outside:
        blocks.extend(_trace_runs(text, seg_start, seg_end, min_bytes, min_lines))
    return sorted(blocks, key=lambda b: b.start)


def _trace_runs(
    text: str, seg_start: int, seg_end: int, min_bytes: int, min_lines: int
) -> list[Block]:
    """Runs of consecutive stack-trace lines in ``text[seg_start:seg_end]`` that are at
    least 3 lines long and hold ``min_bytes`` bytes or ``min(min_lines, TRACE_MIN_LINES)``
    lines."""
    runs: list[Block] = []
    run: list[int] = []  # start, end, lines of the open run
    pos = seg_start
    for line in text[seg_start:seg_end].splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        if _TRACE_LINE.match(line.rstrip("\r\n")):
            run = [run[0], pos, run[2] + 1] if run else [start, pos, 1]
            continue
        if run:
            runs.append(Block(run[0], run[1], "stack_trace", run[2]))
            run = []
    if run:
        runs.append(Block(run[0], run[1], "stack_trace", run[2]))
    return [
        b
        for b in runs
        if b.lines >= 3
        and (
            _utf8_len(text[b.start : b.end]) >= min_bytes
            or b.lines >= min(min_lines, TRACE_MIN_LINES)
        )
    ]


# -- sentences: hypotheses and expectations -------------------------------------------

# A sentence (or line) runs to a newline, or to a run of ".!?" that ends the text or is
# followed by white space: the dots in "2.4.1", "core.js" or "https://example.org/a.b"
# are inside a sentence, not ends of one.
_SENTENCE = re.compile(r"(?:[^.!?\n]+|[.!?]+(?=[^.!?\s]))+(?:[.!?]+|$)", re.M)
# A line quoted from another message (Markdown and mail quoting, as in Bugzilla's "In reply
# to" comments): its sentences are not the hypotheses or expectations of the record's
# author, who only quotes them.
_QUOTED_LINE = re.compile(r"[ \t]*>")
# The hint patterns are matched in the lower-cased sentence (a case-insensitive pattern
# costs re about three times as much on long texts).
_HYPOTHESIS = re.compile(
    r"\b(?:i think|i believe|i suspect|i guess|my guess|my theory|maybe|perhaps|probably"
    r"|possibly|might be|may be (?:caused|due|related|because)|could be (?:caused|due|related"
    r"|because|a)|seems? (?:like|to be)|looks like|likely|suspect|caused by|the cause"
    r"|root cause|because of)\b"
)
_EXPECTATION = re.compile(
    r"\b(?:should(?:n't| not)?|expected|i expect|would expect|supposed to|instead of"
    r"|ought to|intended to)\b"
)
MIN_HYPOTHESIS_WORDS = 3  # words besides the hint: "I think 🤔" or "Probably." say nothing
_WORD = re.compile(r"[^\W_]+")


def sentences(text: str, keep: Callable[[str], bool] | None = None) -> list[tuple[str, int, int]]:
    """(sentence, start, end) for each sentence or line of ``text`` of at least 8
    characters, stripped, leaving out those that start inside a fenced block, those on a
    quoted line (``>``) and those that look like a stack-trace frame; ``keep``, when
    given, selects further.

    Fences are looked for only in a text that holds three backticks (as the rule was
    first written; a text fenced with tildes alone has its sentences read)."""
    fences = [(a, b) for a, b, _, _ in fenced_blocks(text)] if "```" in text else []
    out: list[tuple[str, int, int]] = []
    for m in _SENTENCE.finditer(text):
        raw = m.group(0)
        stripped = raw.strip()
        if len(stripped) < 8 or (keep is not None and not keep(stripped)):
            continue
        start = m.start() + len(raw) - len(raw.lstrip())
        if any(a <= start < b for a, b in fences):
            continue
        if _QUOTED_LINE.match(text, text.rfind("\n", 0, start) + 1):
            continue
        if _TRACE_LINE.match(stripped):
            continue
        out.append((stripped, start, start + len(stripped)))
    return out


def is_hypothesis(sentence: str) -> bool:
    """A sentence with a hypothesis hint ("I think", "probably", "caused by", ...) and at
    least ``MIN_HYPOTHESIS_WORDS`` words besides the hint itself (a bare "I think",
    "maybe so" or an emoji is no claim)."""
    match = _HYPOTHESIS.search(sentence.lower())
    if match is None:
        return False
    words = len(_WORD.findall(sentence)) - len(_WORD.findall(match.group(0)))
    return words >= MIN_HYPOTHESIS_WORDS


def is_expectation(sentence: str) -> bool:
    """A sentence with an expectation word ("should", "expected", "supposed to", ...)."""
    return _EXPECTATION.search(sentence.lower()) is not None


# A question asks about the intended behaviour and a wish asks for a change; neither
# states what is intended, so neither becomes an implied expectation. A question is a
# sentence that ends with "?" or opens with an auxiliary or question word ("Is this
# intended", "Could it keep the name", "Why does it ..."), since reports often drop
# the question mark; a wish says "it would be nice/great/good/better", "I wish", "I'd like".
# ("What/When/How ... should" opens statements too, "Should not crash." states one: those
# are not in the list.)
_QUESTION_START = re.compile(
    r"(?:is|are|was|were|isn't|aren't|does|doesn't|did|didn't|can|can't|could|couldn't"
    r"|why|would it|am i|any idea)\b"
)
_WISH = re.compile(
    r"\b(?:would be (?:nice|great|good|better|helpful|useful|cool)|i wish|i'd like"
    r"|i would like|it'd be (?:nice|great|good))\b"
)


def is_question(sentence: str) -> bool:
    """A question: it ends with "?", or opens with a question or auxiliary word and does
    not end with a full stop or "!" ("Does not crash." and "Can be reopened." in an
    Expected section state what is intended)."""
    text = sentence.strip()
    if text.endswith("?"):
        return True
    return not text.endswith((".", "!")) and _QUESTION_START.match(text.lower()) is not None


def is_wish(sentence: str) -> bool:
    """A wish ("it would be nice if ...", "I'd like ..."), not a stated expectation."""
    return _WISH.search(sentence.lower()) is not None


# A hedge: the writer is not sure of what they say ("I think it should reset", "maybe it
# is meant to", "probably", "not sure"). Narrower than the hypothesis hints: "caused by"
# or "looks like" speak of a cause, not of how sure one is of the intended behaviour.
_HEDGE = re.compile(
    r"\b(?:i think|i believe|i guess|i suppose|i assume|i'm not sure|i am not sure"
    r"|not sure|unsure|not certain|i don't know|i do not know|i wonder|maybe|perhaps"
    r"|probably|possibly|presumably|might|could be|afaik|iirc|if i'm not mistaken"
    r"|i'd say)\b"
)

# How a sentence words an expectation (expectation_wording); one rule wherever the
# sentence appears (docs/decisions/0102-a-hedged-expectation-is-never-stated.md).
STATED = "stated"
HEDGED = "hedged"
NOT_STATED = "not_stated"


def is_hedged(sentence: str) -> bool:
    """A hedged sentence: "I think", "maybe", "probably", "not sure", "might" ..."""
    return _HEDGE.search(sentence.lower()) is not None


def expectation_wording(sentence: str) -> str:
    """How ``sentence`` words what is intended, wherever it appears (free text or a
    template's Expected section):

    - ``NOT_STATED``: a question (:func:`is_question`) or a wish (:func:`is_wish`): it
      asks what is intended or for a change, and states nothing;
    - ``HEDGED``: the writer is unsure (:func:`is_hedged`): at most an implied
      expectation, never a stated one;
    - ``STATED``: anything else.

    Free text gives implied expectations only (a sentence with an expectation word,
    :func:`is_expectation`, worded ``STATED`` or ``HEDGED``); an Expected section is
    stated when one of its sentences is ``STATED`` (:func:`section_wording`)."""
    if is_question(sentence) or is_wish(sentence):
        return NOT_STATED
    if is_hedged(sentence):
        return HEDGED
    return STATED


def section_wording(text: str) -> str:
    """The wording of a template's Expected section: ``STATED`` when one of its sentences
    is, else ``HEDGED`` when one is hedged, else ``NOT_STATED`` (only questions and
    wishes). A section with no sentence of 8 characters is judged as one sentence."""
    found = [s for s, _, _ in sentences(text)] or [text.strip()]
    kinds = {expectation_wording(s) for s in found}
    for kind in (STATED, HEDGED):
        if kind in kinds:
            return kind
    return NOT_STATED


def hypothesis_sentences(text: str) -> list[tuple[str, int, int]]:
    """The sentences of ``text`` that state a hypothesis (:func:`is_hypothesis`)."""
    if _HYPOTHESIS.search(text.lower()) is None:
        return []  # a sentence is a piece of the text: no hint in the text, none in one
    return sentences(text, is_hypothesis)


def expectation_sentences(text: str) -> list[tuple[str, int, int]]:
    """The sentences of ``text`` that state an expectation (:func:`is_expectation`)."""
    if _EXPECTATION.search(text.lower()) is None:
        return []  # as for hypotheses
    return sentences(text, is_expectation)
