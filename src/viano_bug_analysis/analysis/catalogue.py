"""The reference catalogue: every id a model answer may cite, with what it stands for.

An entry is a JSON object (it is written into context.json as is)::

    {"id": "E0001", "kind": "expectation", "pointer": "/expectations/0",
     "origin": "original", "inline": true, "unread": false,
     "author": "...", "timestamp": "...", "data": {...}}

- ``id``: the case's own record id for O/C/T/E/F/R (never renamed); a context alias for
  B/S/N/D/Q/X (``B0001`` ...), valid only for the context and case hash it was made for.
- ``pointer``: the RFC 6901 JSON pointer of the record in the canonical case.
- ``origin``: ``original``, ``tester``, ``external_research`` or ``combined`` for
  supplied data, ``derived`` for what CaseBuilder made itself (D and Q records), copied
  from the record's provenance in the case.
- ``inline``: the record's value is in the case (false for a fact given only by
  ``value_ref``); ``unread``: the entry describes data that was not loaded.
- ``data``: the record's own fields as projected into the context.

Validation reads only ``id``, ``kind`` (through the id's letter), ``origin``,
``inline``, ``unread``, for E records ``data.explicit`` (a stated or an only implied
expectation) and, for Q0001, ``data.value`` (the completeness).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

RECORD_LETTERS = frozenset("OCTEFR")  # ids kept from the case
ALIAS_LETTERS = frozenset("BSNDQX")  # ids scoped to one context
COMPLETENESS_ID = "Q0001"
COMPLETE = "complete"
ORIGIN_ORIGINAL = "original"
ORIGIN_EXTERNAL = "external_research"


def alias(letter: str, index: int) -> str:
    """``B0001`` for the first B entry (1-based)."""
    return f"{letter}{index:04d}"


class Catalogue:
    """The catalogue entries of one context, looked up by id (read-only)."""

    __slots__ = ("_by_id", "entries")

    def __init__(self, entries: Iterable[Mapping[str, Any]]) -> None:
        self.entries: tuple[Mapping[str, Any], ...] = tuple(entries)
        self._by_id: dict[str, Mapping[str, Any]] = {str(e["id"]): e for e in self.entries}
        if len(self._by_id) != len(self.entries):
            raise ValueError("catalogue ids must be unique")

    def __contains__(self, source_id: object) -> bool:
        return source_id in self._by_id

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, source_id: str) -> Mapping[str, Any] | None:
        return self._by_id.get(source_id)

    def ids(self, letter: str) -> list[str]:
        return [i for i in self._by_id if i[:1] == letter]

    def is_unread(self, source_id: str) -> bool:
        entry = self._by_id.get(source_id)
        if entry is None:
            return False
        return source_id[:1] == "X" or bool(entry.get("unread")) or not entry.get("inline", True)

    def is_local_inline_fact(self, source_id: str) -> bool:
        entry = self._by_id.get(source_id)
        return (
            entry is not None
            and source_id[:1] == "F"
            and bool(entry.get("inline"))
            and not entry.get("unread")
            and entry.get("origin") == ORIGIN_ORIGINAL
        )

    def is_implicit_expectation(self, source_id: str) -> bool:
        """An E entry that CaseBuilder derived from wording that only implies an
        expectation (``data.explicit`` false): the report does not state it."""
        entry = self._by_id.get(source_id)
        return (
            entry is not None
            and source_id[:1] == "E"
            and entry.get("data", {}).get("explicit", True) is False
        )

    def completeness(self) -> str | None:
        entry = self._by_id.get(COMPLETENESS_ID)
        if entry is None:
            return None
        value = entry.get("data", {}).get("value")
        return value if isinstance(value, str) else None
