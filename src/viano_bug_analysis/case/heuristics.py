"""Text heuristics of CaseBuilder: unread blocks, hypotheses, expectations, entities.

These are deliberately simple, documented pattern rules (docs/viano.md lists them). They
classify supplied text; they never decide anything about a cause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# -- unread blocks (long logs, stack traces, long code) ---------------------------------

_FENCED = re.compile(r"(?m)^[ \t]*(```|~~~)[^\n]*\n(?P<body>.*?)(?:^[ \t]*\1[ \t\r]*$|\Z)", re.S)
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
    """Label a block by its first lines (a label only; the block stays unread)."""
    lines = [ln for ln in text[: 200 * _CLASSIFY_SAMPLE_LINES].splitlines() if ln.strip()]
    lines = lines[:_CLASSIFY_SAMPLE_LINES]
    if not lines:
        return "code"
    trace = sum(1 for ln in lines if _TRACE_LINE.match(ln))
    if trace >= 3 and trace * 3 >= len(lines):
        return "stack_trace"
    logish = sum(1 for ln in lines if _LOGISH.search(ln))
    return "log" if logish * 4 >= len(lines) else "code"


def find_unread_blocks(text: str, min_bytes: int, min_lines: int) -> list[Block]:
    """Long fenced blocks and long runs of stack-trace lines outside fences."""
    blocks: list[Block] = []
    covered: list[tuple[int, int]] = []
    for m in _FENCED.finditer(text) if ("```" in text or "~~~" in text) else ():
        body = m.group("body")
        covered.append((m.start(), m.end()))
        n_lines = body.count("\n") + 1
        long_enough = len(body.encode("utf-8")) >= min_bytes or n_lines >= min_lines
        kind = _classify(body) if long_enough or n_lines >= TRACE_MIN_LINES else "code"
        if long_enough or (kind == "stack_trace" and n_lines >= TRACE_MIN_LINES):
            blocks.append(Block(m.start(), m.end(), kind, n_lines))
    # stack-trace runs outside fences (skipped when no line can be a trace line)
    if "\n" not in text or not (
        any(hint in text for hint in _TRACE_HINTS) or _TRACE_FILE_HINT.search(text)
    ):
        return sorted(blocks, key=lambda b: b.start)
    segments: list[tuple[int, int]] = []
    pos = 0
    for a, b in covered:
        segments.append((pos, a))
        pos = b
    segments.append((pos, len(text)))
    for seg_start, seg_end in segments:
        _trace_runs(text, seg_start, seg_end, min_bytes, min_lines, blocks)
    return sorted(blocks, key=lambda b: b.start)


def _trace_runs(
    text: str, seg_start: int, seg_end: int, min_bytes: int, min_lines: int, out: list[Block]
) -> None:
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
    if n >= 3 and (len(chunk.encode("utf-8")) >= min_bytes or n >= min(min_lines, TRACE_MIN_LINES)):
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


def sentences(text: str) -> list[tuple[str, int, int]]:
    """(sentence, start, end) for each non-trivial sentence or line of ``text``, leaving
    out fenced code and lines that look like stack-trace frames."""
    fences = [(m.start(), m.end()) for m in _FENCED.finditer(text)] if "```" in text else []
    out: list[tuple[str, int, int]] = []
    for m in _SENTENCE.finditer(text):
        raw = m.group(0)
        stripped = raw.strip()
        if len(stripped) < 8 or _TRACE_LINE.match(stripped):
            continue
        lead = len(raw) - len(raw.lstrip())
        start = m.start() + lead
        if any(a <= start < b for a, b in fences):
            continue
        out.append((stripped, start, start + len(stripped)))
    return out


_HYPOTHESIS_HINTS = (
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
    "caused by",
    "cause",
    "because of",
)
_EXPECTATION_HINTS = ("should", "expect", "supposed to", "instead of", "ought to", "intended")


def may_hold_hypothesis(text: str) -> bool:
    """Cheap pre-check (substring scan) before sentence-level matching."""
    low = text.lower()
    return any(h in low for h in _HYPOTHESIS_HINTS)


def may_hold_expectation(text: str) -> bool:
    low = text.lower()
    return any(h in low for h in _EXPECTATION_HINTS)


def is_hypothesis(sentence: str) -> bool:
    return bool(_HYPOTHESIS.search(sentence))


def is_expectation(sentence: str) -> bool:
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
_ERROR_CODE_STOP = {"EACH", "ELSE", "EDIT", "EVEN", "EVER", "EXIT", "ETC", "EVERY", "EXACT"}


def extract_entities(text: str) -> list[tuple[str, str]]:
    """(entity_type, value) pairs found in ``text`` (unordered, may repeat)."""
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
