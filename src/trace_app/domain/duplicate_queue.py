"""The incident's Duplicates queue, and what a reader compares about each look-alike.

The queue lists every pair of the incident's people that the look-alike rules of
:mod:`trace_app.domain.identity` offer (the same reasons, by
:func:`~trace_app.domain.identity.name_reasons`; the same pairs left out, by
:func:`~trace_app.domain.identity.not_offered_ids`), **oldest first**: a pair is as old
as the later of its two records (the first claim published about it), so the pair that
has waited longest comes first. A person decides each pair with
:func:`trace_app.domain.links.decide_link`; code never does.

Finding the pairs compares every name of the incident with every other, in C
(``rapidfuzz.process.cdist``, by blocks of rows), then only the near ones (readings at
least as alike as the loosest reason needs) name by name. That work is kept per incident and
done again only when what it depends on changes (people, names, decisions: a cheap
``incident_version``); a page of the queue then reads only the facts of its own pairs.
That first pass grows with the square of the people, so an incident of more than
``MAX_QUEUE_PEOPLE`` has no queue (:class:`~trace_app.domain.errors.TooManyPeopleError`);
its person pages still list each person's look-alikes.

:func:`person_facts` gives the facts shown beside each name, here and in a person page's
duplicate panel: age, latest status (the rule of
:func:`trace_app.domain.person_view.current_status`), place, source and alert.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from rapidfuzz import fuzz, process
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from trace_app.domain.claim_source import joined_to_source
from trace_app.domain.errors import TooManyPeopleError
from trace_app.domain.identity import (
    CLOSE_SPELLING_SCORE,
    DuplicateReason,
    name_reasons,
    not_offered_ids,
)
from trace_app.domain.person_view import StatusClaim, current_status
from trace_app.domain.queries import Page, clamp_limit
from trace_app.domain.search import search_key
from trace_app.store.models import (
    Alert,
    AlertState,
    Claim,
    ClaimStatus,
    Organization,
    Person,
    PersonAlternateName,
    PersonLink,
    Report,
)

DUPLICATES_PER_PAGE = 20
# Finding the pairs compares every name of the incident with every other: about 1 s for
# 10,000 people on the 2-core machine it was measured on, growing with the square of the
# people (4 s at 20,000, hours at a million). Above this many people the queue is not
# computed (TooManyPeopleError): a view would hold a server thread for minutes to hours.
# Each person's page still lists that person's look-alikes, through the word index.
MAX_QUEUE_PEOPLE = 20_000
# rows of names compared with all the others in one cdist call (a block of floats)
_BLOCK = 256
# Every look-alike reason needs the two Latin readings (search keys) to be equal (same
# name, invisible characters, confusables, transliteration: each makes the readings the
# same) or at least CLOSE_SPELLING_SCORE alike, so the queue's first pass can stop there;
# a person page's single scan uses a lower, cheaper-to-be-safe score.
_NEAR_SCORE = CLOSE_SPELLING_SCORE


@dataclass(frozen=True, slots=True)
class PersonFacts:
    """What a reader compares about one record."""

    person_id: str
    name: str
    age: int | None
    status: ClaimStatus | None  # the current status (None: no claim)
    reported_at: datetime | None  # of the claim that gives the status
    location: str
    source: str  # the organisation whose claim gives the status
    claim_id: str | None
    alert: AlertState | None  # open when any alert is open, else closed, else none
    first_position: int | None  # when the record first had a claim (publication order)


@dataclass(frozen=True, slots=True)
class DuplicatePair:
    first: PersonFacts  # the older record
    second: PersonFacts
    reasons: tuple[DuplicateReason, ...]


def person_facts(session: Session, person_ids: Iterable[str]) -> dict[str, PersonFacts]:
    """The facts of each known person among ``person_ids``: three statements."""
    ids = sorted(set(person_ids))
    if not ids:
        return {}
    people = session.execute(
        select(Person.id, Person.name, Person.age).where(Person.id.in_(ids))
    ).all()
    claims: dict[str, list[tuple[StatusClaim, str]]] = {pid: [] for pid in ids}
    for row in session.execute(
        joined_to_source(
            select(
                Claim.person_id,
                Claim.id,
                Claim.status,
                Report.reported_at,
                Claim.position,
                Organization.name,
                Claim.location,
            )
        ).where(Claim.person_id.in_(ids))
    ):
        status_claim = StatusClaim(row[1], ClaimStatus(row[2]), row[3], row[4], row[5])
        claims[row[0]].append((status_claim, row[6]))
    alerts: dict[str, AlertState] = {}
    for pid, state in session.execute(
        select(Alert.person_id, Alert.state).where(Alert.person_id.in_(ids))
    ):
        if alerts.get(pid) is not AlertState.OPEN:
            alerts[pid] = AlertState(state)
    found: dict[str, PersonFacts] = {}
    for pid, name, age in people:
        mine = claims[pid]
        status = current_status(c for c, _ in mine)
        winner = next(((c, place) for c, place in mine if c.claim_id == status.claim_id), None)
        found[pid] = PersonFacts(
            person_id=pid,
            name=name,
            age=age,
            status=status.status,
            reported_at=status.reported_at,
            location=winner[1] if winner else "",
            source=winner[0].source if winner else "",
            claim_id=status.claim_id,
            alert=alerts.get(pid),
            first_position=min((c.position for c, _ in mine), default=None),
        )
    return found


# ---- the queue ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _QueuedPair:
    older: str
    newer: str
    reasons: tuple[DuplicateReason, ...]


_cache: dict[tuple[str, str], tuple[tuple[object, ...], list[_QueuedPair]]] = {}
_cache_lock = threading.Lock()
_CACHE_INCIDENTS = 16


def incident_version(session: Session, incident_id: str) -> tuple[object, ...]:
    """What the queue's pairs depend on, in cheap aggregates: people (how many, and the
    greatest id: a reset makes new ones), alternate names, decisions, and the last claim
    published (it orders the pairs)."""
    people, last_person = session.execute(
        select(func.count(), func.max(Person.id)).where(Person.incident_id == incident_id)
    ).one()
    names = session.scalar(
        select(func.count())
        .select_from(PersonAlternateName)
        .where(PersonAlternateName.incident_id == incident_id)
    )
    links = session.scalar(
        select(func.count()).select_from(PersonLink).where(PersonLink.incident_id == incident_id)
    )
    last_claim = session.scalar(
        select(func.max(Claim.position)).join(Person).where(Person.incident_id == incident_id)
    )
    return (people or 0, last_person or "", names or 0, links or 0, last_claim or 0)


def _near_pairs(owners: list[str], lines: list[str]) -> set[tuple[str, str]]:
    """Pairs of different people with a name line at least ``_NEAR_SCORE`` alike
    (lines without a Latin reading are near each other, as on a person page)."""
    near: set[tuple[str, str]] = set()
    keyed = [i for i, line in enumerate(lines) if line]
    keyless = [owners[i] for i, line in enumerate(lines) if not line]
    texts = [lines[i] for i in keyed]
    for start in range(0, len(texts), _BLOCK):
        block = texts[start : start + _BLOCK]
        scores = process.cdist(block, texts, scorer=fuzz.ratio, score_cutoff=_NEAR_SCORE, workers=1)
        rows, cols = scores.nonzero()
        for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
            a, b = owners[keyed[start + row]], owners[keyed[col]]
            if a != b:
                near.add((a, b) if a < b else (b, a))
    unique = sorted(set(keyless))
    for i, a in enumerate(unique):
        for b in unique[i + 1 :]:
            near.add((a, b))
    return near


def _compute_pairs(session: Session, incident_id: str) -> list[_QueuedPair]:
    rows = session.execute(
        select(Person.id, Person.name, Person.age, Person.search_key).where(
            Person.incident_id == incident_id
        )
    ).all()
    people = {pid: (name, age) for pid, name, age, _ in rows}
    owners: list[str] = []
    lines: list[str] = []
    for pid, name, _, key in rows:
        for line in (key or search_key(name)).split("\n"):
            owners.append(pid)
            lines.append(line)
    near = _near_pairs(owners, lines)
    if not near:
        return []
    names: dict[str, list[str]] = {pid: [people[pid][0]] for pid in people}
    for pid, alt in session.execute(
        select(PersonAlternateName.person_id, PersonAlternateName.name)
        .where(PersonAlternateName.incident_id == incident_id)
        .order_by(PersonAlternateName.position)
    ):
        names[pid].append(alt)
    first_claim = dict(
        session.execute(
            select(Claim.person_id, func.min(Claim.position))
            .join(Person)
            .where(Person.incident_id == incident_id)
            .group_by(Claim.person_id)
        ).all()
    )
    not_offered: dict[str, set[str]] = {}
    found: list[tuple[tuple[int, int, str, str], _QueuedPair]] = []
    for a, b in sorted(near):
        a_pos, b_pos = first_claim.get(a, 0), first_claim.get(b, 0)
        older, newer = (a, b) if (a_pos, a) <= (b_pos, b) else (b, a)
        # reasons as the newer record's page gives them
        reasons: dict[str, DuplicateReason] = {}
        for mine in names[newer]:
            for theirs in names[older]:
                for reason in name_reasons(mine, theirs, people[newer][1], people[older][1]):
                    reasons.setdefault(reason.code, reason)
        if not reasons:
            continue
        if newer not in not_offered:
            not_offered[newer] = not_offered_ids(session, newer)
        if older in not_offered[newer]:
            continue
        order = (max(a_pos, b_pos), min(a_pos, b_pos), older, newer)
        found.append((order, _QueuedPair(older, newer, tuple(reasons.values()))))
    found.sort(key=lambda item: item[0])
    return [pair for _, pair in found]


def _too_many(people: object) -> TooManyPeopleError | None:
    if isinstance(people, int) and people > MAX_QUEUE_PEOPLE:
        return TooManyPeopleError(
            f"This incident holds {people:,} people. The Duplicates queue compares every "
            f"name with every other, which takes too long for more than "
            f"{MAX_QUEUE_PEOPLE:,} people, so it is not listed here. Each person's page "
            "lists that person's possible duplicates.",
            people=people,
            limit=MAX_QUEUE_PEOPLE,
        )
    return None


def queue_refusal(session: Session, incident_id: str) -> TooManyPeopleError | None:
    """Why the incident has no Duplicates queue (too many people), or None: what
    :func:`queued_pairs` would raise, for a page that explains it in place."""
    return _too_many(incident_version(session, incident_id)[0])


def queued_pairs(session: Session, incident_id: str) -> list[_QueuedPair]:
    """Every pair of the queue, oldest first, computed again only when the incident's
    :func:`incident_version` changed since the last time. Raises
    :class:`TooManyPeopleError` for an incident of more than ``MAX_QUEUE_PEOPLE`` people."""
    version = incident_version(session, incident_id)
    refusal = _too_many(version[0])
    if refusal is not None:
        raise refusal
    bind = session.get_bind()
    key = (str(bind.engine.url), incident_id)
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None and cached[0] == version:
        return cached[1]
    pairs = _compute_pairs(session, incident_id)
    with _cache_lock:
        if len(_cache) >= _CACHE_INCIDENTS:
            _cache.pop(next(iter(_cache)))
        _cache[key] = (version, pairs)
    return pairs


def duplicates_page(
    session: Session, incident_id: str, *, offset: int = 0, limit: int = DUPLICATES_PER_PAGE
) -> Page[DuplicatePair]:
    """One page of the incident's Duplicates queue, oldest pair first, each side with its
    :class:`PersonFacts`; :class:`TooManyPeopleError` as :func:`queued_pairs`."""
    limit = clamp_limit(limit, DUPLICATES_PER_PAGE)
    offset = max(0, offset)
    pairs = queued_pairs(session, incident_id)
    shown = pairs[offset : offset + limit]
    facts = person_facts(session, [p for pair in shown for p in (pair.older, pair.newer)])
    items = [
        DuplicatePair(facts[pair.older], facts[pair.newer], pair.reasons)
        for pair in shown
        if pair.older in facts and pair.newer in facts
    ]
    return Page(items=items, total=len(pairs), offset=offset, limit=limit)
