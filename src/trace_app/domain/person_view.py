"""One person as the person page and ``GET /api/people/{id}`` show it.

The person's current status comes from its claims by the one written rule,
:func:`trace_app.domain.status_rule.current_status` (ADR 0160; imported here as well).
Everything else is read as stored: claims in the order they describe (``reported_at``,
then publication), alerts, possible duplicates
(:mod:`trace_app.domain.identity`) and link decisions (:mod:`trace_app.domain.links`).
The records decided "same" (the person's linked group, :mod:`trace_app.domain.groups`)
are one person to the reader: the page shows every record's names and claims, one
status by :func:`current_status` over all the group's claims, and the group's alerts;
nothing is merged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from trace_app.domain import alert_queries
from trace_app.domain.alert_queries import AlertListing
from trace_app.domain.claim_source import joined_to_source
from trace_app.domain.groups import record_ids
from trace_app.domain.identity import PossibleDuplicate, get_person, possible_duplicates
from trace_app.domain.links import LinkView, link_history
from trace_app.domain.status_rule import DISPUTE_WINDOW as DISPUTE_WINDOW
from trace_app.domain.status_rule import CurrentStatus as CurrentStatus
from trace_app.domain.status_rule import StatusClaim as StatusClaim
from trace_app.domain.status_rule import current_status as current_status
from trace_app.store.models import (
    Claim,
    ClaimStatus,
    LinkDecision,
    Organization,
    Person,
    Report,
)


@dataclass(frozen=True, slots=True)
class ClaimDetail:
    id: str
    person_id: str
    status: ClaimStatus
    location: str
    report_id: str
    summary: str
    source: str
    reported_at: datetime
    position: int

    def for_status(self) -> StatusClaim:
        return StatusClaim(self.id, self.status, self.reported_at, self.position, self.source)


@dataclass(frozen=True, slots=True)
class LinkedPerson:
    """A person decided "same", shown with the page's person."""

    id: str
    name: str
    age: int | None
    claims: list[ClaimDetail]


@dataclass(frozen=True, slots=True)
class PersonDetail:
    id: str
    incident_id: str
    name: str
    alternate_names: list[str]
    age: int | None
    claims: list[ClaimDetail]  # in the order they describe (reported_at, publication)
    status: CurrentStatus  # from this record's claims
    combined_status: CurrentStatus  # the group's: over every claim of its records
    alerts: list[AlertListing]  # the group's alerts (joined reports as their sources)
    possible_duplicates: list[PossibleDuplicate]
    links: list[LinkView]  # current "same" / "different" decisions
    link_history: list[LinkView]  # every decision, newest first
    same_people: list[LinkedPerson]
    group_names: list[str]  # every name of every record of the group, repeats left out


def _claims(session: Session, person_ids: list[str]) -> dict[str, list[ClaimDetail]]:
    rows = session.execute(
        joined_to_source(
            select(
                Claim.id,
                Claim.person_id,
                Claim.status,
                Claim.location,
                Claim.report_id,
                Report.summary,
                Organization.name,
                Report.reported_at,
                Claim.position,
            )
        )
        .where(Claim.person_id.in_(person_ids))
        .order_by(Report.reported_at, Claim.position, Claim.id)
    ).all()
    found: dict[str, list[ClaimDetail]] = {pid: [] for pid in person_ids}
    for row in rows:
        found[row[1]].append(
            ClaimDetail(
                row[0], row[1], ClaimStatus(row[2]), row[3], row[4], row[5], row[6], row[7], row[8]
            )
        )
    return found


def person_detail(session: Session, person_id: str) -> PersonDetail:
    """Everything the person page shows; :class:`NotFoundError` for an unknown id."""
    person = get_person(session, person_id)
    ids = record_ids(session, person.id)
    same_ids = ids[1:]
    claims = _claims(session, ids)
    same_people = []
    names = [person.name, *(a.name for a in person.alternate_names)]
    if same_ids:
        others = {
            p.id: p
            for p in session.scalars(
                select(Person)
                .where(Person.id.in_(same_ids))
                .options(selectinload(Person.alternate_names))
            ).all()
        }
        same_people = [
            LinkedPerson(pid, others[pid].name, others[pid].age, claims[pid]) for pid in same_ids
        ]
        for pid in same_ids:
            names += [others[pid].name, *(a.name for a in others[pid].alternate_names)]
    own = claims[person.id]
    history = link_history(session, person.id)
    every = [c for group in claims.values() for c in group]
    return PersonDetail(
        id=person.id,
        incident_id=person.incident_id,
        name=person.name,
        alternate_names=[a.name for a in person.alternate_names],
        age=person.age,
        claims=own,
        status=current_status(c.for_status() for c in own),
        combined_status=current_status(c.for_status() for c in every),
        alerts=alert_queries.person_alerts(session, ids),
        possible_duplicates=possible_duplicates(session, person),
        links=[v for v in history if v.current and v.decision is not LinkDecision.UNDECIDED],
        link_history=history,
        same_people=same_people,
        group_names=list(dict.fromkeys(names)),
    )
