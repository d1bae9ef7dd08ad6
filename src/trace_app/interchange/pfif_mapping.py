"""Between PFIF records and Trace's terms: typed records, dates, and the one status table.

The claim status <-> PFIF note status table (:data:`STATUS_TABLE`) is the only place
either direction is decided; docs/interchange.md prints it and says why.

=========  ==================  =========================================================
Trace      written as          read back from
=========  ==================  =========================================================
missing    believed_missing    believed_missing, information_sought
seen       (no status)         no status, when the note has a last_known_location or
                               author_made_contact is true (otherwise it is a comment)
safe       believed_alive      believed_alive, is_note_author
admitted   believed_alive      (nothing: read back as safe)
deceased   believed_dead       believed_dead
=========  ==================  =========================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from trace_app.domain.dates import DateError, parse_datetime
from trace_app.interchange.pfif import RawRecord
from trace_app.store.models import ClaimStatus

MAX_RECORD_ID_CHARACTERS = 500
# "domain/local": a domain name, a slash, then any local id without whitespace.
_RECORD_ID = re.compile(r"^[^\s/]+/\S+$")
_AGE = re.compile(r"^(\d{1,3})(?:-(\d{1,3}))?$")
NOTE_STATUSES = frozenset(
    {
        "",
        "information_sought",
        "is_note_author",
        "believed_alive",
        "believed_missing",
        "believed_dead",
    }
)


@dataclass(frozen=True, slots=True)
class StatusRow:
    claim: ClaimStatus
    written_as: str
    read_from: tuple[str, ...]


STATUS_TABLE: tuple[StatusRow, ...] = (
    StatusRow(ClaimStatus.MISSING, "believed_missing", ("believed_missing", "information_sought")),
    StatusRow(ClaimStatus.SEEN, "", ("",)),
    StatusRow(ClaimStatus.SAFE, "believed_alive", ("believed_alive", "is_note_author")),
    StatusRow(ClaimStatus.ADMITTED, "believed_alive", ()),
    StatusRow(ClaimStatus.DECEASED, "believed_dead", ("believed_dead",)),
)
_WRITTEN = {row.claim: row.written_as for row in STATUS_TABLE}
_READ = {status: row.claim for row in STATUS_TABLE for status in row.read_from}


def pfif_status(claim: ClaimStatus | str) -> str:
    """The PFIF note status a claim is written with ('' for none)."""
    return _WRITTEN[ClaimStatus(claim)]


def claim_status(note: NoteRecord) -> ClaimStatus | None:
    """The claim a note becomes, or None for a note Trace keeps no claim for (a comment
    with no status, no location and no contact)."""
    if not note.status and not (note.last_known_location or note.author_made_contact):
        return None
    return _READ[note.status]


def format_date(value: datetime) -> str:
    """PFIF's UTC date form, ``2026-07-15T07:30:00Z``."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_date(text: str) -> datetime:
    """A PFIF date (``YYYY-MM-DDThh:mm:ssZ``; fractions and offsets are accepted, a time
    without a zone is UTC) in UTC, checked by the one date rule
    (:func:`trace_app.domain.dates.parse_datetime`: within the years 2-9998 in UTC, so an
    extreme offset such as ``0001-01-01T00:00:00+14:00`` is refused, not an overflow).
    Raises :class:`~trace_app.domain.dates.DateError` (a ValueError)."""
    return parse_datetime(text, naive_zone=UTC)


@dataclass(frozen=True, slots=True)
class InvalidRecord:
    """A record that cannot be imported: which one (kind, id, position) and why."""

    kind: str
    record_id: str
    index: int
    reasons: tuple[str, ...]

    def describe(self) -> str:
        name = self.record_id or f"{self.kind} #{self.index} (no record id)"
        return f"{self.kind} {name}: " + "; ".join(self.reasons)


@dataclass(frozen=True, slots=True)
class PersonRecord:
    record_id: str
    full_name: str
    given_name: str = ""
    family_name: str = ""
    alternate_names: tuple[str, ...] = ()
    age: int | None = None
    age_text: str = ""
    description: str = ""
    source_name: str = ""
    source_date: datetime | None = None
    entry_date: datetime | None = None
    index: int = 0


@dataclass(frozen=True, slots=True)
class NoteRecord:
    record_id: str
    person_record_id: str
    author_name: str = ""
    source_date: datetime | None = None
    status: str = ""
    text: str = ""
    last_known_location: str = ""
    author_made_contact: bool = False
    linked_person_record_id: str = ""
    entry_date: datetime | None = None
    index: int = 0


def _record_id_problem(value: str, field: str) -> str | None:
    if not value:
        return f"{field} is missing"
    if len(value) > MAX_RECORD_ID_CHARACTERS or not _RECORD_ID.fullmatch(value):
        return f"{field} must look like 'domain/id' (at most {MAX_RECORD_ID_CHARACTERS} characters)"
    return None


