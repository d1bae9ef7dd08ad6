"""An import is read, checked and published chunk by chunk; where a file's chunks end
changes nothing. The same file imported with chunks of two records and with the default
chunk ends the same: people matched by the identity rule across chunks, a person repeated
in a later chunk, a top-level note before its person, duplicate notes, and alerts opened
and closed across chunk boundaries. Both backends."""

from __future__ import annotations

import io
from typing import Any

import pytest
from accounts_helpers import TEST_OPERATOR
from sqlalchemy import select

from trace_app.domain import pfif_import, shelter_import
from trace_app.store.db import Database
from trace_app.store.models import Alert, Person, Report

from .conftest import DOMAIN, counts, import_doc, new_incident, statuses

NS = "http://zesty.ca/pfif/1.4"


def _note(note_id: str, person_id: str, status: str, day: int, *, top: bool = False) -> str:
    indent = "  " if top else "    "
    person = f"<pfif:person_record_id>{person_id}</pfif:person_record_id>"
    return (
        f"{indent}<pfif:note><pfif:note_record_id>{note_id}</pfif:note_record_id>{person}"
        f"<pfif:author_name>Desk {day % 2}</pfif:author_name>"
        f"<pfif:source_date>2026-07-{day:02d}T08:00:00Z</pfif:source_date>"
        f"<pfif:status>{status}</pfif:status>"
        f"<pfif:last_known_location>Camp {day}</pfif:last_known_location>"
        f"<pfif:text>Note {note_id} says {status}.</pfif:text></pfif:note>\n"
    )


def _person(person_id: str, name: str, age: int, notes: list[str]) -> str:
    return (
        f"  <pfif:person><pfif:person_record_id>{person_id}</pfif:person_record_id>"
        f"<pfif:full_name>{name}</pfif:full_name><pfif:age>{age}</pfif:age>\n"
        + "".join(notes)
        + "  </pfif:person>\n"
    )


def _document() -> bytes:
    parts = [
        # a top-level note whose person comes later (kept until the end of the file)
        _note("other.example/n0", "other.example/p3", "believed_alive", 9, top=True),
        _person(
            "other.example/p1",
            "Maya Gurung",
            30,
            [
                _note("other.example/n1", "other.example/p1", "believed_missing", 1),
                _note("other.example/n2", "other.example/p1", "", 2),
            ],
        ),
        _person("other.example/p2", "Omar Haddad", 52, []),
        _person(
            "other.example/p3",
            "सुनिता राई",
            41,
            [_note("other.example/n3", "other.example/p3", "believed_missing", 3)],
        ),
        # the same name, a compatible age: attached to Maya by the identity rule
        _person(
            "other.example/p4",
            "maya  gurung",
            31,
            [_note("other.example/n4", "other.example/p4", "believed_alive", 5)],
        ),
        # the same person record again, with a note seen before and a new one
        _person(
            "other.example/p1",
            "Maya Gurung",
            30,
            [
                _note("other.example/n1", "other.example/p1", "believed_missing", 1),
                _note("other.example/n5", "other.example/p1", "believed_missing", 7),
            ],
        ),
        # a look-alike of Omar, a conflicting age: a new person
        _person(
            "other.example/p5",
            "Omar Hadad",
            20,
            [_note("other.example/n6", "other.example/p5", "believed_dead", 4)],
        ),
        _note("other.example/n7", "other.example/p2", "believed_missing", 6, top=True),
    ]
    body = "".join(parts)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<pfif:pfif xmlns:pfif="{NS}">\n{body}'
        "</pfif:pfif>\n"
    ).encode()


def _alerts(database: Database, incident_id: str) -> list[tuple[str, str, str | None]]:
    """Each alert's person, state and the status of the claim that closed it."""
    with database.sessions() as s:
        names = {p.id: p.name for p in s.scalars(select(Person))}
        closing = {
            c.id: c.status
            for r in s.scalars(select(Report).where(Report.incident_id == incident_id))
            for c in r.claims
        }
        return sorted(
            (names[a.person_id], a.state, closing.get(a.closed_by_claim_id or ""))
            for a in s.scalars(select(Alert).where(Alert.incident_id == incident_id))
        )


