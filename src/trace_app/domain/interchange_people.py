"""What the PFIF and shelter-list imports and the export need from person identity and
review decisions, in one place.

Every function here is the interchange's only way to: find or create the person a
record is about (:func:`trace_app.domain.identity.match_or_create_person`, never a
silent merge), list people's alternate names and a new person's look-alikes, tell which
reports a person reviewed as first-hand (:func:`trace_app.domain.reviews.latest_reviews`)
and list the "same" decisions between people (:mod:`trace_app.domain.links`). The
export's readers take a batch of people or reports and run a fixed number of statements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.domain import groups, identity, reviews
from trace_app.store.models import Person, PersonAlternateName


@dataclass(frozen=True, slots=True)
class LookAlike:
    """Another person of the incident who may be the same as the one imported."""

    person_id: str
    name: str
    reasons: tuple[str, ...]


def match_person(
    session: Session,
    incident_id: str,
    name: str,
    age: int | None,
    alternate_names: Sequence[str] = (),
    *,
    index: identity.NameIndex | None = None,
) -> tuple[Person, bool]:
    """The person a record about ``name`` is about (the identity rule: a confident
    match, else a new person), and whether it was created now. ``index`` holds the
    people of a batch's names (:class:`~trace_app.domain.identity.NameIndex`)."""
    person = identity.match_or_create_person(
        session, incident_id, name, age, alternate_names, index=index
    )
    return person, person in session.new


def look_alikes(session: Session, person: Person) -> list[LookAlike]:
    """People who may be the same as ``person``, with the identity rule's reasons."""
    return [
        LookAlike(d.person_id, d.name, tuple(r.words for r in d.reasons))
        for d in identity.possible_duplicates(session, person)
    ]


def alternate_names(session: Session, person_ids: Sequence[str]) -> dict[str, list[str]]:
    """Each person's alternate names in their order, by person id (one statement)."""
    names: dict[str, list[str]] = {}
    if not person_ids:
        return names
    rows = session.execute(
        select(PersonAlternateName.person_id, PersonAlternateName.name)
        .where(PersonAlternateName.person_id.in_(list(person_ids)))
        .order_by(PersonAlternateName.person_id, PersonAlternateName.position)
    )
    for person_id, name in rows:
        names.setdefault(person_id, []).append(name)
    return names


def first_hand_report_ids(session: Session, report_ids: Sequence[str]) -> set[str]:
    """The reports whose latest review decision says a person confirmed them first-hand
    (never a model's label: only a person's decision counts)."""
    latest = reviews.latest_reviews(session, report_ids)
    return {
        report_id
        for report_id, decision in latest.items()
        if decision.decision == reviews.ReviewValue.FIRST_HAND.value
    }


def same_person_ids(session: Session, person_ids: Sequence[str]) -> dict[str, list[str]]:
    """For each person in a linked group, the other records of its group (decided the
    same directly or through others, :mod:`trace_app.domain.groups`): two statements."""
    if not person_ids:
        return {}
    found: dict[str, list[str]] = {}
    for members in groups.group_members(session, list(person_ids)).values():
        for pid in members:
            if len(members) > 1:
                found[pid] = [other for other in members if other != pid]
    wanted = set(person_ids)
    return {pid: others for pid, others in found.items() if pid in wanted}
