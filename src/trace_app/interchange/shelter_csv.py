"""Shelter lists as CSV: one row per person, columns named as Person Finder's CSV import
names them (PFIF 1.4 field names), read into the same records as a PFIF document.

========================  =============================================================
column (any case)          meaning
========================  =============================================================
``full_name``              the person's name (or ``given_name`` and ``family_name``)
``given_name``             given name(s); with ``family_name`` when there is no full name
``family_name``            family name
``alternate_names``        other names, separated by ``;`` or line breaks
``age``                    years, or a range such as ``30-40`` (its middle is kept)
``person_record_id``       optional; default ``<domain>/csv.<hash of source, name, age>``
``status``                 a Trace status (``safe`` ...) or a PFIF note status; default
                           ``safe`` (the list says the person is at the shelter)
``last_known_location``    where the person is (the shelter)
``text``                   the row's words; default "Listed by <source> ..."
``source_date``            when the list said so (``2026-07-15T07:30:00Z``); default now
``note_record_id``         optional; default ``<domain>/csv.<hash of the row's values>``
========================  =============================================================

A ``source_date`` is checked as a PFIF note's is, by the one date rule
(:func:`trace_app.domain.dates.parse_datetime` through
:func:`~trace_app.interchange.pfif_mapping.parse_date`): any offset, a time without one is
UTC, and it must fall within the years 2-9998 in UTC; a row outside that range (such as
``0001-01-01T00:00:00+14:00``) is a bad row reported by its line, never an overflow.

A contact column (``phone``, ``email`` and the like, :data:`CONTACT_COLUMNS`) refuses the
whole file: Trace keeps no contact details yet, and a list's phone numbers must not be
dropped without a word. Other columns are ignored and named in
:attr:`ShelterRows.ignored_columns`. The file
must be UTF-8 (a byte order mark is allowed). Every row is numbered by the line it ends
on, so a bad row is reported by that number.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO

from trace_app.interchange.pfif import PfifError, PfifTooLargeError, RawRecord
from trace_app.interchange.pfif_mapping import format_date
from trace_app.store.models import ClaimStatus

COLUMNS: tuple[str, ...] = (
    "full_name",
    "given_name",
    "family_name",
    "alternate_names",
    "age",
    "person_record_id",
    "status",
    "last_known_location",
    "text",
    "source_date",
    "note_record_id",
)
# Columns that hold a way to reach someone: refused, never silently dropped.
CONTACT_COLUMNS: frozenset[str] = frozenset(
    {
        "phone",
        "phone_number",
        "telephone",
        "tel",
        "mobile",
        "cell",
        "whatsapp",
        "email",
        "e-mail",
        "email_address",
        "contact",
        "author_phone",
        "author_email",
        "phone_of_found_person",
        "email_of_found_person",
    }
)
DEFAULT_STATUS = ClaimStatus.SAFE
TRACE_STATUS_FIELD = "trace_status"


def human_size(size: int) -> str:
    """A file size as a person reads it: ``64 MB``, ``1.5 kB``, ``109 B`` (powers of 1024,
    as the limits are set)."""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            break
        value /= 1024
    if unit == "B":
        return f"{size} B"
    return f"{value:.1f}".removesuffix(".0") + f" {unit}"


class CsvError(PfifError):
    """A CSV file that cannot be read at all (not UTF-8, no header, too large)."""

    code = "csv_invalid"


@dataclass(slots=True)
class ShelterRows:
    """The rows as person records (each with its one note) with the row's own problems
    (a row with more values than the header has columns), and the ignored columns."""

    records: Iterator[tuple[RawRecord, tuple[str, ...]]]
    ignored_columns: list[str] = field(default_factory=list)


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:20]


def _row_record(row: dict[str, str], line: int, source: str, domain: str, now: str) -> RawRecord:
    values = {k: v.strip() for k, v in row.items() if v and v.strip()}
    name = values.get("full_name") or " ".join(
        p for p in (values.get("given_name", ""), values.get("family_name", "")) if p
    )
    age = values.get("age", "")
    person_id = values.get("person_record_id") or (
        f"{domain}/csv.{_digest(source, ' '.join(name.casefold().split()), age)}"
    )
    person: dict[str, str] = {
        k: values[k] for k in ("full_name", "given_name", "family_name", "age") if k in values
    }
    person["person_record_id"] = person_id
    person["source_name"] = source
    if "alternate_names" in values:
        person["alternate_names"] = "\n".join(
            n.strip() for n in values["alternate_names"].replace(";", "\n").splitlines()
        )
    status = values.get("status", DEFAULT_STATUS.value).lower()
    when = values.get("source_date", now)
    location = values.get("last_known_location", "")
    text = values.get("text") or (
        f"Listed by {source} on its shelter list"
        + (f" at {location}" if location else "")
        + f" (line {line})."
    )
    # the same row of the same list gives the same id, whatever its line or the time now
    row_key = _digest(
        source, person_id, status, location, values.get("text", ""), values.get("source_date", "")
    )
    note: dict[str, str] = {
        "note_record_id": values.get("note_record_id") or f"{domain}/csv.{row_key}",
        "person_record_id": person_id,
        "author_name": source,
        "source_date": when,
        "last_known_location": location,
        "text": text,
    }
    if status in {s.value for s in ClaimStatus}:
        note[TRACE_STATUS_FIELD] = status
    else:
        note["status"] = status  # a PFIF status, checked (and mapped) like any note's
    record = RawRecord("person", person, "csv", line)
    record.notes.append(RawRecord("note", note, "csv", line, nested=True))
    return record


def read_shelter_csv(
    source: IO[bytes], *, source_name: str, domain: str, max_bytes: int, now: str = ""
) -> ShelterRows:
    """Read the whole file (at most ``max_bytes``) and return its rows as records.
    Raises :class:`CsvError` for a file that is not UTF-8 or has no header row, and
    :class:`PfifTooLargeError` for one that is too large."""
    data = source.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise PfifTooLargeError(
            f"The CSV file is larger than the limit of {human_size(max_bytes)}."
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CsvError(f"The CSV file is not UTF-8 (byte {exc.start} cannot be read).") from exc
    reader = csv.DictReader(io.StringIO(text, newline=""), restkey="\x00extra")
    header = reader.fieldnames
    if not header:
        raise CsvError("The CSV file has no header row.")
    normal = [h.strip().lower() for h in header]
    if not ({"full_name", "given_name", "family_name"} & set(normal)):
        raise CsvError(
            "The CSV header names no full_name (nor given_name, family_name) column; see "
            "docs/interchange.md for the columns."
        )
    contact = [h for h in normal if h in CONTACT_COLUMNS]
    if contact:
        raise CsvError(
            f"The file has a contact column ({', '.join(contact)}). Trace does not keep phone "
            "numbers or e-mail addresses yet, and will not drop them without a word: remove "
            "the column (keep the original for whoever needs it) and upload the file again."
        )
    reader.fieldnames = normal
    ignored = [h for h in normal if h not in COLUMNS]
    stamp = now or format_date(datetime.now(UTC))

    def rows() -> Iterator[tuple[RawRecord, tuple[str, ...]]]:
        for row in reader:
            extra = row.get("\x00extra")
            values = {k: v for k, v in row.items() if k in COLUMNS and isinstance(v, str)}
            record = _row_record(values, reader.line_num, source_name, domain, stamp)
            problems = (f"the row has {len(extra)} more values than columns",) if extra else ()
            yield record, problems

    return ShelterRows(records=rows(), ignored_columns=ignored)
