"""The normalised intake document every raw-input parser produces.

Parsers (native Viano intake JSON, GitHub issue, Bugzilla bug, Markdown) turn the raw
bytes of one ``original/`` member into an :class:`IntakeDocument`. Every piece of text
keeps a :class:`Source`: the member, the RFC 6901 JSON pointer into it (``None`` for
Markdown), the character span inside the pointed string, the author, the timestamp and
the origin. CaseBuilder turns the document into canonical-case records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ORIGINS = ("original", "tester", "external_research", "combined")


def json_pointer(*parts: str | int) -> str:
    """RFC 6901 pointer from path parts (``~`` and ``/`` escaped)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


@dataclass(frozen=True)
class Source:
    member: str
    pointer: str | None
    author: str | None = None
    timestamp: str | None = None
    origin: str = "original"
    role: str = "reporter"  # reporter | commenter | tester | maintainer | system | research
    span: tuple[int, int] | None = None  # character offsets inside the pointed string

    def with_span(self, start: int, end: int) -> Source:
        base = self.span[0] if self.span else 0
        return Source(
            self.member,
            self.pointer,
            self.author,
            self.timestamp,
            self.origin,
            self.role,
            (base + start, base + end),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "member": self.member,
            "json_pointer": self.pointer,
            "author": self.author,
            "timestamp": self.timestamp,
            "origin": self.origin,
            "role": self.role,
        }
        if self.span is not None:
            out["span"] = [self.span[0], self.span[1]]
        return out


@dataclass(frozen=True)
class Item:
    """A piece of text with its source. ``extra`` holds kind-specific fields."""

    text: str
    source: Source
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Fact:
    """A technical fact: an inline ``value`` or a reference to unread data."""

    name: str
    source: Source
    value: str | None = None
    ref: Reference | None = None


@dataclass(frozen=True)
class Reference:
    """Metadata of data that stays unread (attachment, log, runtime/source/database data,
    external research). ``member`` is set when the bytes are inside the package."""

    # attachment, log, stack_trace, runtime, source, database, external_research, url
    kind: str
    source: Source
    description: str = ""
    member: str | None = None
    uri: str | None = None
    size: int | None = None
    sha256: str | None = None
    media_type: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EntityHint:
    """An entity a parser knows from a structured field (product, component, version)."""

    entity_type: str  # component | version | endpoint | file | error_code
    value: str
    source: Source


@dataclass
class IntakeDocument:
    """What a parser found in one raw input."""

    format: str
    member: str
    titles: list[Item] = field(default_factory=list)
    summaries: list[Item] = field(default_factory=list)
    observations: list[Item] = field(default_factory=list)  # extra["section"]
    expectations: list[Item] = field(default_factory=list)  # extra["explicit"]: bool
    steps: list[Item] = field(default_factory=list)
    comments: list[Item] = field(default_factory=list)
    hypotheses: list[Item] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    reproductions: list[Item] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    entities: list[EntityHint] = field(default_factory=list)
    identity: dict[str, str] = field(default_factory=dict)  # suggested case_id etc.
