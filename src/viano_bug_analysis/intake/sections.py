"""Split a free-text bug-report body into labelled sections and steps.

Recognised headings: Markdown ``#`` headings, bold headings (``**Steps to Reproduce**:``,
``**Expected behavior**``) and short plain lines ending in a colon whose words name a
known section (``Actual results:``). Headings inside fenced code blocks are ignored.
Section kinds: ``steps``, ``expected``, ``actual``, ``environment``, ``description``
(everything else, including text before the first heading). Offsets are character
offsets into the body, so provenance can point at the exact span.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^\s*(```|~~~)")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<h>.+?)\s*#*\s*$")
_BOLD_HEADING = re.compile(r"^\s*\*\*(?P<h>[^*\n]{1,80}?)(?::\*\*|\*\*\s*:?)\s*(?P<rest>.*)$")
_PLAIN_HEADING = re.compile(r"^\s*(?P<h>[A-Za-z][A-Za-z /()'-]{1,40}):\s*(?P<rest>.*)$")
_STEP_LINE = re.compile(r"^\s*(?:\d+[.)]|[-*+]|step\s*\d+\s*[:.)-]?)\s+(?P<t>\S.*)$", re.I)

_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("expected", re.compile(r"\bexpect|\bdesired\b|\bshould happen\b|\bintended\b", re.I)),
    (
        "steps",
        re.compile(r"\bsteps?\b|\breproduc|\brepro\b|\bstr\b|\bhow to\b|\bto reproduce", re.I),
    ),
    (
        "actual",
        re.compile(
            r"\bactual|\bcurrent behaviou?r|\bwhat happen|\bobserved|\bdescribe the bug"
            r"|\bbug description|\bproblem\b|\bdescription\b|\bresults?\b",
            re.I,
        ),
    ),
    (
        "environment",
        re.compile(
            r"\benvironment|\bversions?\b|\bsystem\b|\bplatform|\bbrowser\b|\boperating"
            r"|\bos\b|\bconfiguration|\bsetup\b|\bbuild id\b|\buser agent\b",
            re.I,
        ),
    ),
)


@dataclass(frozen=True)
class Section:
    kind: str  # steps | expected | actual | environment | description
    heading: str | None
    start: int  # content start (after the heading)
    end: int

    def text(self, body: str) -> str:
        return body[self.start : self.end]


def classify_heading(heading: str) -> str | None:
    for kind, pattern in _KINDS:
        if pattern.search(heading):
            return kind
    return None


def split_sections(body: str) -> list[Section]:
    """Sections of ``body`` in order; empty sections are kept (they say "present")."""
    sections: list[Section] = []
    current_kind, current_heading, current_start = "description", None, 0
    in_fence = False
    pos = 0
    for line in body.splitlines(keepends=True):
        line_start, pos = pos, pos + len(line)
        stripped = line.rstrip("\r\n")
        if _FENCE.match(stripped):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading, rest_offset = _heading(stripped)
        if heading is None:
            continue
        kind = classify_heading(heading)
        explicit = _MD_HEADING.match(stripped) or _BOLD_HEADING.match(stripped)
        if kind is None and not explicit:
            continue
        sections.append(Section(current_kind, current_heading, current_start, line_start))
        current_kind = kind or "description"
        current_heading = heading
        current_start = line_start + rest_offset if rest_offset is not None else pos
    sections.append(Section(current_kind, current_heading, current_start, len(body)))
    return [s for s in sections if s.heading is not None or body[s.start : s.end].strip()]


def _heading(line: str) -> tuple[str | None, int | None]:
    """(heading text, offset of same-line content or None)."""
    m = _MD_HEADING.match(line)
    if m:
        return m.group("h").strip("*_ :"), None
    m = _BOLD_HEADING.match(line)
    if m:
        rest = m.group("rest")
        return m.group("h").strip(" :"), (m.start("rest") if rest.strip() else None)
    m = _PLAIN_HEADING.match(line)
    if m and classify_heading(m.group("h")) is not None:
        rest = m.group("rest")
        if rest.strip() and len(rest) > 120:
            return None, None
        return m.group("h").strip(), (m.start("rest") if rest.strip() else None)
    return None, None


def split_steps(text: str, base: int = 0) -> list[tuple[str, int, int]]:
    """Individual steps of a steps section: its list items (``1.``, ``-``, ``Step 2:``),
    or else its paragraphs. Lines inside fenced code blocks are never steps.

    Returns (step text, start, end) with offsets relative to ``base``."""
    lines: list[tuple[str, int, int]] = []  # outside fences; "" marks a paragraph break
    pos = 0
    in_fence = False
    for line in text.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        raw = line.rstrip("\r\n")
        if _FENCE.match(raw):
            in_fence = not in_fence
            lines.append(("", start, start))
            continue
        if in_fence or not raw.strip():
            lines.append(("", start, start))
            continue
        lines.append((raw, start, start + len(raw)))
    items = [(m.group("t").strip(), s, e) for raw, s, e in lines if (m := _STEP_LINE.match(raw))]
    if items:
        return [(t, base + s, base + e) for t, s, e in items if t and not t.startswith("<!--")]
    steps: list[tuple[str, int, int]] = []
    para: list[tuple[str, int, int]] = []
    for raw, s, e in [*lines, ("", 0, 0)]:
        if raw:
            para.append((raw, s, e))
        elif para:
            first, last = para[0][1], para[-1][2]
            steps.append((text[first:last].strip(), base + first, base + last))
            para = []
    return [(t, s, e) for t, s, e in steps if t and not t.startswith("<!--")]
