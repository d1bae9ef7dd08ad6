"""An incident as PFIF 1.4: one person record per person, one note per claim.

:func:`export_records` reads the incident in batches of ``BATCH`` people (a fixed
number of statements per batch) and yields them as the writer's
:class:`~trace_app.interchange.pfif.PersonOut`, so a large incident is never held in
memory; :func:`iter_incident_pfif` adds the writer. The fields are those of
docs/interchange.md:

- a person's ``person_record_id`` is ``<domain>/<person id>``, or the record id it was
  imported with (a clone keeps its id, source name and source date, as PFIF asks);
- a note's ``note_record_id`` is ``<domain>/<claim id>``, or the imported one; its
  ``author_name`` is the report's source, ``source_date`` the report time, ``text`` the
  report's original text, ``status`` the claim's by the one status table
  (:mod:`trace_app.interchange.pfif_mapping`);
- ``author_made_contact`` is true only where the report's latest review decision says a
  person confirmed it first-hand, never from a model's label;
- ``linked_person_record_id`` names a person decided "same" as the note's person;
- a person's ``description`` (unless imported with one) gives the person's status by the
  one rule over its linked group (:mod:`trace_app.domain.status_rule`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.domain import interchange_people
from trace_app.domain.claim_source import joined_to_source
from trace_app.domain.errors import NotFoundError
from trace_app.domain.status_rule import GroupStatus, group_statuses
from trace_app.interchange.pfif import PersonOut, iter_pfif
from trace_app.interchange.pfif_mapping import format_date, pfif_status
from trace_app.store.interchange_models import InterchangeRecord
from trace_app.store.models import Claim, Incident, Organization, Person, Report

BATCH = 500


def person_record_ids(session: Session, incident_id: str, domain: str) -> dict[str, str]:
    """Every person's record id in the incident (a link may name anyone)."""
    ids = {
        pid: f"{domain}/{pid}"
        for pid in session.scalars(select(Person.id).where(Person.incident_id == incident_id))
    }
    rows = session.execute(
        select(InterchangeRecord.person_id, InterchangeRecord.record_id, InterchangeRecord.fields)
        .where(InterchangeRecord.incident_id == incident_id, InterchangeRecord.kind == "person")
        .order_by(InterchangeRecord.imported_at.desc(), InterchangeRecord.id.desc())
    )
    for person_id, record_id, fields in rows:
        # the first record a person was created from names it (not one attached later)
        if person_id is not None and not (fields or {}).get("attached"):
            ids[person_id] = record_id
    return ids


@dataclass(frozen=True, slots=True)
class _Imported:
    """What an imported record kept: its record id, fields and when it came."""

    record_id: str
    fields: dict[str, Any]
    imported_at: datetime


@dataclass(frozen=True, slots=True)
class _PersonRow:
    id: str
    name: str
    age: int | None


@dataclass(frozen=True, slots=True)
class _ClaimRow:
    """A claim with what its note needs of its report and the report's source."""

    id: str
    person_id: str
    report_id: str
    status: str
    location: str
    position: int
    reported_at: datetime
    published_at: datetime
    original_text: str
    source: str


# The two readers below select by the people's or reports' ids alone (ids name one
# incident's records): only those columns' indexes apply, so PostgreSQL reads them by
# index even before it has statistics for rows an import has just written (filtering on
# the incident too let it scan the incident's rows instead, 10 s for 10,000 people).


def _imported_people(session: Session, person_ids: Sequence[str]) -> dict[str, _Imported]:
    """The first record each of these people was created from, by person id; records
    attached to an existing person later do not name it."""
    rows = session.execute(
        select(
            InterchangeRecord.person_id,
            InterchangeRecord.record_id,
            InterchangeRecord.fields,
            InterchangeRecord.imported_at,
        )
        .where(InterchangeRecord.person_id.in_(person_ids), InterchangeRecord.kind == "person")
        .order_by(InterchangeRecord.imported_at, InterchangeRecord.id)
    )
    found: dict[str, _Imported] = {}
    for person_id, record_id, fields, imported_at in rows:
        if person_id is not None and not (fields or {}).get("attached"):
            found.setdefault(person_id, _Imported(record_id, dict(fields or {}), imported_at))
    return found


