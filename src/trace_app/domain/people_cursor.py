"""The cursor of the incident's people listing, paged by keyset (ADR 0086).

A cursor names the last row of a page by its place in the listing's order,
``(name_key, id)``, and says how many rows came before the next page (``rows_before``,
for the page number and the list numbering only; the rows themselves are found by the
key). It travels as urlsafe base64, without padding, of compact JSON
``{"v": 1, "k": name_key, "i": id, "n": rows_before}``: opaque to clients, readable
in a log.

It is not signed. Any well-formed cursor is a position in the list and reading from it
shows what offset paging shows; one that is not well formed (cut short, edited into
something else, another format) raises :class:`BadCursorError`, which the web layer
answers with 422.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass

from trace_app.domain.errors import BadCursorError
from trace_app.domain.text import ID_PATTERN, MAX_ID_CHARACTERS

VERSION = 1
# Longer than any cursor Trace writes (a 200-character name key in a 3-byte script,
# case folding included, is under 3,000 characters of base64).
MAX_CURSOR_CHARACTERS = 4096
MAX_KEY_CHARACTERS = 800
# The largest rows_before read back (the API's largest offset).
MAX_ROWS_BEFORE = 1_000_000_000
BAD_CURSOR_MESSAGE = (
    "The page cursor (after) is not valid: use the next_after of a page Trace returned, "
    "or leave it out to start at the first page."
)

_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")
_ID = re.compile(ID_PATTERN)


@dataclass(frozen=True, slots=True)
class PeopleCursor:
    name_key: str
    id: str
    rows_before: int


def encode(cursor: PeopleCursor) -> str:
    data = {"v": VERSION, "k": cursor.name_key, "i": cursor.id, "n": cursor.rows_before}
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def readable(raw: str) -> bool:
    """Could :func:`decode` read ``raw`` (a cursor :func:`encode` wrote)?"""
    try:
        decode(raw)
    except BadCursorError:
        return False
    return True


def decode(raw: str) -> PeopleCursor:
    """The cursor ``raw`` names; :class:`BadCursorError` unless it is one
    :func:`encode` could have written."""
    if len(raw) > MAX_CURSOR_CHARACTERS or not _BASE64URL.fullmatch(raw):
        raise BadCursorError(BAD_CURSOR_MESSAGE)
    try:
        data = json.loads(
            base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("utf-8", "strict")
        )
    except (binascii.Error, ValueError, RecursionError) as exc:
        raise BadCursorError(BAD_CURSOR_MESSAGE) from exc
    if not isinstance(data, dict) or set(data) != {"v", "k", "i", "n"}:
        raise BadCursorError(BAD_CURSOR_MESSAGE)
    version, key, person_id, rows_before = data["v"], data["k"], data["i"], data["n"]
    if not (
        _is_int(version)
        and version == VERSION
        and isinstance(key, str)
        and _is_key(key)
        and isinstance(person_id, str)
        and len(person_id) <= MAX_ID_CHARACTERS
        and _ID.fullmatch(person_id)
        and _is_int(rows_before)
        and 0 <= rows_before <= MAX_ROWS_BEFORE
    ):
        raise BadCursorError(BAD_CURSOR_MESSAGE)
    return PeopleCursor(key, person_id, rows_before)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_key(key: str) -> bool:
    """A string both databases take as a bound parameter: no NUL (PostgreSQL refuses it
    in text), no lone surrogate (JSON's ``\\ud800`` decodes to one; no driver encodes it).
    Stored keys hold neither, so every cursor :func:`encode` writes passes."""
    if len(key) > MAX_KEY_CHARACTERS or "\x00" in key:
        return False
    try:
        key.encode("utf-8", "strict")
    except UnicodeEncodeError:
        return False
    return True
