"""Importing PFIF 1.1-1.4 into an incident: persons become people, notes become reports.

:func:`import_pfif` reads the document as a stream (:func:`~trace_app.interchange.pfif.
read_pfif`), ``CHUNK`` records at a time (:class:`Importer`), and, in the caller's
transaction:

- a **person** record becomes a person by the identity matching rule
  (:func:`trace_app.domain.interchange_people.match_person`): attached to an existing
  person only on a confident match, otherwise a new person; never a silent merge. New
  people with look-alikes are listed in ``flagged``;
- a **note** becomes a report from its author (``author_name``, else the domain of its
  record id) through :func:`~trace_app.domain.publish.publish_reports` (a chunk's notes
  together, by the rule of the form's ``publish_report``), so its claim opens and closes
  alerts by the one rule; the status comes back by the one table
  (:mod:`trace_app.interchange.pfif_mapping`); a note with ``linked_person_record_id``
  is imported and the link is only flagged (a person decides "same" in Trace);
- every record is named by its record id (``interchange_records``), so importing the
  same file again adds nothing: a record already imported, or one of this incident's own
  (``<domain>/<id>``), is skipped and said so.

The import is all or nothing: any invalid record raises :class:`ImportRefusedError`
(whose summary lists every invalid record by id), and the caller rolls back. With
``skip_invalid`` the valid records are kept and the invalid ones listed. A document that
cannot be read raises a :class:`~trace_app.interchange.pfif.PfifError`. The caller
commits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from pydantic import ValidationError
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from trace_app.domain import audit, interchange_people
from trace_app.domain.audit import Actor
from trace_app.domain.errors import NotFoundError, PublishError, TraceError
from trace_app.domain.identity import MAX_ALTERNATE_NAMES, NameIndex
from trace_app.domain.organizations import require_may_act_in
from trace_app.domain.publish import (
    PersonInput,
    PublishReportInput,
    publish_reports,
    validate_report,
)
from trace_app.domain.text import MAX_SUMMARY_CHARACTERS, clean_name, name_key
from trace_app.interchange.pfif import DEFAULT_MAX_BYTES, RawRecord, read_pfif
from trace_app.interchange.pfif_mapping import (
    InvalidRecord,
    NoteRecord,
    PersonRecord,
    claim_status,
    format_date,
    note_record,
    person_record,
)
from trace_app.interchange.shelter_csv import TRACE_STATUS_FIELD
from trace_app.store.interchange_models import InterchangeRecord
from trace_app.store.models import Claim, ClaimStatus, Incident, Person
from trace_app.store.sql import in_values
from trace_app.store.types import new_id

# At most this many flagged, skipped and invalid entries are listed (all are counted).
MAX_LISTED = 1000
# Records read, checked against the database and published together.
CHUNK = 500
# Told, after each chunk and at the end, how many records (PFIF persons and top-level
# notes; shelter-list rows) the import has read so far: a command's progress bar.
Progress = Callable[[int], None]
# Look-alikes are looked for among the first this many people an import adds (each look
# compares with the whole incident); the People page shows them for everyone.
MAX_LOOK_ALIKE_CHECKS = 200


@dataclass(frozen=True, slots=True)
class Skipped:
    kind: str
    record_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Flagged:
    """Something a person should look at: a look-alike, a person attached to an existing
    one, or a link another system made."""

    record_id: str
    person_id: str
    name: str
    reason: str


@dataclass(slots=True)
class ImportSummary:
    incident_id: str
    people_added: int = 0
    people_matched: int = 0
    notes_added: int = 0
    skipped_count: int = 0
    invalid_count: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    invalid: list[InvalidRecord] = field(default_factory=list)
    flagged: list[Flagged] = field(default_factory=list)

    def skip(self, kind: str, record_id: str, reason: str) -> None:
        self.skipped_count += 1
        if len(self.skipped) < MAX_LISTED:
            self.skipped.append(Skipped(kind, record_id, reason))

    def refuse(self, record: InvalidRecord) -> None:
        self.invalid_count += 1
        if len(self.invalid) < MAX_LISTED:
            self.invalid.append(record)

    def flag(self, item: Flagged) -> None:
        if len(self.flagged) < MAX_LISTED:
            self.flagged.append(item)

    def headline(self, *, saved: bool) -> str:
        """The counts in words: what was done (``saved``), or for a dry run or a refused
        file what *would* have been done, with nothing saved."""
        if saved:
            return (
                f"people added: {self.people_added}, attached to existing people: "
                f"{self.people_matched}, notes added: {self.notes_added}, "
                f"skipped: {self.skipped_count}, invalid: {self.invalid_count}"
            )
        return (
            f"nothing was saved; the import would have added {self.people_added} "
            f"{'person' if self.people_added == 1 else 'people'}, attached "
            f"{self.people_matched} to existing people and added {self.notes_added} "
            f"note{'' if self.notes_added == 1 else 's'} (skipped: {self.skipped_count}, "
            f"invalid: {self.invalid_count})"
        )

    def lines(self, *, by_line: bool = False, saved: bool = True) -> list[str]:
        """The summary in words, for the command line (``by_line``: invalid records
        named by their line, for a CSV file; ``saved``: false for a dry run or a refused
        file, whose counts say what would have happened)."""
        out = [self.headline(saved=saved)]
        out += [f"skipped {s.kind} {s.record_id}: {s.reason}" for s in self.skipped]
        if by_line:
            out += [f"line {r.index}: " + "; ".join(r.reasons) for r in self.invalid]
        else:
            out += [f"invalid {r.describe()}" for r in self.invalid]
        out += [
            f"flagged {f.record_id} ({f.name}, {f.person_id}): {f.reason}" for f in self.flagged
        ]
        return out


class ImportRefusedError(TraceError, ValueError):
    """The file holds invalid records and ``skip_invalid`` was not given; nothing is kept."""

    code = "invalid_records"
    http_status = 422

    def __init__(self, summary: ImportSummary, *, unit: str = "record") -> None:
        count = summary.invalid_count
        by = "line number" if unit == "row" else "record id"
        super().__init__(
            f"Nothing was imported: {count} {unit}{'s are' if count != 1 else ' is'} not "
            f"valid (listed by {by}). Fix them, or import with --skip-invalid "
            f"(skip_invalid=true) to keep only the valid {unit}s."
        )
        self.summary = summary


def validation_reasons(error: ValidationError) -> tuple[str, ...]:
    """A pydantic error's messages, each after its field's name."""
    reasons = []
    for item in error.errors():
        where = ".".join(str(p) for p in item.get("loc", ()) if not isinstance(p, int))
        reasons.append(f"{where or 'record'}: {item.get('msg', 'is not valid')}")
    return tuple(reasons)


def _summary_line(text: str, fallback: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if not first:
        return fallback
    if len(first) > MAX_SUMMARY_CHARACTERS:
        return first[: MAX_SUMMARY_CHARACTERS - 1].rstrip() + "\u2026"
    return first


def _person_fields(record: PersonRecord) -> dict[str, Any]:
    return {
        "given_name": record.given_name,
        "family_name": record.family_name,
        "description": record.description,
        "age": record.age,
        "age_text": record.age_text,
        "alternate_names": list(record.alternate_names),
        "source_name": record.source_name,
        "source_date": format_date(record.source_date) if record.source_date else "",
    }


@dataclass(frozen=True, slots=True)
class _PersonRef:
    """A person a record of the file is about (ids and names only: a large file's
    people are not all kept in memory)."""

    id: str
    name: str


@dataclass(frozen=True, slots=True)
class _Pending:
    """A note that has passed every check, waiting to be published with its chunk."""

    record: NoteRecord
    person: _PersonRef
    data: PublishReportInput


def _chunks(records: Iterable[RawRecord], size: int) -> Iterator[list[RawRecord]]:
    chunk: list[RawRecord] = []
    for record in records:
        chunk.append(record)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class Importer:
    """Imports a file chunk by chunk (:meth:`chunk`): what the database already holds of
    a chunk's record ids is read in a few statements, its people are matched through one
    :class:`~trace_app.domain.identity.NameIndex`, and its notes are published together
    (:func:`~trace_app.domain.publish.publish_reports`), by the same rules as one at a
    time."""

    def __init__(
        self, session: Session, incident: Incident, domain: str, *, own_sources_only: bool = False
    ) -> None:
        self.session = session
        # a member of some incidents imports under names of this incident only
        self.own_sources_only = own_sources_only
        self.incident = incident
        self.prefix = f"{domain}/"
        self.summary = ImportSummary(incident_id=incident.id)
        self.people: dict[str, _PersonRef] = {}
        self.notes_seen: set[str] = set()
        self.deferred: list[RawRecord] = []
        self.pending: list[_Pending] = []
        # the chunk's interchange_records rows, inserted together once their people and
        # reports are written (no relationship orders them after those)
        self.records: list[dict[str, Any]] = []
        self.names: NameIndex | None = None
        # what the database holds of the current chunk's record ids (see _prefetch)
        self.asked: set[tuple[str, str]] = set()
        self.recorded: dict[tuple[str, str], _PersonRef | None] = {}
        self.own_people: dict[str, _PersonRef] = {}
        self.own_claims: set[str] = set()

    # -- lookups -------------------------------------------------------------------
    def _own(self, record_id: str) -> str | None:
        return record_id[len(self.prefix) :] if record_id.startswith(self.prefix) else None

    def _prefetch(self, chunk: Sequence[RawRecord]) -> None:
        """Read, in a fixed number of statements, which of the chunk's record ids were
        imported before or name this incident's own people and claims, and the people
        the chunk's names may match."""
        persons: set[str] = set()
        notes: set[str] = set()
        names: set[str] = set()
        for raw in chunk:
            if raw.kind == "person":
                persons.add(raw.record_id)
                record = person_record(raw)
                if isinstance(record, PersonRecord):
                    names.add(name_key(clean_name(record.full_name)))
            else:
                notes.add(raw.record_id)
            for note in raw.notes:
                notes.add(note.record_id)
            person_id = raw.fields.get("person_record_id", "")
            if raw.kind == "note" and person_id:
                persons.add(person_id)
        persons.discard("")
        notes.discard("")
        self.asked = {("person", r) for r in persons} | {("note", r) for r in notes}
        self.recorded = {}
        for kind, wanted in (("person", persons), ("note", notes)):
            if not wanted:
                continue
            rows = self.session.execute(
                select(InterchangeRecord.record_id, Person.id, Person.name)
                .outerjoin(Person, Person.id == InterchangeRecord.person_id)
                .where(
                    InterchangeRecord.incident_id == self.incident.id,
                    InterchangeRecord.kind == kind,
                    in_values(InterchangeRecord.record_id, wanted),
                )
            )
            for record_id, person_id, name in rows:
                ref = _PersonRef(person_id, name) if person_id is not None else None
                self.recorded[(kind, record_id)] = ref
        own_people = sorted({local for r in persons if (local := self._own(r))})
        own_claims = sorted({local for r in notes if (local := self._own(r))})
        self.own_people = {
            pid: _PersonRef(pid, name)
            for pid, name in self.session.execute(
                select(Person.id, Person.name).where(
                    Person.incident_id == self.incident.id, in_values(Person.id, own_people)
                )
            )
        }
        self.own_claims = set(
            self.session.scalars(
                select(Claim.id).where(
                    Claim.incident_id == self.incident.id, in_values(Claim.id, own_claims)
                )
            )
        )
        self.names = NameIndex(self.session, self.incident.id, names)

    def _recorded(self, kind: str, record_id: str) -> tuple[bool, _PersonRef | None]:
        """Whether the record was imported into this incident before, and its person
        (from :meth:`_prefetch`, which every record looked up here went through)."""
        key = (kind, record_id)
        assert key in self.asked, f"{kind} {record_id} was not prefetched"
        return key in self.recorded, self.recorded.get(key)

    def _known_person(self, record_id: str) -> tuple[_PersonRef, str] | None:
        if record_id in self.people:
            return self.people[record_id], "appears earlier in this file"
        found, ref = self._recorded("person", record_id)
        if found and ref is not None:
            return ref, "already imported into this incident"
        local = self._own(record_id)
        own = self.own_people.get(local) if local is not None else None
        if own is not None:
            return own, "this incident's own record"
        return None

    def _known_note(self, record_id: str) -> str | None:
        if record_id in self.notes_seen:
            return "appears earlier in this file"
        if self._recorded("note", record_id)[0]:
            return "already imported into this incident"
        local = self._own(record_id)
        if local is not None and local in self.own_claims:
            return "this incident's own record"
        return None

    # -- records -------------------------------------------------------------------
    def chunk(self, raws: Sequence[RawRecord]) -> None:
        """Import these records (persons with their notes, and top-level notes)."""
        if not raws:
            return
        self._prefetch(raws)
        for raw in raws:
            if raw.kind == "person":
                self.person(raw)
            else:
                self.note(raw, None)
        self.publish_pending()

    def person(self, raw: RawRecord) -> None:
        record = person_record(raw)
        if isinstance(record, InvalidRecord):
            self.summary.refuse(record)
            self._refuse_notes(raw, raw.record_id or f"#{raw.index}")
            return
        known = self._known_person(record.record_id)
        if known is not None:
            ref, why = known
            self.summary.skip("person", record.record_id, why)
        else:
            try:
                PersonInput(
                    name=record.full_name,
                    age=record.age,
                    alternate_names=list(record.alternate_names[:MAX_ALTERNATE_NAMES]),
                )
            except ValidationError as exc:
                self.summary.refuse(
                    InvalidRecord("person", record.record_id, record.index, validation_reasons(exc))
                )
                self._refuse_notes(raw, record.record_id)
                return
            ref = self._add_person(record)
        self.people[record.record_id] = ref
        for note in raw.notes:
            self.note(note, ref)

    def _refuse_notes(self, raw: RawRecord, person_name: str) -> None:
        for note in raw.notes:
            reason = f"its person record {person_name} is not valid"
            self.summary.refuse(InvalidRecord("note", note.record_id, note.index, (reason,)))

    def _add_person(self, record: PersonRecord) -> _PersonRef:
        person, created = interchange_people.match_person(
            self.session,
            self.incident.id,
            record.full_name,
            record.age,
            record.alternate_names[:MAX_ALTERNATE_NAMES],
            index=self.names,
        )
        fields = _person_fields(record)
        if created:
            self.summary.people_added += 1
            if self.summary.people_added > MAX_LOOK_ALIKE_CHECKS:
                others: list[interchange_people.LookAlike] = []
            else:
                others = interchange_people.look_alikes(self.session, person)
            for other in others:
                self.summary.flag(
                    Flagged(
                        record.record_id,
                        person.id,
                        person.name,
                        f"may be the same as {other.name} ({other.person_id}): "
                        + "; ".join(other.reasons),
                    )
                )
        else:
            fields["attached"] = True
            self.summary.people_matched += 1
            self.summary.flag(
                Flagged(
                    record.record_id,
                    person.id,
                    person.name,
                    "attached to the existing person with the same name and a compatible age",
                )
            )
        self.records.append(
            {
                "id": new_id("xrc"),
                "incident_id": self.incident.id,
                "kind": "person",
                "record_id": record.record_id,
                "person_id": person.id,
                "report_id": None,
                "fields": fields,
            }
        )
        return _PersonRef(person.id, person.name)

    def note(self, raw: RawRecord, person: _PersonRef | None) -> None:
        record = note_record(raw)
        if isinstance(record, InvalidRecord):
            self.summary.refuse(record)
            return
        if person is None:
            known = self._known_person(record.person_record_id)
            if known is None:
                self.deferred.append(raw)
                return
            person = known[0]
        why = self._known_note(record.record_id)
        if why is not None:
            self.summary.skip("note", record.record_id, why)
            return
        override = raw.fields.get(TRACE_STATUS_FIELD)
        status = ClaimStatus(override) if override else claim_status(record)
        if status is None:
            self.summary.skip(
                "note",
                record.record_id,
                "a comment with no status, no last_known_location and no contact: Trace "
                "keeps claims only",
            )
            return
        try:
            data = self.publish_input(record, person.name, person.id, status)
            validate_report(data)
            if self.own_sources_only:
                require_may_act_in(self.session, data.source, self.incident.id)
        except ValidationError as exc:
            self.summary.refuse(
                InvalidRecord("note", record.record_id, record.index, validation_reasons(exc))
            )
            return
        except PublishError as exc:
            self.summary.refuse(InvalidRecord("note", record.record_id, record.index, (str(exc),)))
            return
        self.notes_seen.add(record.record_id)
        self.pending.append(_Pending(record, person, data))

    def publish_input(
        self, record: NoteRecord, name: str, person_id: str | None, status: Any
    ) -> PublishReportInput:
        """The report a note becomes (raises pydantic's ValidationError)."""
        fallback = f"PFIF note with status {record.status or 'none'}"
        return PublishReportInput(
            incident_id=self.incident.id,
            source=record.author_name or record.record_id.split("/", 1)[0],
            summary=_summary_line(record.text, fallback),
            original_text=record.text.strip() or f"{fallback} and no text ({record.record_id}).",
            reported_at=record.source_date,
            person=PersonInput(name=name, person_id=person_id),
            status=status,
            location=record.last_known_location,
        )

    def publish_pending(self) -> None:
        """Publish the waiting notes together, each as a report on its person, and name
        the chunk's people and notes by their record ids."""
        pending, self.pending = self.pending, []
        reports = publish_reports(self.session, [item.data for item in pending])
        for item, report in zip(pending, reports, strict=True):
            record, person = item.record, item.person
            if report.person_id != person.id:  # the publish rule must attach to the same person
                raise AssertionError("an imported note was attached to another person")
            self.records.append(
                {
                    "id": new_id("xrc"),
                    "incident_id": self.incident.id,
                    "kind": "note",
                    "record_id": record.record_id,
                    "person_id": person.id,
                    "report_id": report.id,
                    "fields": {
                        "author_made_contact": record.author_made_contact,
                        "linked_person_record_id": record.linked_person_record_id,
                    },
                }
            )
            self.summary.notes_added += 1
            if record.linked_person_record_id:
                self.summary.flag(
                    Flagged(
                        record.record_id,
                        person.id,
                        person.name,
                        f"the note links this person to {record.linked_person_record_id}; "
                        "not decided here: a person decides in Trace whether they are the same",
                    )
                )
        self.session.flush()  # the people of the chunk, even with no note to publish
        if self.records:
            self.session.execute(insert(InterchangeRecord), self.records)
            self.records = []

    def finish(self) -> None:
        """Import the top-level notes whose person came later in the file."""
        if self.deferred:
            self._prefetch(self.deferred)
        for raw in self.deferred:
            record = note_record(raw)
            assert not isinstance(record, InvalidRecord)
            known = self._known_person(record.person_record_id)
            if known is None:
                self.summary.refuse(
                    InvalidRecord(
                        "note",
                        record.record_id,
                        record.index,
                        (
                            f"person_record_id {record.person_record_id} names no person of "
                            "this file or incident",
                        ),
                    )
                )
                continue
            self.note(raw, known[0])
        self.deferred.clear()
        self.publish_pending()


