"""Search and duplicate finding when many people share a name (issue 43), on SQLite and
PostgreSQL: incidents drawn as real lists look (a few common first and family names,
the commonest far more often, namesakes told apart by a number, typos) give what a scan
of every name gives; the bounds answer a common name from the key's B-tree, its exact
holders first, newest claim first, with how many match in all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from test_name_index import Someone, full_scan_duplicates, make_incident, typo
from test_search_syntax import assert_search_like_the_full_scan

from trace_app.domain import identity, search
from trace_app.domain.identity import duplicate_candidates
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.domain.search import search_key, search_people, search_results
from trace_app.store.db import Database
from trace_app.store.models import ClaimStatus, Incident, Person
from trace_app.store.types import new_id

# Zipf-like: the k-th name comes about 1/k as often (repeated in the list drawn from)
FIRST = ["Maya", "Mohammad", "Maria", "Sita", "Ali", "Jose", "Ram", "Fatima", "John"]
FAMILY = ["Gurung", "Ali", "Garcia", "Smith", "Tamang", "Hassan", "Rai", "Khan"]
WEIGHTED_FIRST = [name for k, name in enumerate(FIRST, 1) for _ in range(12 // k)]
WEIGHTED_FAMILY = [name for k, name in enumerate(FAMILY, 1) for _ in range(12 // k)]


@st.composite
def common_name(draw: st.DrawFn) -> str:
    name = f"{draw(st.sampled_from(WEIGHTED_FIRST))} {draw(st.sampled_from(WEIGHTED_FAMILY))}"
    if draw(st.integers(0, 2)) == 0:
        name += f" {draw(st.integers(1, 120))}"  # namesakes told apart by a number
    if draw(st.integers(0, 4)) == 0:
        name = draw(typo(name))
    return name


people_lists = st.lists(
    st.builds(Someone, common_name(), st.one_of(st.none(), st.integers(1, 90)), st.just(())),
    min_size=2,
    max_size=30,
)


@settings(
    deadline=None,
    max_examples=15,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(people=people_lists, data=st.data())
def test_common_names_search_and_duplicates_like_the_full_scan(
    database: Database, people: list[Someone], data: st.DataObject
) -> None:
    incident_id = make_incident(database, people)
    source = data.draw(st.sampled_from([p.name for p in people]))
    key = search_key(source)
    queries = [source, key, key.split()[0], data.draw(typo(key))]
    with database.sessions() as s:
        for q in queries:
            assert_search_like_the_full_scan(s, incident_id, q)
        persons = s.scalars(
            select(Person).where(Person.incident_id == incident_id).order_by(Person.id)
        ).all()
        person = data.draw(st.sampled_from(persons))
        assert duplicate_candidates(s, person) == full_scan_duplicates(s, person)


START = datetime(2026, 7, 15, 8, 0, tzinfo=UTC)


def publish_all(database: Database, names: list[tuple[str, int]]) -> str:
    """(name, age): one report each, a minute apart, in this order."""
    with database.session() as s:
        incident = Incident(id=new_id("inc"), name=f"Namesakes {new_id('x')}")
        s.add(incident)
        s.flush()
        for minute, (name, age) in enumerate(names):
            publish_report(
                s,
                PublishReportInput(
                    incident_id=incident.id,
                    source="Camp A",
                    summary=f"{name} at camp.",
                    original_text=f"A volunteer saw {name} ({age}) at camp.",
                    reported_at=START + timedelta(minutes=minute),
                    person=PersonInput(name=name, age=age),
                    status=ClaimStatus.SEEN,
                ),
            )
        return incident.id


def test_namesakes_fill_the_bound_newest_claim_first_and_are_counted(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More holders of a name than the bound: the exact holders only, the one whose
    latest claim is newest first, and the total counts every name beginning with it."""
    names = [("Maya Gurung", 10 * age) for age in range(1, 9)]  # 8 people, ages apart
    names += [("Maya Gurung 42", 30), ("Maya Gurang", 30), ("Sita Maya Gurung", 30)]
    incident_id = publish_all(database, names)
    monkeypatch.setattr(search, "CANDIDATE_LIMIT", 5)
    with database.sessions() as s:
        found = search_results(s, incident_id, q="maya gurung")
        ages = {
            p.id: p.age for p in s.scalars(select(Person).where(Person.incident_id == incident_id))
        }
        assert [m.name for m in found.matches] == ["Maya Gurung"] * 5
        # newest claim first (published in age order here): on SQLite the five read are
        # the records stored last; PostgreSQL reads five in its index's order
        shown = [ages[m.person_id] or 0 for m in found.matches]
        assert shown == sorted(shown, reverse=True)
        if s.connection().dialect.name == "sqlite":
            assert shown == [80, 70, 60, 50, 40]
        assert (found.total, found.at_least) == (9, True)  # 8 and "Maya Gurung 42"
        everyone = search_results(s, incident_id, q="gurung")
        assert everyone.at_least and everyone.total >= len(everyone.matches) == 5
    monkeypatch.setattr(search, "CANDIDATE_LIMIT", 500)
    with database.sessions() as s:
        found = search_results(s, incident_id, q="maya gurung")
        assert found.at_least is False and found.total == len(found.matches)
        assert [m.name for m in found.matches][:8] == ["Maya Gurung"] * 8
        assert "Maya Gurang" in [m.name for m in found.matches]


