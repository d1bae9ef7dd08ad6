"""The structural rules Person Finder's reader (``app/pfif.py`` in google/personfinder)
applies to a PFIF 1.4 document, checked here without its code (which cannot be vendored).

Its reader is a namespace-aware SAX handler. What it relies on, and what is checked:

1. the root is ``pfif`` in the 1.4 namespace, and every PFIF element is in that namespace
   (it matches tags as (namespace, name) pairs);
2. records are ``person`` elements under the root, with ``note`` elements inside them or
   beside them; a field's text is gathered from character data whose parent is a record,
   so a field must hold text only (no child elements) and appear once;
3. a person's fields are among PFIF 1.4's person fields and a note's among its note
   fields (anything else is dropped with a warning);
4. the mandatory fields are present and not blank: person ``person_record_id``,
   ``source_date``, ``full_name``; note ``note_record_id``, ``author_name``,
   ``source_date``; a nested note's ``person_record_id`` equals its person's (the reader
   copies it in);
5. values have the forms its importer parses: dates ``YYYY-MM-DDThh:mm:ssZ``, booleans
   ``true``/``false``, ``status`` one of the PFIF note statuses, record ids
   ``domain/local``, ``age`` a number or a range, no character XML 1.0 forbids.

:func:`person_finder_parse` returns person and note dicts keyed by field name (as its
reader does), after the checks; any broken rule raises AssertionError naming it.
"""

from __future__ import annotations

import re
import xml.sax
import xml.sax.handler
from typing import Any

NS = "http://zesty.ca/pfif/1.4"
PERSON = {
    "person_record_id", "entry_date", "expiry_date", "author_name", "author_email",
    "author_phone", "source_name", "source_date", "source_url", "full_name", "given_name",
    "family_name", "alternate_names", "description", "sex", "date_of_birth", "age",
    "home_street", "home_neighborhood", "home_city", "home_state", "home_postal_code",
    "home_country", "photo_url", "profile_urls",
}  # fmt: skip
NOTE = {
    "note_record_id", "person_record_id", "linked_person_record_id", "entry_date",
    "author_name", "author_email", "author_phone", "source_date", "author_made_contact",
    "status", "email_of_found_person", "phone_of_found_person", "last_known_location",
    "text", "photo_url",
}  # fmt: skip
MANDATORY = {
    "person": ("person_record_id", "source_date", "full_name"),
    "note": ("note_record_id", "author_name", "source_date"),
}
STATUSES = {"", "information_sought", "is_note_author", "believed_alive", "believed_missing",
            "believed_dead"}  # fmt: skip
DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
RECORD_ID = re.compile(r"^[^\s/]+/\S+$")
AGE = re.compile(r"^\d+(-\d+)?$")
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class _Handler(xml.sax.handler.ContentHandler):
    def __init__(self) -> None:
        self.stack: list[tuple[str | None, str]] = []
        self.records: list[tuple[str, dict[str, str], dict[str, str] | None]] = []
        self.person: dict[str, str] | None = None
        self.current: dict[str, str] | None = None
        self.field: str | None = None

    def startElementNS(self, name: tuple[str | None, str], qname: Any, attrs: Any) -> None:
        ns, local = name
        depth = len(self.stack)
        assert ns == NS, f"rule 1: element {local!r} is not in the PFIF 1.4 namespace"
        if depth == 0:
            assert local == "pfif", "rule 1: the root must be pfif"
        elif local == "person":
            assert depth == 1, "rule 2: a person must be a child of the root"
            self.person = self.current = {}
        elif local == "note":
            assert depth in (1, 2), "rule 2: a note must be inside a person or the root"
            if depth == 2:
                assert self.stack[-1][1] == "person", "rule 2: a note in a non-person element"
            self.current = {}
        else:
            assert self.field is None, f"rule 2: field {self.field!r} holds an element"
            parent = self.stack[-1][1]
            allowed = PERSON if parent == "person" else NOTE
            assert parent in ("person", "note"), f"rule 2: {local!r} outside a record"
            assert local in allowed, f"rule 3: {local!r} is not a PFIF 1.4 {parent} field"
            assert self.current is not None and local not in self.current, (
                f"rule 2: field {local!r} appears twice"
            )
            self.field = local
            self.current[local] = ""
        self.stack.append(name)

    def endElementNS(self, name: tuple[str | None, str], qname: Any) -> None:
        self.stack.pop()
        local = name[1]
        if local == "note" and self.current is not None:
            note = self.current
            nested = len(self.stack) == 2
            self.records.append(("note", note, self.person if nested else None))
            self.current = self.person if nested else None
        elif local == "person" and self.person is not None:
            self.records.append(("person", self.person, None))
            self.person = self.current = None
        elif self.field == local:
            self.field = None

    def characters(self, content: str) -> None:
        if self.field is not None and self.current is not None:
            self.current[self.field] += content
        else:
            assert not content.strip(), f"rule 2: text {content[:30]!r} outside a field"


def _check(kind: str, record: dict[str, str]) -> None:
    for name in MANDATORY[kind]:
        assert record.get(name, "").strip(), f"rule 4: {kind} lacks {name}"
    for name, value in record.items():
        assert not NOT_XML.search(value), f"rule 5: {name} holds a character XML forbids"
        if name.endswith("_date"):
            assert DATE.fullmatch(value), f"rule 5: {name} {value!r} is not a PFIF date"
        if name.endswith("record_id"):
            assert RECORD_ID.fullmatch(value), f"rule 5: {name} {value!r} is not domain/id"
    if kind == "note":
        assert record.get("status", "") in STATUSES, f"rule 5: status {record.get('status')!r}"
        made = record.get("author_made_contact", "false")
        assert made in ("true", "false"), "rule 5: author_made_contact is not a boolean"
    elif "age" in record:
        assert AGE.fullmatch(record["age"]), f"rule 5: age {record['age']!r}"


def person_finder_parse(document: bytes) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Persons and notes as Person Finder's reader would list them, after every check."""
    handler = _Handler()
    parser = xml.sax.make_parser()
    parser.setFeature(xml.sax.handler.feature_namespaces, True)
    parser.setFeature(xml.sax.handler.feature_external_ges, False)
    parser.setContentHandler(handler)
    parser.feed(document)
    parser.close()
    persons: list[dict[str, str]] = []
    notes: list[dict[str, str]] = []
    for kind, record, person in handler.records:
        if kind == "note" and person is not None:
            own = record.get("person_record_id")
            assert own in (None, person.get("person_record_id")), (
                "rule 4: a nested note names another person"
            )
            record["person_record_id"] = person.get("person_record_id", "")
        _check(kind, record)
        (persons if kind == "person" else notes).append(record)
    return persons, notes