def _imported_notes(session: Session, report_ids: Sequence[str]) -> dict[str, str]:
    """The record id each of these reports was imported with, by report id."""
    rows = session.execute(
        select(InterchangeRecord.report_id, InterchangeRecord.record_id)
        .where(InterchangeRecord.report_id.in_(report_ids))
        .order_by(InterchangeRecord.imported_at, InterchangeRecord.id)
    )
    found: dict[str, str] = {}
    for report_id, record_id in rows:
        if report_id is not None:
            found.setdefault(report_id, record_id)
    return found


def _claims(session: Session, person_ids: Sequence[str]) -> dict[str, list[_ClaimRow]]:
    """Each person's claims in report-time order (one statement for the batch)."""
    rows = session.execute(
        joined_to_source(
            select(
                Claim.id,
                Claim.person_id,
                Claim.report_id,
                Claim.status,
                Claim.location,
                Claim.position,
                Report.reported_at,
                Report.published_at,
                Report.original_text,
                Organization.name,
            )
        )
        .where(Claim.person_id.in_(person_ids))
        .order_by(Report.reported_at, Claim.position)
    )
    claims: dict[str, list[_ClaimRow]] = {}
    for row in rows:
        values: tuple[Any, ...] = tuple(row)
        claims.setdefault(row.person_id, []).append(_ClaimRow(*values))
    return claims


def _date(value: Any) -> str:
    if isinstance(value, datetime):
        return format_date(value)
    return str(value or "")


def _description(claims: Sequence[_ClaimRow], found: GroupStatus | None, linked: bool) -> str:
    """The person in words: how many reports, and the person's status by the one rule
    (over its linked group, :mod:`trace_app.domain.status_rule`) with its place."""
    count = len(claims)
    if found is None or found.status.status is None:
        return "Recorded in Trace with no reports yet."
    where = f" at {found.location}" if found.location else ""
    group = " about this person and its linked records" if linked else ""
    return (
        f"Recorded in Trace from {count} report{'s' if count != 1 else ''}; "
        f"the latest{group} says {found.status.status.value}{where}."
    )


def export_records(
    session: Session, incident_id: str, *, domain: str, batch: int = BATCH
) -> Iterator[PersonOut]:
    """The incident's people with their notes, in the order people were created
    (their ids), ``batch`` people at a time. Raises :class:`NotFoundError` for an
    unknown incident (before anything is yielded)."""
    incident = session.get(Incident, incident_id)
    if incident is None:
        raise NotFoundError(f"No incident with id {incident_id!r}.")
    record_ids = person_record_ids(session, incident_id, domain)
    return _records(session, incident, record_ids, domain, batch)


def _records(
    session: Session,
    incident: Incident,
    record_ids: dict[str, str],
    domain: str,
    batch: int,
) -> Iterator[PersonOut]:
    """Plain rows, ``batch`` people at a time, in a fixed number of statements each
    (nothing is kept in the session)."""
    last = ""
    while True:
        people = [
            _PersonRow(*row)
            for row in session.execute(
                select(Person.id, Person.name, Person.age)
                .where(Person.incident_id == incident.id, Person.id > last)
                .order_by(Person.id)
                .limit(batch)
            )
        ]
        if not people:
            return
        last = people[-1].id
        person_ids = [p.id for p in people]
        claims = _claims(session, person_ids)
        report_ids = [c.report_id for found in claims.values() for c in found]
        person_rows = _imported_people(session, person_ids)
        note_rows = _imported_notes(session, report_ids)
        first_hand = interchange_people.first_hand_report_ids(session, report_ids)
        same = interchange_people.same_person_ids(session, person_ids)
        statuses = group_statuses(session, person_ids)
        alternates = interchange_people.alternate_names(session, person_ids)
        for person in people:
            yield _person_out(
                person,
                claims.get(person.id, []),
                incident,
                record_ids,
                person_rows.get(person.id),
                note_rows,
                first_hand,
                same.get(person.id, []),
                alternates.get(person.id, []),
                domain,
                statuses.get(person.id),
            )


