"""Linked groups: the records people decided are one person, read as one.

A group is a connected set of records over the *current* "same" decisions (the newest
decision of each pair, :mod:`trace_app.domain.links`): A same as B and B same as C make
one group of three. "Different" or "undecided" as the newest decision of a pair removes
that pair's edge, which may split a group again. Nothing is merged or deleted: each
record keeps its name, claims and alerts; ``people.group_id`` names its group (the
smallest person id in it; null for a record in no group) and is recomputed from the
decisions whenever one is made (:func:`trace_app.domain.links.regroup`).

The functions here only read; a record in no group is its own group of one, keyed by its
own id (:func:`group_key`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.orm import Session

from trace_app.store.models import Person


def groups_from_same_pairs(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Union-find over "same" pairs: each person named in a pair, mapped to its group's
    key, the smallest id of its connected set (so the key never depends on the order
    the pairs come in)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {x: find(x) for x in parent}


def group_key(person_id: str, group_id: str | None) -> str:
    return group_id or person_id


def group_members(session: Session, person_ids: Sequence[str]) -> dict[str, list[str]]:
    """The groups of the given people: group key -> every member's id (sorted). One
    statement for the group ids, one for the members."""
    if not person_ids:
        return {}
    rows = session.execute(
        select(Person.id, Person.group_id).where(Person.id.in_(list(set(person_ids))))
    ).all()
    keys = {group_key(pid, gid) for pid, gid in rows}
    members: dict[str, set[str]] = {key: {key} for key in keys}
    grouped = [gid for _, gid in rows if gid]
    if grouped:
        for pid, gid in session.execute(
            select(Person.id, Person.group_id).where(Person.group_id.in_(sorted(set(grouped))))
        ):
            members[str(gid)].add(pid)
    for pid, gid in rows:
        members[group_key(pid, gid)].add(pid)
    return {key: sorted(ids) for key, ids in members.items()}


def record_ids(session: Session, person_id: str) -> list[str]:
    """``person_id`` first, then the other records of its group in id order."""
    members = next(iter(group_members(session, [person_id]).values()), [person_id])
    return [person_id, *(pid for pid in members if pid != person_id)]


def grouped_keys(session: Session, incident_id: str) -> dict[str, str]:
    """Every record of the incident that is in a group, mapped to its group key (one
    statement; records in no group are left out)."""
    rows = session.execute(
        select(Person.id, Person.group_id).where(
            Person.incident_id == incident_id, Person.group_id.is_not(None)
        )
    )
    return {pid: str(gid) for pid, gid in rows}


def collapse_to_groups(session: Session, incident_id: str, person_ids: Sequence[str]) -> list[str]:
    """One id per group, in the order the groups first appear in ``person_ids``: the
    group's key (so a search or listing shows each person once, as its group)."""
    keys = grouped_keys(session, incident_id)
    return list(dict.fromkeys(keys.get(pid, pid) for pid in person_ids))


def is_group_lead() -> ColumnElement[bool]:
    """SQL condition: the record stands for its group in a listing (no group, or the
    group's key)."""
    return or_(Person.group_id.is_(None), Person.group_id == Person.id)