def test_namesakes_filling_the_bound_are_the_duplicates(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person page for one of more namesakes than the bound lists namesakes (read from
    the key's B-tree alone); below the bound, the close spellings too, as the full scan."""
    people = [Someone("Maya Gurung", 10 * age, ()) for age in range(1, 7)]  # six people
    people += [Someone("Maya Gurang", None, ()), Someone("Maya Gurung 4", None, ())]
    incident_id = make_incident(database, people)
    with database.sessions() as s:
        person = s.scalars(
            select(Person).where(Person.incident_id == incident_id, Person.name == "Maya Gurung")
        ).first()
        assert person is not None
        full = full_scan_duplicates(s, person)
        assert duplicate_candidates(s, person) == full
        assert {"Maya Gurang", "Maya Gurung 4"} <= {d.name for d in full}
        monkeypatch.setattr(identity, "SAME_KEY_LIMIT", 4)
        found = duplicate_candidates(s, person)
        assert [d.name for d in found] == ["Maya Gurung"] * 4
        assert all(d.reasons[0].code == "same_name" for d in found)


def test_search_people_keeps_its_answer(database: Database) -> None:
    """``search_people`` is ``search_results(...).matches`` (the web layer calls both)."""
    incident_id = make_incident(database, [Someone("Maya Gurung", age, ()) for age in (9, 29)])
    with database.sessions() as s:
        found = search_results(s, incident_id, q="maya")
        assert search_people(s, incident_id, q="maya") == found.matches
        assert (len(found.matches), found.total, found.at_least) == (2, 2, False)


def test_a_numbered_namesake_reads_its_nearest_not_every_holder_of_its_words(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More people sharing the words of "Maya Gurung 42" than the bound: the candidates
    are those holding every word, then the names nearest to it in key order; below the
    bound, what the full scan finds."""
    people = [Someone("Maya Gurung 42", None, ()), Someone("Sita Maya Gurung 42", None, ())]
    people += [Someone(f"Maya Gurung {n}", None, ()) for n in (4, 43, 100, 101, 102, 103, 104)]
    people += [Someone("Maya Tamang 42", None, ()), Someone("Ram Gurung 42", None, ())]
    incident_id = make_incident(database, people)
    with database.sessions() as s:
        person = s.scalars(
            select(Person).where(Person.incident_id == incident_id, Person.name == "Maya Gurung 42")
        ).one()
        assert duplicate_candidates(s, person) == full_scan_duplicates(s, person)
        monkeypatch.setattr(identity, "SAME_KEY_LIMIT", 4)
        blocked = identity._blocked(s, person) - {person.id}
        names = {s.get(Person, pid).name for pid in blocked}  # type: ignore[union-attr]
        # every word held, then nearest in key order ("maya gurung 104" sorts before "4")
        nearest = {"Maya Gurung 43", "Maya Gurung 4", "Maya Gurung 104"}
        assert names == {"Sita Maya Gurung 42", *nearest}
