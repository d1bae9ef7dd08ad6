"""CaseBuilder's text rules as first written, kept as test oracles.

``viano_bug_analysis.case.heuristics`` and ``.entities`` run these rules in faster
forms (candidate starts, Rust pre-checks, early stops). The plain forms below, each
pattern run over the whole text, are what the tests compare them with, on generated and
on real texts; they are not used by the package.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from viano_bug_analysis.case import entities as ent
from viano_bug_analysis.case import heuristics as h
from viano_bug_analysis.case.textscan import LiteralScan

# -- unread blocks, sentences, hypotheses ---------------------------------------------------


def classify_reference(text: str) -> str:
    """The block label as first written (kept for the tests)."""
    lines = [ln for ln in text[: 200 * h._CLASSIFY_SAMPLE_LINES].splitlines() if ln.strip()]
    lines = lines[: h._CLASSIFY_SAMPLE_LINES]
    if not lines:
        return "code"
    trace = sum(1 for ln in lines if h._TRACE_LINE.match(ln))
    if trace >= 3 and trace * 3 >= len(lines):
        return "stack_trace"
    logish = sum(1 for ln in lines if h._LOGISH.search(ln))
    return "log" if logish * 4 >= len(lines) else "code"


def trace_runs_reference(
    text: str, seg_start: int, seg_end: int, min_bytes: int, min_lines: int, out: list[h.Block]
) -> None:
    """Runs of stack-trace lines in ``text[seg_start:seg_end]`` as first written: the
    trace-line pattern asked of every line."""
    pos = seg_start
    run_start = run_end = -1
    run_lines = 0
    for line in text[seg_start:seg_end].splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        if h._TRACE_LINE.match(line.rstrip("\r\n")):
            if run_start < 0:
                run_start, run_lines = start, 0
            run_end = pos
            run_lines += 1
            continue
        if run_start >= 0:
            h._close_run(text, run_start, run_end, run_lines, min_bytes, min_lines, out)
            run_start = -1
    if run_start >= 0:
        h._close_run(text, run_start, run_end, run_lines, min_bytes, min_lines, out)


def sentences_reference(
    text: str, keep: Callable[[str], bool] | None = None
) -> list[tuple[str, int, int]]:
    """:func:`sentences` as first written: ``keep`` before the frame and fence checks
    (kept for the tests)."""
    fences = [(a, b) for a, b, _, _ in h.fenced_blocks(text)] if h._find(text, "```") >= 0 else []
    out: list[tuple[str, int, int]] = []
    for m in h._SENTENCE.finditer(text):
        _add_sentence_reference(m, fences, keep, out)
    return out


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
    if h._TRACE_LINE.match(stripped):
        return
    lead = len(raw) - len(raw.lstrip())
    start = m.start() + lead
    if any(a <= start < b for a, b in fences):
        return
    line = m.string[: m.start() + lead].split("\n")[-1] + stripped
    if line.lstrip(" \t").startswith(">"):
        return  # a quoted line
    out.append((stripped, start, start + len(stripped)))


def hinted_sentences_reference(
    text: str,
    hints: tuple[str, ...],
    keep: Callable[[str], bool],
    scan: LiteralScan | None = None,
) -> list[tuple[str, int, int]]:
    """What :func:`hinted_sentences` promises: ``sentences(text, keep)`` (``keep`` is
    only ever true for a sentence holding one of ``hints``; ``scan`` is not needed)."""
    return sentences_reference(text, keep)


def is_hypothesis_reference(sentence: str) -> bool:
    """:func:`is_hypothesis` as first written (kept for the tests)."""
    if sentence.isascii() and not h.may_hold_hypothesis(sentence):
        return False
    match = h._HYPOTHESIS.search(sentence)
    if match is None:
        return False
    words = len(h._WORD.findall(sentence)) - len(h._WORD.findall(match.group(0)))
    return words >= h.MIN_HYPOTHESIS_WORDS


# -- entities -------------------------------------------------------------------------------

_ENTITY_SCAN = LiteralScan(ent._ENTITY_LITERALS)
_ERROR_E_HINT = re.compile(r"E[A-Z]{3}")


def may_hold_entities_reference(text: str) -> bool:
    """:func:`may_hold_entities` as first written (kept for the tests)."""
    if not text.isascii():
        return True
    return _ENTITY_SCAN.any_in(text) or _ERROR_E_HINT.search(text) is not None


def extract_entities_reference(text: str) -> list[tuple[str, str]]:
    """:func:`extract_entities` with the entity rules as first written (for the tests)."""
    return _extract_entities_reference(text) if ent.may_hold_entities(text) else []


def _extract_entities_reference(text: str) -> list[tuple[str, str]]:
    """The entity rules as first written: each pattern's ``finditer`` over the whole
    text (kept for the tests; :func:`_extract_entities` gives the same list)."""
    found: list[tuple[str, str]] = []
    no_urls = text
    if "://" in text:
        for m in ent._URL.finditer(text):
            found.append(("endpoint", m.group(0).rstrip(".,;:!?")))
        no_urls = ent._URL.sub(" ", text)
    if any(verb in no_urls for verb in ent._HTTP_VERBS):
        for m in ent._HTTP_PATH.finditer(no_urls):
            found.append(("endpoint", m.group(0)))
    if ent._DIGIT_DOT.search(no_urls):
        without_pkg = no_urls
        if "@" in no_urls:
            for m in ent._PKG_VERSION.finditer(no_urls):
                found.append(("component", m.group("name")))
                found.append(("version", f"{m.group('name')}@{m.group('ver')}"))
            without_pkg = ent._PKG_VERSION.sub(" ", no_urls)
        named = set()
        for m in ent._NAMED_VERSION.finditer(no_urls):
            found.append(("version", f"{m.group('name')} {m.group('ver')}"))
            named.add(m.group("ver"))
        for m in ent._BARE_VERSION.finditer(without_pkg):
            if m.group("ver") not in named:
                found.append(("version", m.group("ver")))
    if ent._FILE_HINT.search(no_urls):
        for m in ent._FILE.finditer(no_urls):
            value = m.group("f")
            if value.lower() not in ent._FILE_STOP and not re.fullmatch(
                r"[\d.]+", value.rsplit(".", 1)[0]
            ):
                found.append(("file", value))
    if any(hint in no_urls for hint in ent._ERROR_HINTS) or _ERROR_E_HINT.search(no_urls):
        for m in ent._ERROR_CODE.finditer(no_urls):
            if m.group("e") not in ent._ERROR_CODE_STOP:
                found.append(("error_code", m.group("e")))
    return found
