"""An incident's people as CSV, one row each with the current status (for a spreadsheet).

The columns (in this order; a header row first):

========================  ============================================================
``person_record_id``       as in the PFIF export (``<domain>/<person id>``, or the
                           record id the person was imported with)
``full_name``              the person's name
``alternate_names``        other names, separated by ``; ``
``age``                    years, or empty
``status``                 the current status by :func:`~trace_app.domain.person_view.
                           current_status` over the record's claims (empty: no claim)
``status_reported_at``     the moment the deciding report describes (UTC, ISO 8601)
``status_location``        where that report places the person
``status_source``          the organisation that said so
``disputed``               ``yes`` when another source said otherwise shortly before
``open_alert``             ``yes`` while an alert for the person is open
``claims``                 how many claims the record has
========================  ============================================================

People are read ``BATCH`` at a time in a fixed number of statements each, and written as
they are read, so a large incident is never held in memory. Every field goes through
:func:`~trace_app.interchange.formulas.neutralize` (no spreadsheet formulas).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.domain import interchange_people
from trace_app.domain.errors import NotFoundError
from trace_app.domain.person_view import StatusClaim, current_status
from trace_app.domain.pfif_export import person_record_ids
from trace_app.interchange.formulas import neutralize
from trace_app.store.models import (
    Alert,
    AlertState,
    Claim,
    ClaimStatus,
    Incident,
    Organization,
    Person,
    Report,
)

BATCH = 500
COLUMNS: tuple[str, ...] = (
    "person_record_id",
    "full_name",
    "alternate_names",
    "age",
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
        claims = _claims(session, ids)
        alerting = set(
            session.scalars(
                select(Alert.person_id).where(
                    Alert.person_id.in_(ids), Alert.state == AlertState.OPEN.value
                )
            )
        )
        names = interchange_people.alternate_names(session, ids)
        rows = []
        for person in people:
            own = claims.get(person.id, [])
            status = current_status(claim for claim, _ in own)
            winner, where = next(
                ((c, w) for c, w in own if c.claim_id == status.claim_id), (None, "")
            )
            rows.append(
                _line(
                    [
                        record_ids.get(person.id, f"{incident_id}/{person.id}"),
                        person.name,
                        "; ".join(names.get(person.id, [])),
                        "" if person.age is None else str(person.age),
                        status.status.value if status.status is not None else "",
                        status.reported_at.isoformat() if status.reported_at else "",
                        where,
                        winner.source if winner is not None else "",
                        "yes" if status.disputed_by else "no",
                        "yes" if person.id in alerting else "no",
                        str(len(own)),
                    ]
                )
            )
        yield "".join(rows).encode()


def _claims(session: Session, person_ids: list[str]) -> dict[str, list[tuple[StatusClaim, str]]]:
    """Each person's claims as the status rule reads them, with their locations."""
    rows = session.execute(
        select(
            Claim.id,
            Claim.person_id,
            Claim.status,
            Report.reported_at,
            Claim.position,
            Organization.name,
            Claim.location,
        )
        .join(Report, Report.id == Claim.report_id)
        .join(Organization, Organization.id == Report.organization_id)
        .where(Claim.person_id.in_(person_ids))
    )
    found: dict[str, list[tuple[StatusClaim, str]]] = {}
    for claim_id, person_id, status, reported_at, position, source, location in rows:
        claim = StatusClaim(claim_id, ClaimStatus(status), reported_at, position, source)
        found.setdefault(person_id, []).append((claim, location or ""))
    return found
