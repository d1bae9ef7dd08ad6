"""What text a report may hold: maximum lengths, refused characters, name normalisation.

Every free-text field of a report has a documented maximum (docs/trace.md) and refuses:

- lone surrogates (``\\ud800``): not Unicode; no database can store them;
- control characters other than tab, line feed and carriage return (NUL among them,
  which PostgreSQL refuses);
- in person names, sources and locations, the bidirectional controls U+202A-U+202E and
  U+2066-U+2069: an override turns "Maya Gurung" into a second, different name that
  looks the same. Zero-width joiners (U+200C, U+200D), which Indic and Arabic scripts
  need, are kept.

The rules are regular expressions, published as ``pattern`` in the OpenAPI schema and
enforced with Python's ``re``, so that the schema says exactly what is accepted (lone
surrogates aside: JSON text cannot carry them as Unicode, and they are refused first).
The validators only add plain messages.

Names are normalised to NFC and their whitespace collapsed before they are stored or
matched (:func:`clean_name`, :func:`name_key`), so a decomposed "é" finds the person
written with a precomposed one.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from trace_app.domain.errors import InvalidInputError

MAX_ID_CHARACTERS = 100
MAX_NAME_CHARACTERS = 200
MAX_LOCATION_CHARACTERS = 300
MAX_SUMMARY_CHARACTERS = 300
MAX_ORIGINAL_TEXT_CHARACTERS = 20_000
MAX_REFERENCES = 50
MAX_REFERENCE_CHARACTERS = 500

# Character classes (as regex text, valid in Python's re, ECMA-262 and Rust's regex).
# Lone surrogates are refused too, but no pattern names them: they are not Unicode
# scalar values, and a schema pattern holding them is invalid for Rust-based validators.
_UNSTORABLE = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f"
_BIDI = r"\u202a-\u202e\u2066-\u2069"
BIDI_CONTROLS = frozenset(chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])

FREE_TEXT_PATTERN = rf"^[^{_UNSTORABLE}]*$"
REQUIRED_TEXT_PATTERN = rf"^[^{_UNSTORABLE}]*[^\s{_UNSTORABLE}][^{_UNSTORABLE}]*$"
NAME_PATTERN = rf"^[^{_UNSTORABLE}{_BIDI}]*[^\s{_UNSTORABLE}{_BIDI}][^{_UNSTORABLE}{_BIDI}]*$"
OPTIONAL_NAME_PATTERN = rf"^[^{_UNSTORABLE}{_BIDI}]*$"
ID_PATTERN = r"^[A-Za-z0-9_-]+$"

_FREE = re.compile(FREE_TEXT_PATTERN)
_REQUIRED = re.compile(REQUIRED_TEXT_PATTERN)
_NAME = re.compile(NAME_PATTERN)
_OPTIONAL_NAME = re.compile(OPTIONAL_NAME_PATTERN)
_ID = re.compile(ID_PATTERN)
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def is_id(value: str) -> bool:
    """Could ``value`` be one of Trace's ids (letters, digits, ``_`` and ``-``)?"""
    return len(value) <= MAX_ID_CHARACTERS and _ID.fullmatch(value) is not None


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

BIDI_MESSAGE = (
    "contains a right-to-left or left-to-right override or isolate (U+202A to U+202E, "
    "U+2066 to U+2069), which can make one name look like another; remove it"
)


def _problem(value: str, *, names: bool) -> str | None:
    if _SURROGATE.search(value):
        return "contains a character that is not valid Unicode (a lone surrogate)"
    if _CONTROL.search(value):
        return "contains a control character (only tab and line breaks are allowed)"
    if names and any(ch in BIDI_CONTROLS for ch in value):
        return BIDI_MESSAGE
    return None


def _refuse(kind: str, message: str) -> PydanticCustomError:
    return PydanticCustomError(kind, message)


def _surrogates_first(value: Any) -> Any:
    # before pydantic's own str checks, so a lone surrogate gets a plain message
    if isinstance(value, str) and _SURROGATE.search(value):
        raise _refuse(
            "invalid_text", "contains a character that is not valid Unicode (a lone surrogate)"
        )
    return value


