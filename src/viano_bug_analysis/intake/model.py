"""The normalised intake document every raw-input parser produces.

Parsers (native Viano intake JSON, GitHub issue, Bugzilla bug, Markdown) turn the raw
bytes of one ``original/`` member into an :class:`IntakeDocument`. Every piece of text
keeps a :class:`Source`: the member, the RFC 6901 JSON pointer into it (``None`` for
Markdown), the character span inside the pointed string, the author, the timestamp and
the origin. CaseBuilder turns the document into canonical-case records.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

ORIGINS = ("original", "tester", "external_research", "combined")
_object_new = object.__new__
_object_setattr = object.__setattr__


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


def make_source(
    member: str,
    pointer: str | None,
    author: str | None,
    timestamp: str | None,
    origin: str,
    role: str,
) -> Source:
    """``Source(member, pointer, author, timestamp, origin, role)``: the same object,
    built without the frozen dataclass ``__init__`` (one attribute set per field, about
    three times the cost). For parsers making one per piece of text."""
    source = _object_new(Source)
    _object_setattr(
        source,
        "__dict__",
        {
            "member": member,
            "pointer": pointer,
            "author": author,
            "timestamp": timestamp,
            "origin": origin,
            "role": role,
            "span": None,
        },
    )
    return source


def make_item(text: str, source: Source, extra: dict[str, Any] | None = None) -> Item:
    """``Item(text, source, extra)`` (a new empty ``extra`` when None), built like
    :func:`make_source`."""
    item = _object_new(Item)
    _object_setattr(
        item, "__dict__", {"text": text, "source": source, "extra": {} if extra is None else extra}
    )
    return item


@dataclass(frozen=True)
class RawItems:
    """A list of pieces of text still held as the parsed JSON values of a native intake
    list (``/observations``, ``/comments``), for :class:`IntakeDocument` to turn into
    Items only when they are asked for (CaseBuilder reads the values directly).

    The parser checked every value: a string, or an object with a string ``text``, an
    ``author`` and ``timestamp`` that are strings, null or absent, no ``origin`` other
    than ``"original"`` and no ``source_uri`` or ``heading``. The Items are those the
    parser makes of such values: value ``i`` points at ``pointer_prefix + str(i)`` (a
    string) or that plus ``/text`` (an object), a string has ``author`` and ``created``,
    an object its own author and timestamp or ``author`` and ``stamp``; origin
    ``original``, ``role``, no extra fields."""

    values: list[Any]
    member: str
    pointer_prefix: str
    role: str
    author: str | None
    created: str | None
    stamp: str | None

    def rows(self) -> Iterator[tuple[str, str, str | None, str | None]]:
        """(text, pointer, author, timestamp) of each value, in order."""
        prefix, author, created, stamp = self.pointer_prefix, self.author, self.created, self.stamp
        for i, v in enumerate(self.values):
            if isinstance(v, str):
                yield v, prefix + str(i), author, created
            else:
                yield (
                    v["text"],
                    prefix + str(i) + "/text",
                    v.get("author", author),
                    v.get("timestamp", stamp),
                )

    def items(self) -> list[Item]:
        member, role = self.member, self.role
        return [
            make_item(text, make_source(member, pointer, author, stamp, "original", role))
            for text, pointer, author, stamp in self.rows()
        ]


@dataclass
class IntakeDocument:
    """What a parser found in one raw input. ``observations`` and ``comments`` may be
    held as :class:`RawItems` (``set_raw_observations``/``set_raw_comments``, native
    intake): reading the attribute turns them into Items then; ``raw_observations()``/
    ``raw_comments()`` give them as they are (None once they are Items)."""

    format: str
    member: str
    titles: list[Item] = field(default_factory=list)
    summaries: list[Item] = field(default_factory=list)
    _observations: list[Item] | RawItems = field(default_factory=list, init=False, repr=False)
    expectations: list[Item] = field(default_factory=list)  # extra["explicit"]: bool
    steps: list[Item] = field(default_factory=list)
    _comments: list[Item] | RawItems = field(default_factory=list, init=False, repr=False)
    hypotheses: list[Item] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    reproductions: list[Item] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    entities: list[EntityHint] = field(default_factory=list)
    # Free text that still needs splitting into steps/expected/actual (report bodies):
    bodies: list[Item] = field(default_factory=list)
    identity: dict[str, str] = field(default_factory=dict)  # suggested case_id etc.

    @property
    def observations(self) -> list[Item]:
        if isinstance(self._observations, RawItems):
            self._observations = self._observations.items()
        return self._observations

    @observations.setter
    def observations(self, items: list[Item]) -> None:
        self._observations = items

    @property
    def comments(self) -> list[Item]:
        if isinstance(self._comments, RawItems):
            self._comments = self._comments.items()
        return self._comments

    @comments.setter
    def comments(self, items: list[Item]) -> None:
        self._comments = items

    def set_raw_observations(self, raw: RawItems) -> None:
        self._observations = raw

    def set_raw_comments(self, raw: RawItems) -> None:
        self._comments = raw

    def raw_observations(self) -> RawItems | None:
        return self._observations if isinstance(self._observations, RawItems) else None

    def raw_comments(self) -> RawItems | None:
        return self._comments if isinstance(self._comments, RawItems) else None
