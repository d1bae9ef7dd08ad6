"""A person's decisions about two people: the same person, different people, or undecided.

Code never merges people and never decides a link; a person does, with a note. Every
decision is kept (``person_links``) with its time and the page it was made from; the
app has no accounts, so a decision is "recorded by a person" and its note says who and
why when the person writes it. A later decision about the same pair supersedes the
earlier one (the highest ``sequence`` of the pair is its *current* decision) and the
history stays:

- ``different``: the pair is no longer offered as a possible duplicate;
- ``same``: the two records belong to one *linked group* (:mod:`trace_app.domain.groups`),
  shown to the reader as one person (every name, every claim, one status, one alert);
  both records stay, nothing is deleted or moved;
- ``undecided``: withdraws the current decision (only when there is one); the pair is
  offered again if the look-alike rules find it.

Reversing "same" into "different" (or back) is one more decision, never an edit. After
every decision the groups of the pair are recomputed from the current decisions
(:func:`regroup`) and their alerts settled again by the one rule
(:func:`trace_app.domain.alerts.settle_alerts`): linking closes what a claim on another
record closes; undoing the link reopens exactly that.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from trace_app.domain import audit, status_events
from trace_app.domain.alerts import settle_alerts
from trace_app.domain.audit import Actor
from trace_app.domain.errors import InvalidInputError, NotFoundError
from trace_app.domain.groups import groups_from_same_pairs, record_ids
from trace_app.domain.text import clean_note
from trace_app.store.db import WRITE_TRANSACTION
from trace_app.store.models import Incident, LinkDecision, Person, PersonLink
from trace_app.store.types import new_id, utc_now


@dataclass(frozen=True, slots=True)
class LinkView:
    """One decision as seen from ``person_id``'s side."""

    id: str
    person_id: str
    other_person_id: str
    other_name: str
    decision: LinkDecision
    note: str
    decided_at: datetime
    decided_on_person_id: str
    current: bool  # the newest decision of its pair
    decided_by: str = ""  # the account that decided ("" before accounts existed)


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def decide_link(
    session: Session,
    person_id: str,
    other_person_id: str,
    decision: LinkDecision,
    note: str,
    *,
    actor: Actor,
) -> PersonLink:
    """Record ``actor``'s decision (audited as ``link.decide``) about ``person_id`` and
    ``other_person_id``.

    Raises :class:`NotFoundError` for an unknown person and :class:`InvalidInputError`
    for a blank or too long note, the same person twice, two incidents, or "undecided"
    with no decision to withdraw; nothing is added then. The caller commits."""
    text = clean_note(note, "Write a note that says why (and, if you like, who decided).")
    if person_id == other_person_id:
        raise InvalidInputError("Choose another person: a person is always the same as itself.")
    person = session.get(Person, person_id)
    if person is None:
        raise NotFoundError(f"No person with id {person_id!r}.")
    other = session.get(Person, other_person_id)
    if other is None:
        raise NotFoundError(f"No person with id {other_person_id!r}.")
    if person.incident_id != other.incident_id:
        raise InvalidInputError("The two people belong to different incidents.")
    # the incident's row lock (PostgreSQL) makes decisions about one incident take turns
    session.get(Incident, person.incident_id, with_for_update=True)
    a, b = _pair(person_id, other_person_id)
    last = session.scalars(
        select(PersonLink)
        .where(PersonLink.person_a_id == a, PersonLink.person_b_id == b)
        .order_by(PersonLink.sequence.desc())
        .limit(1)
    ).first()
    if decision is LinkDecision.UNDECIDED and (
        last is None or last.decision == LinkDecision.UNDECIDED.value
    ):
        raise InvalidInputError("There is no decision about these two people to withdraw.")
    link = PersonLink(
        id=new_id("lnk"),
        incident_id=person.incident_id,
        person_a_id=a,
        person_b_id=b,
        decided_on_person_id=person_id,
        decision=decision.value,
        note=text,
        decided_at=utc_now(),
        sequence=(last.sequence if last else 0) + 1,
        decided_by=actor.name,
    )
    seen = status_events.before(session, [a, b])
    session.add(link)
    session.flush()
    regroup(session, person.incident_id, [a, b])
    settle_alerts(session, [a, b])
    session.flush()
    status_events.record_changes(session, seen, person.incident_id, regrouped=True)
    audit.record(
        session,
        actor,
        "link.decide",
        object_type="person_link",
        object_id=link.id,
        incident_id=person.incident_id,
        touched=[f"person:{a}", f"person:{b}"],
        before={"decision": last.decision if last else LinkDecision.UNDECIDED.value},
        after={"decision": decision.value, "note": text},
    )
    return link


