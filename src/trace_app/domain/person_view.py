"""One person as the person page and ``GET /api/people/{id}`` show it.

The person's current status comes from its claims by one written rule,
:func:`current_status`. Everything else is read as stored: claims in the order they
describe (``reported_at``, then publication), alerts, possible duplicates
(:mod:`trace_app.domain.identity`) and link decisions (:mod:`trace_app.domain.links`).
The records decided "same" (the person's linked group, :mod:`trace_app.domain.groups`)
are one person to the reader: the page shows every record's names and claims, one
status by :func:`current_status` over all the group's claims, and the group's alerts;
nothing is merged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from trace_app.domain import queries
from trace_app.domain.claim_source import joined_to_source
from trace_app.domain.groups import record_ids
from trace_app.domain.identity import PossibleDuplicate, get_person, possible_duplicates
from trace_app.domain.links import LinkView, link_history
from trace_app.domain.queries import AlertListing
from trace_app.store.models import (
    Claim,
    ClaimStatus,
    LinkDecision,
    Organization,
    Person,
    Report,
)

# Claims reported this close before the deciding one, from another source and saying
# something else, make the status disputed: a responder should read both.
DISPUTE_WINDOW = timedelta(hours=6)


@dataclass(frozen=True, slots=True)
class StatusClaim:
    """What :func:`current_status` needs of a claim."""

    claim_id: str
    status: ClaimStatus
    reported_at: datetime
    position: int  # publication order within the incident
    source: str


@dataclass(frozen=True, slots=True)
class CurrentStatus:
    status: ClaimStatus | None  # None: no claim at all
    claim_id: str | None
    reported_at: datetime | None
    disputed_by: tuple[str, ...] = ()  # ids of the claims that disagree (see the rule)


def current_status(claims: Iterable[StatusClaim]) -> CurrentStatus:
    """The person's current status: **the claim about the latest moment wins**.

    - "Latest" is the report's ``reported_at`` (the moment the report describes), not when
      it was published: a report published late about an earlier moment does not undo
      newer news. Claims about the same moment: the one published last wins.
    - Every status counts the same, "deceased" included: a later "seen" after "deceased"
      is news a responder must see, not one the rule hides.
    - The status is *disputed* by every claim from another source, reported no more than
      ``DISPUTE_WINDOW`` (6 hours) before the winning one, that says something else
      ("missing" at 10:00 from the police, "safe" at 11:00 from a camp): the rule still
      picks the later one, and the page shows that someone should check.
    - No claims: no status.

    This is the same order as the alert rule (:mod:`trace_app.domain.alerts`) and the
    search's status filter (the latest claim by ``reported_at``, then publication).
    """
    ordered = sorted(claims, key=lambda c: (c.reported_at, c.position, c.claim_id))
    if not ordered:
        return CurrentStatus(None, None, None)
    winner = ordered[-1]
    disputed = tuple(
        c.claim_id
        for c in ordered[:-1]
        if c.status is not winner.status
        and c.source != winner.source
        and winner.reported_at - c.reported_at <= DISPUTE_WINDOW
    )
    return CurrentStatus(winner.status, winner.claim_id, winner.reported_at, disputed)


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
        alerts=queries.person_alerts(session, ids),
        possible_duplicates=possible_duplicates(session, person),
        links=[v for v in history if v.current and v.decision is not LinkDecision.UNDECIDED],
        link_history=history,
        same_people=same_people,
        group_names=list(dict.fromkeys(names)),
    )
