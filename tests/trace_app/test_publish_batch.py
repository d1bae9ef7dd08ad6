"""A batch of reports (``publish_reports``) ends exactly as the same reports published one
at a time (``publish_report``): the same people by the identity rule, the same
organisations, positions and claims, and the same alerts opened and closed by the alert
rule. Generated sequences mix statuses, out-of-order report times, repeated and
look-alike names, conflicting ages and explicit people. Both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from trace_app.domain.errors import EmptyReportError, InvalidReportError
from trace_app.domain.publish import (
    PersonInput,
    PublishReportInput,
    publish_report,
    publish_reports,
)
from trace_app.store.db import Database
from trace_app.store.models import Alert, Claim, ClaimStatus, Incident, Person, Report
from trace_app.store.types import new_id

START = datetime(2026, 7, 15, 8, 0, tzinfo=UTC)
NAMES = ("Anna Test", "anna  test", "Ana Test", "Omar Haddad", "सुनिता राई")
SOURCES = ("River Clinic", "river clinic", "Shelter North")


def _incident(database: Database) -> str:
    with database.session() as s:
        incident = Incident(id=new_id("inc"), name=f"Batch {new_id('x')}")
        s.add(incident)
        return incident.id


def _input(incident_id: str, item: tuple[str, int, str, int | None, str]) -> PublishReportInput:
    status, minutes, name, age, source = item
    return PublishReportInput(
        incident_id=incident_id,
        source=source,
        summary=f"{name} is {status}.",
        original_text=f"The desk says {name} is {status}.",
        reported_at=START + timedelta(minutes=minutes),
        person=PersonInput(name=name, age=age),
        status=ClaimStatus(status),
        location=f"Camp {minutes % 3}",
    )


def _outcome(database: Database, incident_id: str) -> list[Any]:
    """Everything the rules decided, by position and names (ids differ between runs)."""
    with database.sessions() as s:
        reports = s.scalars(
            select(Report).where(Report.incident_id == incident_id).order_by(Report.position)
        ).all()
        claim_positions = {
            c.id: c.position
            for c in s.scalars(select(Claim).where(Claim.incident_id == incident_id))
        }
        person_of_report = [r.person_id for r in reports]
        # people in the order their first report appears, so ids do not matter
        order: dict[str, int] = {}
        for pid in person_of_report:
            order.setdefault(pid, len(order))
        persons = {
            p.id: (p.name, p.age)
            for p in s.scalars(select(Person).where(Person.incident_id == incident_id))
        }
        alerts = s.scalars(
            select(Alert).where(Alert.incident_id == incident_id).order_by(Alert.position)
        ).all()
        return [
            [
                (
                    r.position,
                    order[r.person_id],
                    persons[r.person_id],
                    r.organization.name,
                    r.status,
                    r.reported_at,
                )
                for r in reports
            ],
            [
                (
                    a.position,
                    order[a.person_id],
                    a.state,
                    claim_positions.get(a.closed_by_claim_id or ""),
                    a.raised_at,
                )
                for a in alerts
            ],
            len(persons),
        ]


reports = st.lists(
    st.tuples(
        st.sampled_from([s.value for s in ClaimStatus]),
        st.integers(min_value=0, max_value=120),
        st.sampled_from(NAMES),
        st.sampled_from([None, 30, 31, 45]),
        st.sampled_from(SOURCES),
    ),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(items=reports, split=st.integers(min_value=0, max_value=12))
def test_a_batch_ends_as_one_report_at_a_time(
    database: Database, items: list[Any], split: int
) -> None:
    one_by_one, batched = _incident(database), _incident(database)
    for item in items:
        with database.session() as s:
            publish_report(s, _input(one_by_one, item))
    # two batches: the second one meets the first one's people and alerts in the database
    with database.session() as s:
        publish_reports(s, [_input(batched, item) for item in items[:split]])
    with database.session() as s:
        publish_reports(s, [_input(batched, item) for item in items[split:]])
    assert _outcome(database, batched) == _outcome(database, one_by_one)


def test_a_batch_names_its_people_explicitly_too(database: Database) -> None:
    incident = _incident(database)
    with database.session() as s:
        first = publish_report(s, _input(incident, ("missing", 0, "Anna Test", 30, "Clinic")))
        person_id = first.person_id
    with database.session() as s:
        data = _input(incident, ("safe", 10, "Anna T.", None, "Clinic"))
        data.person.person_id = person_id
        later = publish_reports(s, [data, _input(incident, ("seen", 5, "Anna Test", 31, "Clinic"))])
        assert [r.person_id for r in later] == [person_id, person_id]
    with database.sessions() as s:
        alert = s.scalars(select(Alert).where(Alert.incident_id == incident)).one()
        assert alert.state == "closed"
        names = s.get(Person, person_id)
        assert names is not None
        assert [a.name for a in names.alternate_names] == ["Anna T."]


@pytest.mark.parametrize(
    ("change", "error"),
    [({"summary": "  "}, EmptyReportError), ({"source": " "}, InvalidReportError)],
)
def test_one_unusable_report_adds_nothing_of_its_batch(
    database: Database, change: dict[str, str], error: type[Exception]
) -> None:
    incident = _incident(database)
    good = _input(incident, ("missing", 0, "Anna Test", 30, "Clinic"))
    bad = _input(incident, ("missing", 1, "Omar Haddad", 40, "Clinic")).model_copy(update=change)
    with database.session() as s, pytest.raises(error):
        publish_reports(s, [good, bad])
    with database.sessions() as s:
        assert s.scalars(select(Report).where(Report.incident_id == incident)).all() == []
        assert s.scalars(select(Person).where(Person.incident_id == incident)).all() == []


def test_a_batch_takes_one_incident(database: Database) -> None:
    a, b = _incident(database), _incident(database)
    with database.session() as s, pytest.raises(ValueError, match="one incident"):
        publish_reports(
            s,
            [
                _input(a, ("missing", 0, "Anna Test", 30, "Clinic")),
                _input(b, ("missing", 0, "Anna Test", 30, "Clinic")),
            ],
        )
