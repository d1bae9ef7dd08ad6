"""Turn a free-text report body into intake items (shared by every report parser)."""

from __future__ import annotations

import re

from viano_bug_analysis.intake.model import Fact, IntakeDocument, Item, Source
from viano_bug_analysis.intake.sections import split_sections, split_steps

_HTML_COMMENT_FACT = re.compile(r"<!--\s*@(?P<k>[\w.-]{1,40}):\s*(?P<v>.*?)\s*-->")
_KV_LINE = re.compile(r"^\s*(?:[-*+]\s+)?(?P<k>[^:\n]{1,60}):\s*(?P<v>\S.{0,300})$")
_PLACEHOLDER = re.compile(r"^\s*(?:<!--.*?-->\s*)*$", re.S)


def _strip_comments(text: str) -> str:
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def apply_body(doc: IntakeDocument, body: str, source: Source) -> None:
    """Split ``body`` into sections and append observations, expectations, steps,
    environment facts and description summaries to ``doc``."""
    for m in _HTML_COMMENT_FACT.finditer(body):
        doc.facts.append(
            Fact(
                name=m.group("k"),
                value=m.group("v"),
                source=source.with_span(m.start(), m.end()),
            )
        )
    for section in split_sections(body):
        raw = section.text(body)
        if _PLACEHOLDER.match(raw):
            if section.kind == "expected":
                # An explicit but empty "Expected" heading is recorded as present-but-empty.
                doc.expectations.append(
                    Item("", source.with_span(section.start, section.end), {"explicit": True})
                )
            continue
        lead = len(raw) - len(raw.lstrip())
        text = raw.strip()
        span = source.with_span(section.start + lead, section.start + lead + len(text))
        heading = section.heading
        if section.kind == "steps":
            steps = split_steps(raw, section.start)
            for step_text, s, e in steps:
                doc.steps.append(Item(step_text, source.with_span(s, e), {"heading": heading}))
            doc.reproductions.append(Item(text, span, {"heading": heading}))
        elif section.kind == "expected":
            doc.expectations.append(Item(text, span, {"explicit": True, "heading": heading}))
        elif section.kind == "environment":
            _environment_facts(doc, raw, section.start, heading, source)
        elif section.kind == "actual":
            doc.observations.append(Item(text, span, {"heading": heading, "section": "actual"}))
        else:
            doc.observations.append(
                Item(text, span, {"heading": heading, "section": "description"})
            )


def _environment_facts(
    doc: IntakeDocument, raw: str, base: int, heading: str | None, source: Source
) -> None:
    stripped = _strip_comments(raw).strip()
    if stripped and "\n" not in stripped and len(stripped) <= 300 and heading:
        start = raw.index(stripped[:1]) if stripped else 0
        doc.facts.append(
            Fact(
                name=heading,
                value=stripped,
                source=source.with_span(base + start, base + start + len(stripped)),
            )
        )
        return
    pos = 0
    found = False
    for line in raw.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        m = _KV_LINE.match(line.rstrip("\r\n"))
        if m:
            found = True
            doc.facts.append(
                Fact(
                    name=m.group("k").strip(" *`"),
                    value=m.group("v").strip(),
                    source=source.with_span(base + start, base + start + len(line.rstrip())),
                )
            )
    if not found and stripped:
        lead = len(raw) - len(raw.lstrip())
        doc.facts.append(
            Fact(
                name=heading or "environment",
                value=raw.strip(),
                source=source.with_span(base + lead, base + lead + len(raw.strip())),
            )
        )
