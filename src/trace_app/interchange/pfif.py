"""PFIF, the People Finder Interchange Format: a streaming reader (1.1 to 1.4) and a
streaming writer (1.4), with no database.

Reading
    :func:`read_pfif` parses with ``defusedxml``'s ``iterparse``: a document that
    declares an entity (so every entity-expansion bomb) or refers to an external one is
    refused with :class:`PfifEntityError`, a document longer than ``max_bytes`` with
    :class:`PfifTooLargeError`, one that is not well-formed XML with
    :class:`PfifSyntaxError`, and one whose root is not ``pfif`` in a PFIF namespace with
    :class:`PfifFormatError`. Each finished person or note element is turned into a
    :class:`RawRecord` (field names renamed to PFIF 1.4's) and then cleared, so memory
    holds one person (with its nested notes) at a time, whatever the file's length.
    Fields of any PFIF version are accepted in any order; elements of other namespaces
    and unknown fields are ignored (as Person Finder does).

Writing
    :func:`iter_pfif` yields the document as UTF-8 byte chunks, one person (with its
    notes) at a time, fields in PFIF 1.4's order, characters that XML 1.0 cannot hold
    removed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from trace_app.domain.errors import InvalidInputError
from trace_app.interchange.formulas import neutralize

PFIF_1_4_NS = "http://zesty.ca/pfif/1.4"
NAMESPACES: dict[str, str] = {
    "http://zesty.ca/pfif/1.1": "1.1",
    "http://zesty.ca/pfif/1.2": "1.2",
    "http://zesty.ca/pfif/1.3": "1.3",
    PFIF_1_4_NS: "1.4",
}
# The default largest document read: 64 MiB (about 40,000 persons with 120,000 notes).
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

# PFIF 1.4's fields, in the order the 1.4 specification lists them (the writer's order).
PERSON_FIELDS: tuple[str, ...] = (
    "person_record_id",
    "entry_date",
    "expiry_date",
    "author_name",
    "author_email",
    "author_phone",
    "source_name",
    "source_date",
    "source_url",
    "full_name",
    "given_name",
    "family_name",
    "alternate_names",
    "description",
    "sex",
    "date_of_birth",
    "age",
    "home_street",
    "home_neighborhood",
    "home_city",
    "home_state",
    "home_postal_code",
    "home_country",
    "photo_url",
    "profile_urls",
)
NOTE_FIELDS: tuple[str, ...] = (
    "note_record_id",
    "person_record_id",
    "linked_person_record_id",
    "entry_date",
    "author_name",
    "author_email",
    "author_phone",
    "source_date",
    "author_made_contact",
    "status",
    "email_of_found_person",
    "phone_of_found_person",
    "last_known_location",
    "text",
    "photo_url",
)
# Names earlier versions used for 1.4 fields.
RENAMED_FIELDS: dict[str, str] = {
    "home_zip": "home_postal_code",  # 1.1
    "first_name": "given_name",  # up to 1.3
    "last_name": "family_name",  # up to 1.3
    "found": "author_made_contact",  # up to 1.3
    "other": "description",  # up to 1.3
}
_PERSON_NAMES = frozenset(PERSON_FIELDS) | {"home_zip", "first_name", "last_name", "other"}
_NOTE_NAMES = frozenset(NOTE_FIELDS) | {"found"}
# XML 1.0 cannot hold these characters, even escaped.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_CHUNK = 64 * 1024


class PfifError(InvalidInputError):
    """A PFIF document that cannot be read; ``str(error)`` says why, ``code`` is stable
    (one of the domain's errors: 422 on the web, one sentence at the command line)."""

    code = "pfif_invalid"


class PfifTooLargeError(PfifError):
    code = "pfif_too_large"
    http_status = 413


class PfifEntityError(PfifError):
    code = "pfif_entity_refused"


class PfifSyntaxError(PfifError):
    code = "pfif_not_xml"


class PfifFormatError(PfifError):
    code = "pfif_not_pfif"


@dataclass(slots=True)
class RawRecord:
    """One person or note element as read: 1.4 field names to stripped text.

    ``kind`` is ``"person"`` or ``"note"``; ``nested`` is true for a note inside a person
    (its ``person_record_id``, when absent, is the person's); ``version`` is the PFIF
    version of the element's namespace; ``index`` counts records of the document from 1.
    """

    kind: str
    fields: dict[str, str]
    version: str
    index: int
    nested: bool = False
    notes: list[RawRecord] = field(default_factory=list)

    @property
    def record_id(self) -> str:
        key = "person_record_id" if self.kind == "person" else "note_record_id"
        return self.fields.get(key, "")


class _Limited:
    """A binary stream that refuses to give more than ``limit`` bytes."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self.stream = stream
        self.limit = limit
        self.seen = 0

    def read(self, size: int = -1) -> bytes:
        want = _CHUNK if size is None or size < 0 else size
        chunk = self.stream.read(min(want, self.limit + 1 - self.seen))
        self.seen += len(chunk)
        if self.seen > self.limit:
            raise PfifTooLargeError(
                f"The PFIF document is larger than the limit of {self.limit:,} bytes."
            )
        return chunk


def _split(tag: str) -> tuple[str, str]:
    if tag.startswith("{"):
        ns, _, local = tag[1:].partition("}")
        return ns, local
    return "", tag


def _tags(names: frozenset[str]) -> dict[str, str]:
    """Every ``{namespace}name`` of these fields in any PFIF version -> its 1.4 name."""
    return {
        f"{{{ns}}}{name}": RENAMED_FIELDS.get(name, name) for ns in NAMESPACES for name in names
    }


_PERSON_TAGS = _tags(_PERSON_NAMES)
_NOTE_TAGS = _tags(_NOTE_NAMES)


def _fields(element: Any, tags: dict[str, str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for child in element:
        name = tags.get(child.tag)
        if name is None:
            continue
        text = (child.text or "") if len(child) == 0 else "".join(child.itertext())
        text = text.strip()
        if text and name not in values:
            values[name] = text
    return values


def read_pfif(source: IO[bytes], *, max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[RawRecord]:
    """Yield the document's records: each person (with its nested notes in ``notes``)
    when its element ends, and each top-level note. Raises a :class:`PfifError`
    subclass for a document that cannot be read; records already yielded stay valid,
    so a caller that must be all or nothing reads to the end before it keeps any."""
    limited = _Limited(source, max_bytes)
    events = iterparse(
        limited,
        events=("start", "end"),
        forbid_dtd=False,
        forbid_entities=True,
        forbid_external=True,
    )
    depth = 0
    root: Any = None
    person: RawRecord | None = None
    index = 0
    try:
        for event, element in events:
            if event == "start":
                depth += 1
                if depth == 1:
                    root = element
                    ns, local = _split(element.tag)
                    if ns not in NAMESPACES or local != "pfif":
                        raise PfifFormatError(
                            "The document is not PFIF: its root element must be <pfif> in "
                            "a PFIF namespace such as http://zesty.ca/pfif/1.4."
                        )
                elif depth == 2:
                    ns, local = _split(element.tag)
                    if ns in NAMESPACES and local == "person":
                        index += 1
                        person = RawRecord("person", {}, NAMESPACES[ns], index)
                continue
            depth -= 1  # the depth of the element's parent
            if depth == 2:
                ns, local = _split(element.tag)
                if person is not None and ns in NAMESPACES and local == "note":
                    index += 1
                    note = RawRecord(
                        "note", _fields(element, _NOTE_TAGS), NAMESPACES[ns], index, True
                    )
                    person.notes.append(note)
                    element.clear()
            elif depth == 1:
                ns, local = _split(element.tag)
                if ns in NAMESPACES and local == "person" and person is not None:
                    record, person = person, None
                    record.fields = _fields(element, _PERSON_TAGS)
                    for note in record.notes:
                        note.fields.setdefault("person_record_id", record.record_id)
                    root.clear()
                    yield record
                elif ns in NAMESPACES and local == "note":
                    index += 1
                    note = RawRecord("note", _fields(element, _NOTE_TAGS), NAMESPACES[ns], index)
                    root.clear()
                    yield note
                else:
                    root.clear()
    except DefusedXmlException as exc:
        raise PfifEntityError(
            "The document declares or refers to an XML entity; PFIF files need none, and "
            "they are refused (entity expansion and external entities are unsafe)."
        ) from exc
    except ParseError as exc:
        raise PfifSyntaxError(f"The document is not well-formed XML: {exc}.") from exc


def xml_text(value: str) -> str:
    """``value`` escaped for element content, with characters XML cannot hold removed."""
    if _NOT_XML.search(value):
        value = _NOT_XML.sub("", value)
    return value.translate(_ESCAPES)


def _element(name: str, value: str, indent: str) -> str:
    return f"{indent}<pfif:{name}>{xml_text(neutralize(value))}</pfif:{name}>\n"


def _record(
    kind: str,
    names: tuple[str, ...],
    fields: Mapping[str, str],
    indent: str,
    as_1_4: Mapping[str, str],
) -> str:
    """A record's opening tag and fields, in the version's order (``names``); a field is
    read from ``fields`` by its 1.4 name (``as_1_4`` maps the version's name to it)."""
    parts = [f"{indent}<pfif:{kind}>\n"]
    inner = indent + "  "
    for name in names:
        value = fields.get(as_1_4.get(name, name))
        if value:
            parts.append(_element(name, value, inner))
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class WrittenVersion:
    """What one PFIF version writes: its namespace and fields, in its specification's
    order, and the names it gives 1.4's fields (``first_name`` for ``given_name``...)."""

    namespace: str
    person_fields: tuple[str, ...]
    note_fields: tuple[str, ...]
    as_1_4: Mapping[str, str]


PFIF_1_3_PERSON_FIELDS: tuple[str, ...] = (
    "person_record_id",
    "entry_date",
    "expiry_date",
    "author_name",
    "author_email",
    "author_phone",
    "source_name",
    "source_date",
    "source_url",
    "full_name",
    "first_name",
    "last_name",
    "sex",
    "date_of_birth",
    "age",
    "home_street",
    "home_neighborhood",
    "home_city",
    "home_state",
    "home_postal_code",
    "home_country",
    "photo_url",
    "other",
)
PFIF_1_3_NOTE_FIELDS: tuple[str, ...] = (
    "note_record_id",
    "person_record_id",
    "linked_person_record_id",
    "entry_date",
    "author_name",
    "author_email",
    "author_phone",
    "source_date",
    "found",
    "status",
    "email_of_found_person",
    "phone_of_found_person",
    "last_known_location",
    "text",
)
WRITTEN_VERSIONS: dict[str, WrittenVersion] = {
    "1.4": WrittenVersion(PFIF_1_4_NS, PERSON_FIELDS, NOTE_FIELDS, {}),
    # For consumers that read 1.2 or 1.3 (Person Finder's validator reads up to 1.3). 1.3
    # has no alternate names: the exporter folds them into ``other`` (the description).
    "1.3": WrittenVersion(
        "http://zesty.ca/pfif/1.3",
        PFIF_1_3_PERSON_FIELDS,
        PFIF_1_3_NOTE_FIELDS,
        {k: v for k, v in RENAMED_FIELDS.items() if k != "home_zip"},
    ),
}


@dataclass(frozen=True, slots=True)
class PersonOut:
    """A person to write: its 1.4 fields (empty values are left out) and its notes'."""

    fields: Mapping[str, str]
    notes: Iterable[Mapping[str, str]] = ()


def iter_pfif(
    persons: Iterable[PersonOut], *, batch: int = 200, version: str = "1.4"
) -> Iterator[bytes]:
    """The PFIF document (1.4, or 1.3) for ``persons``, as UTF-8 chunks (``batch`` persons
    each). ``persons`` carry 1.4 field names; a 1.3 document writes them under 1.3's.

    Notes are written inside their person, so they carry its ``person_record_id``
    (written as well, as Person Finder's own export does)."""
    written = WRITTEN_VERSIONS[version]
    header = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<pfif:pfif xmlns:pfif="{written.namespace}">\n'
    )
    yield header.encode()
    parts: list[str] = []
    count = 0
    for person in persons:
        head = _record("person", written.person_fields, person.fields, "  ", written.as_1_4)
        parts.append(head)
        for note in person.notes:
            parts.append(_record("note", written.note_fields, note, "    ", written.as_1_4))
            parts.append("    </pfif:note>\n")
        parts.append("  </pfif:person>\n")
        count += 1
        if count % batch == 0:
            yield "".join(parts).encode()
            parts.clear()
    parts.append("</pfif:pfif>\n")
    yield "".join(parts).encode()