def _person_out(
    person: _PersonRow,
    claims: Sequence[_ClaimRow],
    incident: Incident,
    record_ids: dict[str, str],
    imported: _Imported | None,
    note_rows: dict[str, str],
    first_hand: set[str],
    same: Sequence[str],
    alternates: Sequence[str],
    domain: str,
    status: GroupStatus | None,
) -> PersonOut:
    kept: dict[str, Any] = imported.fields if imported is not None else {}
    record_id = record_ids[person.id]
    earliest = claims[0] if claims else None
    if imported is not None:
        entry_date = format_date(imported.imported_at)
    elif claims:
        entry_date = format_date(min(c.published_at for c in claims))
    else:
        entry_date = format_date(incident.created_at)
    age_text = str(kept.get("age_text", ""))
    if person.age is None:
        age = ""
    elif age_text and kept.get("age") == person.age:
        age = age_text
    else:
        age = str(person.age)
    names = list(dict.fromkeys([*alternates, *kept.get("alternate_names", [])]))
    fields = {
        "person_record_id": record_id,
        "entry_date": entry_date,
        "source_name": str(kept.get("source_name") or domain),
        "source_date": _date(kept.get("source_date"))
        or format_date(earliest.reported_at if earliest is not None else incident.created_at),
        "full_name": person.name,
        "given_name": str(kept.get("given_name", "")),
        "family_name": str(kept.get("family_name", "")),
        "alternate_names": "\n".join(n for n in names if n != person.name),
        "age": age,
        "description": str(kept.get("description") or _description(claims, status, bool(same))),
    }
    linked = next((record_ids[o] for o in same if o in record_ids), "")
    notes = [
        _note(claim, record_id, note_rows.get(claim.report_id), first_hand, linked, domain)
        for claim in claims
    ]
    return PersonOut(fields=fields, notes=notes)


def _note(
    claim: _ClaimRow,
    person_record_id: str,
    imported: str | None,
    first_hand: set[str],
    linked: str,
    domain: str,
) -> dict[str, str]:
    return {
        "note_record_id": imported if imported is not None else f"{domain}/{claim.id}",
        "person_record_id": person_record_id,
        "linked_person_record_id": linked,
        "entry_date": format_date(claim.published_at),
        "author_name": claim.source,
        "source_date": format_date(claim.reported_at),
        "author_made_contact": "true" if claim.report_id in first_hand else "false",
        "status": pfif_status(claim.status),
        "last_known_location": claim.location,
        "text": claim.original_text,
    }


EXPORT_VERSIONS = ("1.4", "1.3")


def iter_incident_pfif(
    session: Session, incident_id: str, *, domain: str, batch: int = BATCH, version: str = "1.4"
) -> Iterator[bytes]:
    """The incident's PFIF document (1.4, or 1.3 for older consumers) as UTF-8 chunks
    (NotFoundError before the first)."""
    records = export_records(session, incident_id, domain=domain, batch=batch)
    if version == "1.3":
        records = (_as_1_3(person) for person in records)
    return iter_pfif(records, version=version)


def _as_1_3(person: PersonOut) -> PersonOut:
    """PFIF 1.3 has no ``alternate_names``: they are kept in the description (``other``)."""
    names = person.fields.get("alternate_names", "")
    if not names:
        return person
    # one line: Person Finder's validator takes a text field to be one line
    also = "Also known as: " + "; ".join(names.splitlines()) + "."
    description = person.fields.get("description", "")
    fields = {**person.fields, "description": f"{description} {also}" if description else also}
    return PersonOut(fields=fields, notes=person.notes)
