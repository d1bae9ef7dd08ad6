"""Deterministic, escaped Markdown rendering of an accepted interpretation.

The JSON wrapper is authoritative; this is a pure rendering of it with no additional
interpretation: the same wrapper always gives the same bytes. Every piece of text that
came from the model or the case is escaped so that it renders as literal text:

- Markdown punctuation (``\\ ` * _ { } [ ] ( ) # + - . ! | ~``) gets a backslash;
- ``&``, ``<`` and ``>`` become HTML entities, so no raw HTML or autolink survives;
- runs of whitespace (newlines included) become one space, so no text can start a
  heading, list, quote, fence or table row of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_PUNCTUATION = frozenset("\\`*_{}[]()#+-.!|~")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_WHITESPACE = re.compile(r"\s+")

SECTION_TITLES: Sequence[tuple[str, str]] = (
    ("observed_behavior", "Observed behaviour"),
    ("expected_behavior", "Expected behaviour"),
    ("tester_assumptions", "Tester assumptions"),
    ("confirmed_technical_facts", "Confirmed technical facts"),
    ("behavior_gap", "Behaviour gap"),
    ("first_known_divergence", "First known divergence"),
    ("failure_stage", "Failure stage"),
    ("contradictions", "Contradictions"),
    ("unknowns", "Unknowns"),
    ("relevant_entities", "Relevant entities"),
    ("investigation_direction", "Investigation direction"),
    ("interpretation_summary", "Interpretation summary"),
)


def _escape_table() -> dict[int, str]:
    table: dict[int, str] = {ord(c): "\\" + c for c in _PUNCTUATION}
    table.update({ord(c): entity for c, entity in _ENTITIES.items()})
    for code in [*range(0x20), *range(0x7F, 0xA0)]:
        table[code] = f"&#{code};"
    return table


_ESCAPES = _escape_table()


def escape(text: object) -> str:
    """Literal-text Markdown for any value (``None`` renders as an empty string)."""
    if text is None:
        return ""
    return _WHITESPACE.sub(" ", str(text)).strip().translate(_ESCAPES)


def _sources(source_ids: Iterable[str]) -> str:
    return ", ".join(escape(s) for s in source_ids)


def _statement(statement: Mapping[str, Any]) -> str:
    return f"{escape(statement['text'])} (sources: {_sources(statement['source_ids'])})"


def _section(key: str, value: Any) -> list[str]:
    if key == "relevant_entities":
        if not value:
            return ["None."]
        return [f"- {escape(item['entity_id'])}: {escape(item['role'])}" for item in value]
    if value is None:
        return ["None."]
    if isinstance(value, list):
        if not value:
            return ["None."]
        return [f"- {_statement(item)}" for item in value]
    return [_statement(value)]


HEADER_FIELDS: Sequence[tuple[str, str]] = (
    ("case_id", "Case"),
    ("package_id", "Package"),
    ("analysis_revision", "Analysis revision"),
    ("interpretation_index", "Interpretation"),
    ("attempt_id", "Attempt"),
    ("case_sha256", "Case SHA-256"),
    ("context_sha256", "Context SHA-256"),
    ("llm_outcome_ref", "Gateway round"),
    ("provider", "Provider"),
    ("model", "Model"),
    ("prompt_version", "Prompt"),
)


def render_markdown(wrapper: Mapping[str, Any]) -> str:
    """The Markdown of an accepted interpretation wrapper (see ``interpreter.py``)."""
    lines = ["# Case interpretation", ""]
    for key, label in HEADER_FIELDS:
        lines.append(f"- {label}: {escape(wrapper.get(key))}")
    expected = wrapper.get("expected_behavior_status", {})
    lines.append(f"- Expected behaviour completeness: {escape(expected.get('completeness'))}")
    lines.append(f"- Expected behaviour provenance: {escape(expected.get('provenance'))}")
    lines.append("")
    output = wrapper["interpretation"]
    for key, title in SECTION_TITLES:
        lines += [f"## {title}", "", *_section(key, output[key]), ""]
    lines += [
        "## Cited sources",
        "",
    ]
    sources = wrapper.get("sources", {})
    if not sources:
        lines.append("None.")
    for source_id in sorted(sources):
        entry = sources[source_id]
        details = ", ".join(
            f"{escape(name)}: {escape(entry.get(name))}"
            for name in ("kind", "origin", "author", "timestamp", "pointer")
            if entry.get(name) not in (None, "")
        )
        lines.append(f"- {escape(source_id)}: {details}")
    lines.append("")
    return "\n".join(lines)