def _summary(summary: pfif_import.ImportSummary) -> Any:
    return (
        summary.people_added,
        summary.people_matched,
        summary.notes_added,
        sorted((s.kind, s.record_id, s.reason) for s in summary.skipped),
        sorted((f.record_id, f.reason.split(" (")[0]) for f in summary.flagged),
        summary.invalid_count,
    )


def test_where_chunks_end_changes_nothing(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = _document()
    whole = new_incident(database, "Whole")
    expected = import_doc(database, whole, document)
    monkeypatch.setattr(pfif_import, "CHUNK", 2)
    chunked = new_incident(database, "Chunked")
    got = import_doc(database, chunked, document)

    assert _summary(got) == _summary(expected)
    assert statuses(database, chunked) == statuses(database, whole)
    assert counts(database, chunked) == counts(database, whole)
    assert _alerts(database, chunked) == _alerts(database, whole)
    # what the rules decided, spelled out once
    assert (got.people_added, got.people_matched, got.notes_added) == (4, 1, 8)
    assert statuses(database, chunked) == {
        "Maya Gurung": ["missing", "seen", "safe", "missing"],
        "Omar Haddad": ["missing"],
        "Omar Hadad": ["deceased"],
        "सुनिता राई": ["missing", "safe"],
    }
    assert _alerts(database, chunked) == [
        ("Maya Gurung", "closed", "safe"),
        ("Maya Gurung", "open", None),
        ("Omar Haddad", "open", None),
        ("सुनिता राई", "closed", "safe"),
    ]
    assert ("person", "other.example/p1", "appears earlier in this file") in _summary(got)[3]
    assert ("note", "other.example/n1", "appears earlier in this file") in _summary(got)[3]
    # a second import adds nothing, chunked or not
    again = import_doc(database, chunked, document)
    assert (again.people_added, again.people_matched, again.notes_added) == (0, 0, 0)
    assert counts(database, chunked) == counts(database, whole)


def test_quotes_in_record_ids_and_names_are_only_data(database: Database) -> None:
    """The chunk's lookups write its record ids and names into the statement as quoted
    constants: quotes and SQL in them stay data, and the file still imports once."""
    person_id = "other.example/o'brien';--"
    note_id = "other.example/n'1\");DROP/**/TABLE/**/people;--"
    body = _person(
        person_id,
        "Seán O'Brien",
        40,
        [_note(note_id, person_id, "believed_missing", 1)],
    ) + _person("other.example/p'2", "Seán O'Brien", 41, [])
    document = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<pfif:pfif xmlns:pfif="{NS}">\n{body}'
        "</pfif:pfif>\n"
    ).encode()
    incident = new_incident(database)
    first = import_doc(database, incident, document)
    assert (first.people_added, first.people_matched, first.notes_added) == (1, 1, 1)
    again = import_doc(database, incident, document)
    assert (again.people_added, again.people_matched, again.notes_added) == (0, 0, 0)
    assert {(s.record_id, s.reason) for s in again.skipped} == {
        (person_id, "already imported into this incident"),
        ("other.example/p'2", "already imported into this incident"),
        (note_id, "already imported into this incident"),
    }
    assert counts(database, incident) == (1, 1, 1)


def test_progress_counts_the_records_read_chunk_by_chunk(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pfif_import, "CHUNK", 2)
    document = _document()
    top_level = document.count(b"  <pfif:person>") + document.count(b"\n  <pfif:note>")
    told: list[int] = []
    with database.session() as s:
        pfif_import.import_pfif(
            s,
            new_incident(database, "Progress"),
            io.BytesIO(document),
            domain=DOMAIN,
            actor=TEST_OPERATOR,
            progress=told.append,
        )
    assert told == sorted(told) and len(told) > 1
    assert told[-1] == top_level
    rows = "full_name,age\nAsha Rai,30\n,4\nBo Lama,x\nHari Lama,41\nMaya Gurung,52\n"
    told.clear()
    with database.session() as s:
        shelter_import.import_shelter_csv(
            s,
            new_incident(database, "Progress CSV"),
            io.BytesIO(rows.encode()),
            source_name="Camp 2 Desk",
            domain=DOMAIN,
            skip_invalid=True,
            actor=TEST_OPERATOR,
            progress=told.append,
        )
    # every row read counts, the refused ones too; the last report is the whole list
    assert told == sorted(told) and told[-1] == 5