def import_pfif(
    session: Session,
    incident_id: str,
    source: IO[bytes],
    *,
    domain: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    skip_invalid: bool = False,
    actor: Actor,
    progress: Progress | None = None,
    own_sources_only: bool = False,
) -> ImportSummary:
    """Import a PFIF document into the incident (see the module docstring), audited as
    ``pfif.import`` (one row for the whole file, with its counts); the caller
    commits, or rolls back on any exception. Raises :class:`NotFoundError` for an
    unknown incident, :class:`ImportRefusedError` for invalid records without
    ``skip_invalid``, and a ``PfifError`` for a document that cannot be read.
    ``progress`` is told the records read after each chunk."""
    incident = session.get(Incident, incident_id)
    if incident is None:
        raise NotFoundError(f"No incident with id {incident_id!r}.")
    importer = Importer(session, incident, domain, own_sources_only=own_sources_only)
    read = 0
    for chunk in _chunks(read_pfif(source, max_bytes=max_bytes), CHUNK):
        importer.chunk(chunk)
        read += len(chunk)
        if progress is not None:
            progress(read)
    importer.finish()
    if importer.summary.invalid_count and not skip_invalid:
        raise ImportRefusedError(importer.summary)
    session.flush()
    audit_import(session, actor, "pfif.import", incident, importer.summary)
    return importer.summary


def audit_import(
    session: Session, actor: Actor, action: str, incident: Incident, summary: ImportSummary
) -> None:
    audit.record(
        session,
        actor,
        action,
        object_type="incident",
        object_id=incident.id,
        incident_id=incident.id,
        after={
            "people_added": summary.people_added,
            "people_matched": summary.people_matched,
            "notes_added": summary.notes_added,
            "skipped": summary.skipped_count,
            "invalid_skipped": summary.invalid_count,
        },
    )
