"""An incident's people as CSV, one row per record with the person's status (for a
spreadsheet).

The columns (in this order; a header row first):

========================  ============================================================
``person_record_id``       as in the PFIF export (``<domain>/<person id>``, or the
                           record id the person was imported with)
``full_name``              the record's name
``alternate_names``        other names, separated by ``; ``
``age``                    years, or empty
``group_record_id``        the person this record belongs to: the ``person_record_id``
                           of its linked group's first record (its own when alone), so
                           rows with the same value are one person
``group_status``           the person's status, by the one rule over every claim of
                           the group (:mod:`trace_app.domain.status_rule`; empty: no
                           claim): what the person page, the People list, the search
                           filter and the API say
``status``                 this record's own status, the same rule over its claims alone
                           (a detail: equal to ``group_status`` for a record alone)
``status_reported_at``     the moment the report deciding ``status`` describes (UTC)
``status_location``        where that report places the person
``status_source``          the organisation that said so
``disputed``               ``yes`` when another source said otherwise shortly before
``open_alert``             ``yes`` while the person's (its group's) alert is open
``claims``                 how many claims the record has
========================  ============================================================

People are read ``BATCH`` at a time in a fixed number of statements each, and written as
they are read, so a large incident is never held in memory. Every field goes through
:func:`~trace_app.interchange.formulas.neutralize` (no spreadsheet formulas).
:func:`export_file_names` names the downloaded file after the incident.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Iterator, Sequence

from anyascii import anyascii
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from trace_app.domain import interchange_people
from trace_app.domain.errors import NotFoundError
from trace_app.domain.groups import group_key
from trace_app.domain.pfif_export import person_record_ids
from trace_app.domain.status_rule import CurrentStatus, group_statuses
from trace_app.interchange.formulas import neutralize
from trace_app.store.models import (
    Alert,
    AlertState,
    Incident,
    Person,
)

BATCH = 500
COLUMNS: tuple[str, ...] = (
    "person_record_id",
    "full_name",
    "alternate_names",
    "age",
    "group_record_id",
    "group_status",
    "status",
    "status_reported_at",
    "status_location",
    "status_source",
    "disputed",
    "open_alert",
    "claims",
)


def iter_people_csv(
    session: Session, incident_id: str, *, domain: str, batch: int = BATCH
) -> Iterator[bytes]:
    """The incident's people as UTF-8 CSV chunks (a byte order mark first, so that
    spreadsheets read non-Latin names). :class:`NotFoundError` before the first chunk."""
    if session.get(Incident, incident_id) is None:
        raise NotFoundError(f"No incident with id {incident_id!r}.")
    record_ids = person_record_ids(session, incident_id, domain)
    return _chunks(session, incident_id, record_ids, batch)


def _line(values: Sequence[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow([neutralize(v) for v in values])
    return out.getvalue()


def _chunks(
    session: Session, incident_id: str, record_ids: dict[str, str], batch: int
) -> Iterator[bytes]:
    yield ("\ufeff" + _line(COLUMNS)).encode()
    last = ""
    while True:
        people = session.execute(
            select(Person.id, Person.name, Person.age)
            .where(Person.incident_id == incident_id, Person.id > last)
            .order_by(Person.id)
            .limit(batch)
        ).all()
        if not people:
            return
        last = people[-1].id
        ids = [p.id for p in people]
        statuses = group_statuses(session, ids)
        alerting = _open_alert_groups(session, {g.group_key for g in statuses.values()})
        names = interchange_people.alternate_names(session, ids)
        rows = []
        for person in people:
            found = statuses[person.id]
            own = found.record_status
            rows.append(
                _line(
                    [
                        _record_id(record_ids, incident_id, person.id),
                        person.name,
                        "; ".join(names.get(person.id, [])),
                        "" if person.age is None else str(person.age),
                        _record_id(record_ids, incident_id, found.group_key),
                        _status_text(found.status),
                        _status_text(own),
                        own.reported_at.isoformat() if own.reported_at else "",
                        found.record_location,
                        found.record_source,
                        "yes" if own.disputed_by else "no",
                        "yes" if found.group_key in alerting else "no",
                        str(found.record_claims),
                    ]
                )
            )
        yield "".join(rows).encode()


def _record_id(record_ids: dict[str, str], incident_id: str, person_id: str) -> str:
    return record_ids.get(person_id, f"{incident_id}/{person_id}")


def _status_text(status: CurrentStatus) -> str:
    return status.status.value if status.status is not None else ""


def _open_alert_groups(session: Session, keys: set[str]) -> set[str]:
    """Which of the group keys ``keys`` have an open alert on any of their records: one
    statement (a group's records are its key and those whose ``group_id`` is the key)."""
    if not keys:
        return set()
    found = session.execute(
        select(Person.id, Person.group_id)
        .join(Alert, Alert.person_id == Person.id)
        .where(
            Alert.state == AlertState.OPEN.value,
            or_(Person.id.in_(sorted(keys)), Person.group_id.in_(sorted(keys))),
        )
    )
    return {group_key(pid, gid) for pid, gid in found} & keys


def export_file_names(incident_name: str, suffix: str) -> tuple[str, str]:
    """The name of an incident's download, ``trace-<incident name>.<suffix>``, twice: in
    ASCII (the name transliterated) and in Unicode (letters of any script kept). Either
    is safe on every common file system: letters (with their marks), digits, ``.``, ``_``
    and ``-`` only (every other run of characters, spaces and ``/ \\ : * ? " < > |``
    among them, one ``-``), no leading dot, at most 80 characters of the name."""
    ascii_name = _safe_file_name(anyascii(incident_name))
    return f"trace-{ascii_name}.{suffix}", f"trace-{_safe_file_name(incident_name)}.{suffix}"


def _safe_file_name(text: str) -> str:
    kept = "".join(
        c if c in "._-" or unicodedata.category(c)[0] in "LMN" else " "
        for c in unicodedata.normalize("NFKC", text)
    )
    name = "-".join(kept.split()).strip("-._")
    return name[:80].strip("-._") or "incident"
