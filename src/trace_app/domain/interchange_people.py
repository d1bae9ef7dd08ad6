"""What the PFIF and shelter-list imports and the export need from person identity
(issue 11) and review decisions, behind one small seam.

Every function here is the interchange's only way to: find or create the person a
record is about (the identity matching rule, never a silent merge), list a person's
alternate names and look-alikes, tell which reports a person reviewed as first-hand,
and list the "same" decisions between people. Each reads in batches, so the export runs
a fixed number of statements per batch of people.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.domain.search import search_key
from trace_app.domain.text import clean_name, name_key
from trace_app.store.models import Person
from trace_app.store.types import new_id


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
) -> tuple[Person, bool]:
    """The person a record about ``name`` is about, and whether it was created now.

    Until the identity rule (``match_or_create_person``) is merged this is the current
    publish rule: one person per normalised name in the incident."""
    display = clean_name(name)
    key = name_key(display)
    person = session.scalars(
        select(Person).where(Person.incident_id == incident_id, Person.name_key == key)
    ).first()
    if person is not None:
        if person.age is None and age is not None:
            person.age = age
        return person, False
    person = Person(
        id=new_id("per"),
        incident_id=incident_id,
        name=display,
        name_key=key,
        search_key=search_key(display),
        age=age,
    )
    session.add(person)
    session.flush()
    return person, True


def look_alikes(session: Session, person: Person) -> list[LookAlike]:
    """People who may be the same as ``person`` (computed when asked, never stored)."""
    return []


def alternate_names(session: Session, person_ids: Sequence[str]) -> dict[str, list[str]]:
    """Each person's alternate names, by person id."""
    return {}


def first_hand_report_ids(session: Session, report_ids: Sequence[str]) -> set[str]:
    """The reports whose latest review decision says a person confirmed them first-hand."""
    return set()


def same_person_ids(session: Session, person_ids: Sequence[str]) -> dict[str, list[str]]:
    """For each person, the people a person decided are the same (current decisions)."""
    return {}