def decide_link_and_commit(
    session: Session,
    person_id: str,
    other_person_id: str,
    decision: LinkDecision,
    note: str,
    *,
    actor: Actor,
) -> PersonLink:
    """:func:`decide_link` in its own write transaction (SQLite: BEGIN IMMEDIATE, so two
    decisions about one pair never take the same place), committed; rolled back on
    any error."""
    try:
        session.connection(execution_options=WRITE_TRANSACTION)
        link = decide_link(session, person_id, other_person_id, decision, note, actor=actor)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return link


def link_history(session: Session, person_id: str) -> list[LinkView]:
    """Every decision about ``person_id`` and another person, newest first, each marked
    ``current`` when it is the newest of its pair."""
    rows = session.execute(
        select(PersonLink, Person.name)
        .join(
            Person,
            Person.id
            == func.coalesce(
                func.nullif(PersonLink.person_a_id, person_id),
                PersonLink.person_b_id,
            ),
        )
        .where(or_(PersonLink.person_a_id == person_id, PersonLink.person_b_id == person_id))
        .order_by(PersonLink.sequence.desc(), PersonLink.decided_at.desc(), PersonLink.id)
    ).all()
    newest: dict[tuple[str, str], int] = {}
    for link, _ in rows:
        pair = (link.person_a_id, link.person_b_id)
        newest[pair] = max(newest.get(pair, 0), link.sequence)
    views = [
        LinkView(
            id=link.id,
            person_id=person_id,
            other_person_id=link.person_b_id if link.person_a_id == person_id else link.person_a_id,
            other_name=other_name,
            decision=LinkDecision(link.decision),
            note=link.note,
            decided_at=link.decided_at,
            decided_on_person_id=link.decided_on_person_id,
            current=link.sequence == newest[(link.person_a_id, link.person_b_id)],
            decided_by=link.decided_by,
        )
        for link, other_name in rows
    ]
    return views


def current_links(session: Session, person_id: str) -> list[LinkView]:
    """The current "same" and "different" decisions about ``person_id``, newest first."""
    return [
        v
        for v in link_history(session, person_id)
        if v.current and v.decision is not LinkDecision.UNDECIDED
    ]


def decided_other_ids(session: Session, person_id: str) -> set[str]:
    """The people whose pair with ``person_id`` has a current "same" or "different"
    decision (they are not offered as possible duplicates)."""
    return {v.other_person_id for v in current_links(session, person_id)}


def current_same_pairs(session: Session, incident_id: str) -> list[tuple[str, str]]:
    """The incident's pairs whose newest decision is "same" (one statement)."""
    newest: dict[tuple[str, str], tuple[int, str]] = {}
    for a, b, decision, sequence in session.execute(
        select(
            PersonLink.person_a_id,
            PersonLink.person_b_id,
            PersonLink.decision,
            PersonLink.sequence,
        ).where(PersonLink.incident_id == incident_id)
    ):
        if (a, b) not in newest or sequence > newest[(a, b)][0]:
            newest[(a, b)] = (sequence, decision)
    return sorted(pair for pair, (_, d) in newest.items() if d == LinkDecision.SAME.value)


def regroup(session: Session, incident_id: str, person_ids: list[str]) -> None:
    """Recompute ``people.group_id`` for the groups of ``person_ids`` (and of everyone
    who was in a group with them) from the incident's current "same" decisions. The
    caller flushes."""
    keys = groups_from_same_pairs(current_same_pairs(session, incident_id))
    touched = set(person_ids)
    old = {p.group_id for p in session.scalars(select(Person).where(Person.id.in_(touched)))}
    old.discard(None)
    if old:
        touched |= set(session.scalars(select(Person.id).where(Person.group_id.in_(old))))
    new = {keys[pid] for pid in touched if pid in keys}
    touched |= {pid for pid, key in keys.items() if key in new}
    for person in session.scalars(select(Person).where(Person.id.in_(sorted(touched)))):
        group_id = keys.get(person.id)
        if person.group_id != group_id:
            person.group_id = group_id


def same_person_ids(session: Session, person_id: str) -> list[str]:
    """Every other record of ``person_id``'s linked group (decided "same", directly or
    through others), in id order; ``person_id`` itself left out."""
    return record_ids(session, person_id)[1:]
