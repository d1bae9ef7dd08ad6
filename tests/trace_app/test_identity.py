"""Person identity: the confident-match rule, look-alikes with reasons, link decisions.

Every test runs on SQLite and on PostgreSQL (``database`` uses ``db_url``).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from accounts_helpers import TEST_OPERATOR
from sqlalchemy import func, select

from trace_app.domain import (
    InvalidReportError,
    NotFoundError,
    PersonInput,
    PublishReportInput,
    publish_report,
)
from trace_app.domain.errors import InvalidInputError
from trace_app.domain.identity import (
    Reason,
    ages_conflict,
    match_or_create_person,
    name_reasons,
    possible_duplicates,
)
from trace_app.domain.links import (
    current_links,
    decide_link_and_commit,
    link_history,
    same_person_ids,
)
from trace_app.domain.search import search_people
from trace_app.store.db import Database
from trace_app.store.models import ClaimStatus, Incident, LinkDecision, Person, PersonLink
from trace_app.store.types import new_id


def make_incident(database: Database, name: str = "Identity Incident") -> str:
    with database.session() as s:
        incident = Incident(id=new_id("inc"), name=name)
        s.add(incident)
        return incident.id


def report_input(incident_id: str, person: PersonInput) -> PublishReportInput:
    return PublishReportInput(
        incident_id=incident_id,
        source="Hill Clinic Test",
        summary="Seen at the clinic.",
        original_text="Our nurse saw this person at the clinic.",
        reported_at=datetime(2026, 7, 15, 8, 30, tzinfo=UTC),
        person=person,
        status=ClaimStatus.SEEN,
    )


def publish(
    database: Database, incident_id: str, name: str, age: int | None, **person: object
) -> str:
    with database.session() as s:
        report = publish_report(
            s, report_input(incident_id, PersonInput(name=name, age=age, **person))
        )
        return report.person_id


def people_count(database: Database) -> int:
    with database.sessions() as s:
        return s.scalar(select(func.count()).select_from(Person)) or 0


def codes(database: Database, person_id: str) -> dict[str, set[str]]:
    with database.sessions() as s:
        person = s.get(Person, person_id)
        assert person is not None
        return {d.person_id: {r.code for r in d.reasons} for d in possible_duplicates(s, person)}


def test_age_rule() -> None:
    assert not ages_conflict(30, 32)
    assert ages_conflict(30, 33)
    assert not ages_conflict(None, 30)
    assert not ages_conflict(30, None)


def test_same_name_conflicting_ages_make_two_people(database: Database) -> None:
    incident_id = make_incident(database)
    child = publish(database, incident_id, "Ram Thapa", 8)
    grandfather = publish(database, incident_id, "ram  THAPA", 71)
    assert child != grandfather
    assert people_count(database) == 2
    # each is offered to the other, the reason saying the ages differ
    dupes = codes(database, grandfather)
    assert dupes == {child: {Reason.SAME_NAME}}


def test_same_name_compatible_ages_make_one_person(database: Database) -> None:
    incident_id = make_incident(database)
    first = publish(database, incident_id, "Maya Gurung", 30)
    assert publish(database, incident_id, "maya gurung", 32) == first
    assert publish(database, incident_id, "Maya Gurung", None) == first
    assert people_count(database) == 1


def test_no_age_takes_the_first_age_then_keeps_it(database: Database) -> None:
    incident_id = make_incident(database)
    first = publish(database, incident_id, "Hari Rai", None)
    assert publish(database, incident_id, "Hari Rai", 40) == first
    # now the person is 40: a report saying 12 conflicts
    assert publish(database, incident_id, "Hari Rai", 12) != first
    with database.sessions() as s:
        person = s.get(Person, first)
        assert person is not None and person.age == 40


def test_several_matches_create_a_new_person_never_pick_one(database: Database) -> None:
    incident_id = make_incident(database)
    young = publish(database, incident_id, "Sita Magar", 10)
    old = publish(database, incident_id, "Sita Magar", 60)
    unknown_age = publish(database, incident_id, "Sita Magar", None)
    assert unknown_age not in {young, old}
    assert codes(database, unknown_age) == {young: {Reason.SAME_NAME}, old: {Reason.SAME_NAME}}


def test_explicit_person_id_attaches_whatever_the_name(database: Database) -> None:
    incident_id = make_incident(database)
    first = publish(database, incident_id, "Binod Magar", 50)
    # a conflicting age and another spelling: the chosen person still gets the report
    chosen = publish(database, incident_id, "B. Magar", 20, person_id=first)
    assert chosen == first
    with database.sessions() as s:
        person = s.get(Person, first)
        assert person is not None
        assert [a.name for a in person.alternate_names] == ["B. Magar"]
        assert person.age == 50
        assert {m.person_id for m in search_people(s, incident_id, q="b magar")} == {first}


def test_explicit_person_id_unknown_or_foreign_is_refused(database: Database) -> None:
    incident_id = make_incident(database)
    other_incident = make_incident(database, "Other Incident")
    foreign = publish(database, other_incident, "Asha Lama", 30)
    with database.session() as s, pytest.raises(NotFoundError):
        match_or_create_person(s, incident_id, "Asha Lama", 30, person_id="per_nope")
    with database.session() as s, pytest.raises(InvalidReportError) as caught:
        match_or_create_person(s, incident_id, "Asha Lama", 30, person_id=foreign)
    assert caught.value.fields == ("person.person_id",)
    assert people_count(database) == 1


def test_alternate_names_are_stored_matched_and_searchable(database: Database) -> None:
    incident_id = make_incident(database)
    first = publish(
        database, incident_id, "Sunita Rai", 25, alternate_names=["सुनिता राई", "sunita rai"]
    )
    with database.sessions() as s:
        person = s.get(Person, first)
        assert person is not None
        assert [a.name for a in person.alternate_names] == ["सुनिता राई"]
    # a report under the alternate name is a confident match
    assert publish(database, incident_id, "सुनिता राई", 26) == first
    with database.sessions() as s:
        assert [m.person_id for m in search_people(s, incident_id, q="Sunitta")] == [first]


@pytest.mark.parametrize(
    ("registered", "look_alike", "code"),
    [
        ("Maya Gurung", "M\u0430ya Gurung", Reason.CONFUSABLE),  # Cyrillic a
        ("Maya Gurung", "Ma\u200bya Gurung", Reason.INVISIBLE),  # zero-width space
        ("Maya Gurung", "\uff2daya Gurung", Reason.CONFUSABLE),  # full-width M
        ("सुनिता राई", "Sunita Rai", Reason.TRANSLITERATION),
        ("Sunita Rai", "Sunitta Rai", Reason.CLOSE_SPELLING),
    ],
)
def test_look_alikes_are_possible_duplicates_with_reasons(
    database: Database, registered: str, look_alike: str, code: str
) -> None:
    incident_id = make_incident(database)
    first = publish(database, incident_id, registered, 30)
    second = publish(database, incident_id, look_alike, 31)
    assert first != second  # never merged by code
    assert codes(database, second) == {first: {code}}
    assert codes(database, first) == {second: {code}}


def test_transliteration_and_typo_need_compatible_ages(database: Database) -> None:
    incident_id = make_incident(database)
    first = publish(database, incident_id, "Sunita Rai", 30)
    publish(database, incident_id, "सुनिता राई", 70)
    publish(database, incident_id, "Sunitta Rai", 5)
    cyrillic = publish(database, incident_id, "Sunit\u0430 Rai", 70)  # looks the same: offered
    assert codes(database, first) == {cyrillic: {Reason.CONFUSABLE}}


def test_reasons_have_words() -> None:
    (reason,) = name_reasons("Maya Gurung", "M\u0430ya Gurung", 30, 60)
    assert reason.code == Reason.CONFUSABLE
    assert "CYRILLIC" in reason.words.upper() and "60" in reason.words
    assert name_reasons("Maya Gurung", "Asha Lama", 30, 30) == []
    assert name_reasons("Ram Thapa", "Sam Tamang", None, None) == []


def test_decisions_different_same_and_reversal(database: Database) -> None:
    incident_id = make_incident(database)
    a = publish(database, incident_id, "Maya Gurung", 30)
    b = publish(database, incident_id, "M\u0430ya Gurung", 30)
    with database.session() as s:
        decide_link_and_commit(
            s, a, b, LinkDecision.DIFFERENT, "Two cousins, says the clinic.", actor=TEST_OPERATOR
        )
    assert codes(database, a) == {} and codes(database, b) == {}
    with database.sessions() as s:
        (seen_from_b,) = current_links(s, b)
        assert seen_from_b.other_person_id == a and seen_from_b.decision is LinkDecision.DIFFERENT
        assert same_person_ids(s, a) == []
    # reversed: "same" supersedes "different", the history keeps both
    with database.session() as s:
        decide_link_and_commit(
            s, b, a, LinkDecision.SAME, "The clinic corrected its record.", actor=TEST_OPERATOR
        )
    with database.sessions() as s:
        history = link_history(s, a)
        assert [(v.decision, v.current) for v in history] == [
            (LinkDecision.SAME, True),
            (LinkDecision.DIFFERENT, False),
        ]
        assert same_person_ids(s, a) == [b] and same_person_ids(s, b) == [a]
        assert s.scalar(select(func.count()).select_from(Person)) == 2  # nothing deleted
    assert codes(database, a) == {}
    # withdrawn: offered again
    with database.session() as s:
        decide_link_and_commit(
            s, a, b, LinkDecision.UNDECIDED, "Not sure after all.", actor=TEST_OPERATOR
        )
    assert codes(database, a) == {b: {Reason.CONFUSABLE}}
    with database.sessions() as s:
        assert current_links(s, a) == []
        assert s.scalar(select(func.count()).select_from(PersonLink)) == 3


def test_same_is_transitive(database: Database) -> None:
    incident_id = make_incident(database)
    a = publish(database, incident_id, "Asha Lama", 30)
    b = publish(database, incident_id, "Asha Lamaa", 30)
    c = publish(database, incident_id, "Aasha Lama", 30)
    assert set(codes(database, a)) == {b, c}
    with database.session() as s:
        decide_link_and_commit(
            s, a, b, LinkDecision.SAME, "Same phone number.", actor=TEST_OPERATOR
        )
    with database.session() as s:
        decide_link_and_commit(
            s, c, b, LinkDecision.SAME, "Same village and parents.", actor=TEST_OPERATOR
        )
    with database.sessions() as s:
        assert set(same_person_ids(s, a)) == {b, c}
    assert codes(database, a) == {}  # c is the same person through b: not offered


@pytest.mark.parametrize(
    ("other", "decision", "note", "error"),
    [
        ("self", LinkDecision.SAME, "note", InvalidInputError),
        ("per_nope", LinkDecision.SAME, "note", NotFoundError),
        ("foreign", LinkDecision.SAME, "note", InvalidInputError),
        ("b", LinkDecision.SAME, "   ", InvalidInputError),
        ("b", LinkDecision.UNDECIDED, "nothing to undo", InvalidInputError),
    ],
)
def test_bad_decisions_are_refused_and_save_nothing(
    database: Database, other: str, decision: LinkDecision, note: str, error: type[Exception]
) -> None:
    incident_id = make_incident(database)
    a = publish(database, incident_id, "Maya Gurung", 30)
    ids = {
        "self": a,
        "per_nope": "per_nope",
        "b": publish(database, incident_id, "Maya Gurang", 30),
        "foreign": publish(database, make_incident(database, "Elsewhere"), "Maya Gurung", 30),
    }
    with database.session() as s, pytest.raises(error):
        decide_link_and_commit(s, a, ids[other], decision, note, actor=TEST_OPERATOR)
    with database.sessions() as s:
        assert s.scalar(select(func.count()).select_from(PersonLink)) == 0


def test_reset_deletes_alternate_names_and_decisions(database: Database) -> None:
    from trace_app.demo.seed import reset_demo
    from trace_app.store.models import PersonAlternateName

    incident_id = make_incident(database)
    a = publish(database, incident_id, "Maya Gurung", 30, alternate_names=["Maya G."])
    b = publish(database, incident_id, "Maya Gurang", 30)
    with database.session() as s:
        decide_link_and_commit(s, a, b, LinkDecision.SAME, "Same card.", actor=TEST_OPERATOR)
    with database.session() as s:
        reset_demo(s)
    with database.sessions() as s:
        assert s.scalar(select(func.count()).select_from(PersonLink)) == 0
        assert s.scalar(select(func.count()).select_from(PersonAlternateName)) == 0
