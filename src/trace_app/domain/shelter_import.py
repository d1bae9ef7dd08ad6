"""Import a shelter list (CSV; its columns in :mod:`trace_app.interchange.shelter_csv`)
by the rules of a PFIF import (:mod:`trace_app.domain.pfif_import`): each row is a
person with one note, invalid rows are listed by line number, all or nothing unless
``skip_invalid``; the same file twice adds nothing. Audited as ``csv.import``."""

from __future__ import annotations

from typing import IO

from pydantic import ValidationError
from sqlalchemy.orm import Session

from trace_app.domain import pfif_import
from trace_app.domain.audit import Actor
from trace_app.domain.errors import InvalidInputError, NotFoundError
from trace_app.domain.organizations import may_act_in
from trace_app.domain.organizations import refusal as organization_refusal
from trace_app.domain.pfif_import import (
    Importer,
    ImportRefusedError,
    ImportSummary,
    Progress,
    audit_import,
    validation_reasons,
)
from trace_app.domain.publish import PersonInput
from trace_app.interchange.pfif import DEFAULT_MAX_BYTES, RawRecord
from trace_app.interchange.pfif_mapping import (
    InvalidRecord,
    NoteRecord,
    PersonRecord,
    claim_status,
    note_record,
    person_record,
)
from trace_app.interchange.shelter_csv import TRACE_STATUS_FIELD, read_shelter_csv
from trace_app.store.models import ClaimStatus, Incident


def _row_problems(importer: Importer, raw: RawRecord) -> list[str]:
    """Why a shelter-list row (a person and its one note) cannot be imported, if it
    cannot: the record rules, then the report the note would become."""
    person = person_record(raw)
    note = note_record(raw.notes[0])
    reasons = [
        r
        for checked in (person, note)
        if isinstance(checked, InvalidRecord)
        for r in checked.reasons
    ]
    if reasons or not isinstance(person, PersonRecord) or not isinstance(note, NoteRecord):
        return reasons
    override = raw.notes[0].fields.get(TRACE_STATUS_FIELD)
    status = ClaimStatus(override) if override else claim_status(note)
    try:
        PersonInput(name=person.full_name, age=person.age)
        importer.publish_input(note, person.full_name, None, status)
    except ValidationError as exc:
        return list(validation_reasons(exc))
    return []


def import_shelter_csv(
    session: Session,
    incident_id: str,
    source: IO[bytes],
    *,
    source_name: str,
    domain: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    skip_invalid: bool = False,
    actor: Actor,
    progress: Progress | None = None,
    own_sources_only: bool = False,
) -> ImportSummary:
    """Import a shelter list (CSV, columns in :mod:`trace_app.interchange.shelter_csv`;
    audited as ``csv.import``)
    as reports from ``source_name``, by the same rules as a PFIF import: each row is a
    person with one note, invalid rows are listed by line number (``index``), all or
    nothing unless ``skip_invalid``; the same file twice adds nothing. ``progress`` is
    told the rows read after each chunk."""
    incident = session.get(Incident, incident_id)
    if incident is None:
        raise NotFoundError(f"No incident with id {incident_id!r}.")
    try:
        PersonInput(name=source_name)
    except ValidationError as exc:
        raise InvalidInputError(
            "The source name is not valid: " + "; ".join(validation_reasons(exc))
        ) from exc
    if not source_name.strip():
        raise InvalidInputError("Name the source of the shelter list (--source).")
    if own_sources_only and not may_act_in(session, source_name, incident.id):
        raise InvalidInputError(organization_refusal(source_name))
    rows = read_shelter_csv(source, source_name=source_name, domain=domain, max_bytes=max_bytes)
    importer = Importer(session, incident, domain, own_sources_only=own_sources_only)
    for column in rows.ignored_columns:
        importer.summary.skip("column", column, "not a column Trace reads; ignored")
    valid: list[RawRecord] = []
    read = 0
    for raw, problems in rows.records:
        read += 1
        # a row is one person and one note: refused whole, before anything is added
        reasons = [*problems, *_row_problems(importer, raw)]
        if reasons:
            importer.summary.refuse(InvalidRecord("row", raw.record_id, raw.index, tuple(reasons)))
            continue
        valid.append(raw)
        if len(valid) == pfif_import.CHUNK:
            importer.chunk(valid)
            valid = []
            if progress is not None:
                progress(read)
    importer.chunk(valid)
    if progress is not None:
        progress(read)
    if importer.summary.invalid_count and not skip_invalid:
        raise ImportRefusedError(importer.summary, unit="row")
    session.flush()
    audit_import(session, actor, "csv.import", incident, importer.summary)
    return importer.summary