def _checker(pattern: re.Pattern[str], *, names: bool) -> AfterValidator:
    def check(value: str) -> str:
        if pattern.fullmatch(value):
            return value
        problem = _problem(value, names=names)
        if problem is not None:
            raise _refuse("bidi_control" if problem is BIDI_MESSAGE else "invalid_text", problem)
        # only blankness is left: the domain refuses it with its own message
        # (EmptyReportError, InvalidReportError), as for any caller of publish_report
        return value

    return AfterValidator(check)


def _schema(max_length: int, pattern: re.Pattern[str]) -> Any:
    return Field(max_length=max_length, json_schema_extra={"pattern": pattern.pattern})


_SURROGATES_FIRST = BeforeValidator(_surrogates_first)

# Text types: each with its maximum, its pattern and plain messages. The non-blank ones'
# patterns ask for a character other than whitespace; a blank value passes the type and
# is refused by the domain (publish_report) with its own message.
PersonNameText = Annotated[
    str, _SURROGATES_FIRST, _schema(MAX_NAME_CHARACTERS, _NAME), _checker(_NAME, names=True)
]
SourceNameText = PersonNameText
LocationText = Annotated[
    str,
    _SURROGATES_FIRST,
    _schema(MAX_LOCATION_CHARACTERS, _OPTIONAL_NAME),
    _checker(_OPTIONAL_NAME, names=True),
]
SummaryText = Annotated[
    str,
    _SURROGATES_FIRST,
    _schema(MAX_SUMMARY_CHARACTERS, _REQUIRED),
    _checker(_REQUIRED, names=False),
]
ReportText = Annotated[
    str,
    _SURROGATES_FIRST,
    _schema(MAX_ORIGINAL_TEXT_CHARACTERS, _REQUIRED),
    _checker(_REQUIRED, names=False),
]
ReferenceText = Annotated[
    str,
    _SURROGATES_FIRST,
    _schema(MAX_REFERENCE_CHARACTERS, _FREE),
    _checker(_FREE, names=False),
]


MAX_NOTE_CHARACTERS = 2000


def _not_blank(value: str) -> str:
    if not value.strip():
        raise _refuse("string_blank", "must not be blank")
    return value


# A person's note (a review decision): 1 to 2,000 characters, not blank, no control
# characters but tab and line breaks. Checked with Python's ``re``, as the schema's
# pattern is read by clients, so both agree on what whitespace is.
NoteText = Annotated[
    str,
    _SURROGATES_FIRST,
    Field(
        min_length=1,
        max_length=MAX_NOTE_CHARACTERS,
        json_schema_extra={"pattern": REQUIRED_TEXT_PATTERN},
    ),
    _checker(_REQUIRED, names=False),
    AfterValidator(_not_blank),
]


_NOTE = re.compile(REQUIRED_TEXT_PATTERN)


def clean_note(note: str, missing: str) -> str:
    """A person's note as stored (closing an alert, a link decision, a review): trimmed,
    1 to :data:`MAX_NOTE_CHARACTERS` characters, no control characters but tab and line
    breaks. The API checks the same with :data:`NoteText`; a form's text arrives here
    unchecked. ``missing`` is the message for an empty note, which says what it is for."""
    text = note.strip()
    if not text:
        raise InvalidInputError(missing)
    if len(text) > MAX_NOTE_CHARACTERS:
        raise InvalidInputError(f"The note is longer than {MAX_NOTE_CHARACTERS:,} characters.")
    if not _NOTE.fullmatch(text):
        raise InvalidInputError(
            "The note contains a control character or an invalid one (only tab and line "
            "breaks are allowed)."
        )
    return text


def _check_id(value: str) -> str:
    if not _ID.fullmatch(value):
        raise _refuse("invalid_id", "is not an id (letters, digits, '_' and '-' only)")
    return value


IdText = Annotated[
    str,
    BeforeValidator(_surrogates_first),
    Field(min_length=1, max_length=MAX_ID_CHARACTERS, json_schema_extra={"pattern": ID_PATTERN}),
    AfterValidator(_check_id),
]


def clean_name(name: str) -> str:
    """How names are stored: NFC, trimmed, inner whitespace collapsed to one space."""
    return " ".join(unicodedata.normalize("NFC", name).split())


def name_key(name: str) -> str:
    """How names are matched: :func:`clean_name`, case-folded, NFC again (case folding
    can decompose)."""
    return unicodedata.normalize("NFC", clean_name(name).casefold())