def _date(fields: dict[str, str], name: str, problems: list[str]) -> datetime | None:
    text = fields.get(name, "")
    if not text:
        return None
    try:
        return parse_date(text)
    except DateError as exc:
        problems.append(f"{name} {str(exc).rstrip('.')}")
        return None


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _age(text: str) -> int | None:
    """A single age in years; a range ("35-45") gives its middle, rounded down."""
    match = _AGE.fullmatch(text.replace(" ", ""))
    if match is None:
        raise ValueError(text)
    low = int(match.group(1))
    high = int(match.group(2) or low)
    if high < low:
        raise ValueError(text)
    return (low + high) // 2


def person_record(raw: RawRecord) -> PersonRecord | InvalidRecord:
    """A person element as a :class:`PersonRecord`, or why it cannot be one.

    The name is ``full_name``'s first line, else ``given_name family_name`` (PFIF 1.1 and
    1.2 have no full name); further lines of ``full_name`` join ``alternate_names``."""
    fields = raw.fields
    problems: list[str] = []
    record_id = fields.get("person_record_id", "")
    if (problem := _record_id_problem(record_id, "person_record_id")) is not None:
        problems.append(problem)
    names = _lines(fields.get("full_name", ""))
    given, family = fields.get("given_name", ""), fields.get("family_name", "")
    if not names and (given or family):
        names = [" ".join(part for part in (given, family) if part)]
    if not names:
        problems.append("the person has no full_name (nor given_name and family_name)")
    age: int | None = None
    age_text = fields.get("age", "")
    if age_text:
        try:
            age = _age(age_text)
        except ValueError:
            problems.append(f"age {age_text[:20]!r} is not a number of years or a range")
    source_date = _date(fields, "source_date", problems)
    entry_date = _date(fields, "entry_date", problems)
    if problems:
        return InvalidRecord("person", record_id, raw.index, tuple(problems))
    alternates = [*names[1:], *_lines(fields.get("alternate_names", ""))]
    return PersonRecord(
        record_id=record_id,
        full_name=names[0],
        given_name=given,
        family_name=family,
        alternate_names=tuple(dict.fromkeys(n for n in alternates if n != names[0])),
        age=age,
        age_text=age_text,
        description=fields.get("description", ""),
        source_name=fields.get("source_name", ""),
        source_date=source_date,
        entry_date=entry_date,
        index=raw.index,
    )


def note_record(raw: RawRecord) -> NoteRecord | InvalidRecord:
    """A note element as a :class:`NoteRecord`, or why it cannot be one."""
    fields = raw.fields
    problems: list[str] = []
    record_id = fields.get("note_record_id", "")
    if (problem := _record_id_problem(record_id, "note_record_id")) is not None:
        problems.append(problem)
    person_id = fields.get("person_record_id", "")
    if (problem := _record_id_problem(person_id, "person_record_id")) is not None:
        problems.append(problem)
    linked = fields.get("linked_person_record_id", "")
    if linked and (problem := _record_id_problem(linked, "linked_person_record_id")):
        problems.append(problem)
    status = fields.get("status", "")
    if status not in NOTE_STATUSES:
        problems.append(f"status {status[:40]!r} is not a PFIF note status")
    contact_text = fields.get("author_made_contact", "").lower()
    if contact_text not in {"", "true", "false"}:
        problems.append("author_made_contact must be true or false")
    source_date = _date(fields, "source_date", problems)
    if source_date is None and "source_date" not in fields:
        problems.append("source_date is missing")
    entry_date = _date(fields, "entry_date", problems)
    if problems:
        return InvalidRecord("note", record_id, raw.index, tuple(problems))
    return NoteRecord(
        record_id=record_id,
        person_record_id=person_id,
        author_name=fields.get("author_name", ""),
        source_date=source_date,
        status=status,
        text=fields.get("text", ""),
        last_known_location=fields.get("last_known_location", ""),
        author_made_contact=contact_text == "true",
        linked_person_record_id=linked,
        entry_date=entry_date,
        index=raw.index,
    )


def person_fields(person: PersonRecord) -> dict[str, str]:
    """A person's PFIF 1.4 fields (what the writer takes)."""
    return {
        "person_record_id": person.record_id,
        "entry_date": format_date(person.entry_date) if person.entry_date else "",
        "source_name": person.source_name,
        "source_date": format_date(person.source_date) if person.source_date else "",
        "full_name": person.full_name,
        "given_name": person.given_name,
        "family_name": person.family_name,
        "alternate_names": "\n".join(person.alternate_names),
        "age": person.age_text or ("" if person.age is None else str(person.age)),
        "description": person.description,
    }


def note_fields(note: NoteRecord) -> dict[str, str]:
    """A note's PFIF 1.4 fields (what the writer takes)."""
    return {
        "note_record_id": note.record_id,
        "person_record_id": note.person_record_id,
        "linked_person_record_id": note.linked_person_record_id,
        "entry_date": format_date(note.entry_date) if note.entry_date else "",
        "author_name": note.author_name,
        "source_date": format_date(note.source_date) if note.source_date else "",
        "author_made_contact": "true" if note.author_made_contact else "false",
        "status": note.status,
        "last_known_location": note.last_known_location,
        "text": note.text,
    }
