"""Every rule of the PFIF <-> Trace mapping, with no database."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from trace_app.interchange.pfif import RawRecord
from trace_app.interchange.pfif_mapping import (
    STATUS_TABLE,
    InvalidRecord,
    NoteRecord,
    PersonRecord,
    claim_status,
    format_date,
    note_record,
    parse_date,
    person_record,
    pfif_status,
)
from trace_app.store.models import ClaimStatus

NOTE = NoteRecord(record_id="a.org/n1", person_record_id="a.org/p1")


@pytest.mark.parametrize(
    ("claim", "written"),
    [
        (ClaimStatus.MISSING, "believed_missing"),
        (ClaimStatus.DECEASED, "believed_dead"),
        (ClaimStatus.SAFE, "believed_alive"),
        (ClaimStatus.ADMITTED, "believed_alive"),
        (ClaimStatus.SEEN, ""),
    ],
)
def test_each_claim_status_is_written_by_the_table(claim: ClaimStatus, written: str) -> None:
    assert pfif_status(claim) == written


@pytest.mark.parametrize(
    ("status", "read"),
    [
        ("believed_missing", ClaimStatus.MISSING),
        ("information_sought", ClaimStatus.MISSING),
        ("believed_dead", ClaimStatus.DECEASED),
        ("believed_alive", ClaimStatus.SAFE),
        ("is_note_author", ClaimStatus.SAFE),
    ],
)
def test_each_pfif_status_is_read_by_the_table(status: str, read: ClaimStatus) -> None:
    assert claim_status(replace(NOTE, status=status)) is read


def test_a_note_without_status_is_a_sighting_only_with_a_place_or_contact() -> None:
    assert claim_status(replace(NOTE, last_known_location="Pier 3")) is ClaimStatus.SEEN
    assert claim_status(replace(NOTE, author_made_contact=True)) is ClaimStatus.SEEN
    assert claim_status(NOTE) is None  # a comment: no claim


def test_the_table_round_trips_every_status_but_admitted() -> None:
    for row in STATUS_TABLE:
        note = replace(NOTE, status=row.written_as, last_known_location="x")
        expected = ClaimStatus.SAFE if row.claim is ClaimStatus.ADMITTED else row.claim
        assert claim_status(note) is expected, row


def test_dates() -> None:
    when = datetime(2026, 7, 15, 7, 30, 5, tzinfo=UTC)
    assert format_date(when) == "2026-07-15T07:30:05Z"
    assert parse_date("2026-07-15T07:30:05Z") == when
    assert parse_date("2026-07-15T09:30:05+02:00") == when
    assert parse_date("2026-07-15T07:30:05") == when  # no zone: UTC
    with pytest.raises(ValueError):
        parse_date("15/07/2026")


def _person(**fields: str) -> PersonRecord | InvalidRecord:
    return person_record(RawRecord("person", {"person_record_id": "a.org/p1", **fields}, "1.4", 1))


def test_person_names() -> None:
    person = _person(full_name="Lena Okafor\nLena O. Okafor", alternate_names="Lenny\nLena Okafor")
    assert isinstance(person, PersonRecord)
    assert person.full_name == "Lena Okafor"
    assert person.alternate_names == ("Lena O. Okafor", "Lenny")  # the name itself left out
    old = _person(given_name="Haruto", family_name="佐藤")
    assert isinstance(old, PersonRecord) and old.full_name == "Haruto 佐藤"
    nameless = _person()
    assert isinstance(nameless, InvalidRecord)
    assert "no full_name" in nameless.reasons[0]


@pytest.mark.parametrize(("text", "age"), [("29", 29), ("35-45", 40), ("40 - 41", 40)])
def test_ages(text: str, age: int) -> None:
    person = _person(full_name="X", age=text)
    assert isinstance(person, PersonRecord) and person.age == age and person.age_text == text


@pytest.mark.parametrize("text", ["about 30", "45-35", "-3", "1234"])
def test_bad_ages_are_invalid(text: str) -> None:
    assert isinstance(_person(full_name="X", age=text), InvalidRecord)


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        (
            {"note_record_id": "", "source_date": "2026-01-01T00:00:00Z"},
            "note_record_id is missing",
        ),
        ({"note_record_id": "no-slash", "source_date": "2026-01-01T00:00:00Z"}, "domain/id"),
        ({"note_record_id": "a.org/n"}, "source_date is missing"),
        ({"note_record_id": "a.org/n", "source_date": "yesterday"}, "not a date"),
        (
            {"note_record_id": "a.org/n", "source_date": "2026-01-01T00:00:00Z", "status": "fine"},
            "not a PFIF note status",
        ),
        (
            {
                "note_record_id": "a.org/n",
                "source_date": "2026-01-01T00:00:00Z",
                "author_made_contact": "yes",
            },
            "true or false",
        ),
    ],
)
def test_invalid_notes_say_why(fields: dict[str, str], reason: str) -> None:
    raw = RawRecord("note", {"person_record_id": "a.org/p1", **fields}, "1.4", 7)
    record = note_record(raw)
    assert isinstance(record, InvalidRecord)
    assert record.index == 7
    assert any(reason in r for r in record.reasons), record.reasons


def test_a_valid_note() -> None:
    raw = RawRecord(
        "note",
        {
            "note_record_id": "a.org/n",
            "person_record_id": "a.org/p",
            "source_date": "2026-01-01T00:00:00Z",
            "author_made_contact": "TRUE",
            "status": "believed_dead",
            "linked_person_record_id": "b.org/q",
        },
        "1.4",
        1,
    )
    note = note_record(raw)
    assert isinstance(note, NoteRecord)
    assert note.author_made_contact and note.status == "believed_dead"
    assert note.linked_person_record_id == "b.org/q"
