"""Property: the linked groups, the people's statuses and the open alerts depend only on
what was reported and decided, never on the order it happened in.

For any set of reports and any same / different / undecided decisions, replayed in
another order that keeps each pair's decisions in their order, the groups (as sets of
records), every record's status (over its group's claims) and the open alerts (each
with its sources) come out the same, and every report's claim is kept. Reports carry
distinct times (two claims of one moment are ordered by publication, by design)."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from accounts_helpers import TEST_OPERATOR
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.domain import alert_queries
from trace_app.domain.links import decide_link
from trace_app.domain.person_view import person_detail
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.store.db import make_engine, migrate
from trace_app.store.models import Claim, ClaimStatus, Incident, LinkDecision, Person, Report

NAMES = ("Asha Prop", "Bina Prop", "Chandra Prop", "Dawa Prop")
START = datetime(2026, 7, 15, 6, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Said:
    """A report: who, what, at which (distinct) minute, from which source."""

    person: int
    status: ClaimStatus
    minute: int
    source: str


@dataclass(frozen=True)
class Decided:
    pair: tuple[int, int]
    decision: LinkDecision


Event = Said | Decided


@st.composite
def histories(draw: st.DrawFn) -> list[Event]:
    count = draw(st.integers(min_value=1, max_value=7))
    minutes = draw(st.lists(st.integers(0, 600), min_size=count, max_size=count, unique=True))
    events: list[Event] = [
        Said(
            draw(st.integers(0, len(NAMES) - 1)),
            draw(st.sampled_from(list(ClaimStatus))),
            minute,
            draw(st.sampled_from(["Police Prop", "Camp Prop", "Relay Prop"])),
        )
        for minute in minutes
    ]
    last: dict[tuple[int, int], LinkDecision] = {}
    for _ in range(draw(st.integers(0, 6))):
        a, b = draw(st.sampled_from([(a, b) for a in range(4) for b in range(a + 1, 4)]))
        decision = draw(st.sampled_from(list(LinkDecision)))
        if decision is LinkDecision.UNDECIDED and last.get((a, b), decision) is decision:
            continue  # nothing to withdraw: refused whatever the order
        last[(a, b)] = decision
        events.append(Decided((a, b), decision))
    return events


def reorder(events: list[Event], seed: int) -> list[Event]:
    """Shuffle, then put each pair's decisions back in their own order."""
    shuffled = list(events)
    random.Random(seed).shuffle(shuffled)
    queues: dict[tuple[int, int], list[Decided]] = {}
    for event in events:
        if isinstance(event, Decided):
            queues.setdefault(event.pair, []).append(event)
    return [e if isinstance(e, Said) else queues[e.pair].pop(0) for e in shuffled]


@contextmanager
def fresh_store(folder: Path) -> Iterator[Session]:
    engine = make_engine(f"sqlite:///{folder / f'p{random.getrandbits(64)}.db'}")
    migrate(engine)  # the real schema: the name index is made by a migration
    try:
        with Session(engine, expire_on_commit=False) as session:
            yield session
    finally:
        engine.dispose()


def replay(events: list[Event], folder: Path) -> tuple[object, ...]:
    with fresh_store(folder) as s:
        incident = Incident(id="inc_prop", name="Property incident")
        s.add(incident)
        ids = [f"per_{i}" for i in range(len(NAMES))]
        for pid, name in zip(ids, NAMES, strict=True):
            s.add(Person(id=pid, incident_id=incident.id, name=name, name_key=name.casefold()))
        s.commit()
        for event in events:
            if isinstance(event, Said):
                publish_report(
                    s,
                    PublishReportInput(
                        incident_id=incident.id,
                        source=event.source,
                        summary=f"r{event.minute}",
                        original_text=f"{NAMES[event.person]} is {event.status}.",
                        reported_at=START + timedelta(minutes=event.minute),
                        person=PersonInput(name=NAMES[event.person], person_id=ids[event.person]),
                        status=event.status,
                    ),
                )
            else:
                a, b = event.pair
                decide_link(s, ids[a], ids[b], event.decision, "prop", actor=TEST_OPERATOR)
            s.commit()
        name_of = dict(zip(ids, NAMES, strict=True))
        summary_of = dict(s.execute(select(Claim.id, Report.summary).join(Report)).all())
        groups = set()
        statuses = {}
        for pid in ids:
            detail = person_detail(s, pid)
            groups.add(frozenset([name_of[pid], *(name_of[p.id] for p in detail.same_people)]))
            status = detail.combined_status
            statuses[name_of[pid]] = (status.status, summary_of.get(status.claim_id or ""))
        alerts = set()
        for alert in alert_queries.open_alerts(s, incident.id, limit=500).items:
            group = next(g for g in groups if alert.person_name in g)
            alerts.add((group, alert.source, tuple(sorted(alert.other_sources))))
        summaries = sorted(s.scalars(select(Report.summary).join(Claim)).all())
        return frozenset(groups), statuses, frozenset(alerts), summaries


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=histories(), seed=st.integers(0, 2**32))
def test_replay_order_changes_nothing(events: list[Event], seed: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        first = replay(events, Path(folder))
        second = replay(reorder(events, seed), Path(folder))
    assert first == second
    # every report's claim is kept
    assert first[3] == sorted(f"r{e.minute}" for e in events if isinstance(e, Said))
