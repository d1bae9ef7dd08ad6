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
- ``linked_person_record_id`` names a person decided "same" as the note's person.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from trace_app.domain import interchange_people
from trace_app.domain.errors import NotFoundError
from trace_app.interchange.pfif import PersonOut, iter_pfif
from trace_app.interchange.pfif_mapping import format_date, pfif_status
from trace_app.store.interchange_models import InterchangeRecord
from trace_app.store.models import Claim, Incident, Person, Report

BATCH = 500


def _person_record_ids(session: Session, incident_id: str, domain: str) -> dict[str, str]:
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


def _imported(
    session: Session, incident_id: str, kind: str, column: Any, ids: Sequence[str]
) -> dict[str, InterchangeRecord]:
    rows = session.scalars(
        select(InterchangeRecord)
        .where(
            InterchangeRecord.incident_id == incident_id,
            InterchangeRecord.kind == kind,
            column.in_(ids),
        )
        .order_by(InterchangeRecord.imported_at, InterchangeRecord.id)
    )
    found: dict[str, InterchangeRecord] = {}
    for row in rows:
        key = row.person_id if kind == "person" else row.report_id
        if key is not None and not (row.fields or {}).get("attached"):
            found.setdefault(key, row)
    return found


def _date(value: Any) -> str:
    if isinstance(value, datetime):
        return format_date(value)
    return str(value or "")


def _description(person: Person, claims: Sequence[Claim]) -> str:
    if not claims:
        return "Recorded in Trace with no reports yet."
    latest = claims[-1]
    where = f" at {latest.location}" if latest.location else ""
    count = len(claims)
    return (
        f"Recorded in Trace from {count} report{'s' if count != 1 else ''}; "
        f"the latest says {latest.status}{where}."
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
    record_ids = _person_record_ids(session, incident_id, domain)
    return _records(session, incident, record_ids, domain, batch)


def _records(
    session: Session,
    incident: Incident,
    record_ids: dict[str, str],
    domain: str,
    batch: int,
) -> Iterator[PersonOut]:
    last = ""
    while True:
        people = list(
            session.scalars(
                select(Person)
                .where(Person.incident_id == incident.id, Person.id > last)
                .order_by(Person.id)
                .limit(batch)
                .options(
                    selectinload(Person.claims)
                    .selectinload(Claim.report)
                    .selectinload(Report.organization)
                )
            )
        )
        if not people:
            return
        last = people[-1].id
        person_ids = [p.id for p in people]
        report_ids = [c.report_id for p in people for c in p.claims]
        person_rows = _imported(
            session, incident.id, "person", InterchangeRecord.person_id, person_ids
        )
        note_rows = _imported(session, incident.id, "note", InterchangeRecord.report_id, report_ids)
        first_hand = interchange_people.first_hand_report_ids(session, report_ids)
        same = interchange_people.same_person_ids(session, person_ids)
        alternates = interchange_people.alternate_names(session, person_ids)
        for person in people:
            yield _person_out(
                person,
                incident,
                record_ids,
                person_rows.get(person.id),
                note_rows,
                first_hand,
                same.get(person.id, []),
                alternates.get(person.id, []),
                domain,
            )
        # let the batch go (the session would otherwise keep every row it loaded)
        for row in [*person_rows.values(), *note_rows.values()]:
            session.expunge(row)
        for person in people:
            for claim in person.claims:
                session.expunge(claim.report)
                session.expunge(claim)
            session.expunge(person)


def _person_out(
    person: Person,
    incident: Incident,
    record_ids: dict[str, str],
    imported: InterchangeRecord | None,
    note_rows: dict[str, InterchangeRecord],
    first_hand: set[str],
    same: Sequence[str],
    alternates: Sequence[str],
    domain: str,
) -> PersonOut:
    claims = sorted(person.claims, key=lambda c: (c.report.reported_at, c.position))
    kept: dict[str, Any] = dict(imported.fields) if imported is not None else {}
    record_id = record_ids[person.id]
    earliest = min((c.report for c in claims), key=lambda r: r.reported_at, default=None)
    if imported is not None:
        entry_date = format_date(imported.imported_at)
    elif earliest is not None:
        entry_date = format_date(min(c.report.published_at for c in claims))
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
        "description": str(kept.get("description") or _description(person, claims)),
    }
    linked = next((record_ids[o] for o in same if o in record_ids), "")
    notes = [
        _note(claim, record_id, note_rows.get(claim.report_id), first_hand, linked, domain)
        for claim in claims
    ]
    return PersonOut(fields=fields, notes=notes)


def _note(
    claim: Claim,
    person_record_id: str,
    imported: InterchangeRecord | None,
    first_hand: set[str],
    linked: str,
    domain: str,
) -> dict[str, str]:
    report = claim.report
    return {
        "note_record_id": imported.record_id if imported is not None else f"{domain}/{claim.id}",
        "person_record_id": person_record_id,
        "linked_person_record_id": linked,
        "entry_date": format_date(report.published_at),
        "author_name": report.organization.name,
        "source_date": format_date(report.reported_at),
        "author_made_contact": "true" if report.id in first_hand else "false",
        "status": pfif_status(claim.status),
        "last_known_location": claim.location,
        "text": report.original_text,
    }


def iter_incident_pfif(
    session: Session, incident_id: str, *, domain: str, batch: int = BATCH
) -> Iterator[bytes]:
    """The incident's PFIF 1.4 document as UTF-8 chunks (NotFoundError before the first)."""
    return iter_pfif(export_records(session, incident_id, domain=domain, batch=batch))
