"""publish_report: the one function behind the form and POST /api/reports."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

from trace_app.domain import (
    EMPTY_REPORT_MESSAGE,
    EmptyReportError,
    InvalidReportError,
    NotFoundError,
    PersonInput,
    PublishReportInput,
    publish_report,
)
from trace_app.store.db import Database
from trace_app.store.models import (
    Alert,
    Claim,
    ClaimStatus,
    Incident,
    Organization,
    Person,
    Report,
)
from trace_app.store.types import new_id

MODELS = (Incident, Organization, Person, Report, Claim, Alert)


def counts(session: Session) -> dict[str, int]:
    return {m.__name__: session.scalar(select(func.count()).select_from(m)) or 0 for m in MODELS}


def make_incident(database: Database, name: str = "Test Incident") -> str:
    with database.session() as s:
        incident = Incident(id=new_id("inc"), name=name)
        s.add(incident)
        return incident.id


def report_input(incident_id: str, **overrides: object) -> PublishReportInput:
    data: dict[str, object] = {
        "incident_id": incident_id,
        "source": "River Clinic Test",
        "summary": "Anna Test seen at the clinic.",
        "original_text": "Our nurse spoke with Anna Test at the clinic this morning.",
        "reported_at": datetime(2026, 7, 15, 8, 30, tzinfo=UTC),
        "references": ["clinic log 7"],
        "person": PersonInput(name="Anna Test", age=30),
        "status": ClaimStatus.SEEN,
        "location": "River clinic",
    }
    data.update(overrides)
    return PublishReportInput.model_validate(data)


def test_publish_stores_report_claim_person(database: Database) -> None:
    incident_id = make_incident(database)
    with database.session() as s:
        report = publish_report(s, report_input(incident_id))
        report_id = report.id
    with database.sessions() as s:
        stored = s.get(Report, report_id)
        assert stored is not None
        assert stored.organization.name == "River Clinic Test"
        assert stored.source == "River Clinic Test"
        assert stored.reported_at == datetime(2026, 7, 15, 8, 30, tzinfo=UTC)
        assert stored.references == ["clinic log 7"]
        assert stored.person.name == "Anna Test" and stored.person.age == 30
        assert [(c.status, c.location) for c in stored.claims] == [("seen", "River clinic")]
        assert counts(s)["Alert"] == 0
        assert isinstance(report_id, str) and report_id.startswith("rep_")


def test_person_matched_by_trimmed_casefolded_name(database: Database) -> None:
    incident_id = make_incident(database)
    with database.session() as s:
        first = publish_report(s, report_input(incident_id))
        second = publish_report(
            s,
            report_input(
                incident_id,
                source="Other Source Test",
                person=PersonInput(name="  anna   TEST "),
                status=ClaimStatus.SAFE,
            ),
        )
        assert first.person_id == second.person_id
    with database.sessions() as s:
        person = s.scalars(select(Person)).one()
        assert [c.status for c in person.claims] == ["seen", "safe"]
        assert person.name == "Anna Test"
        assert counts(s)["Organization"] == 2


def test_same_name_in_another_incident_is_another_person(database: Database) -> None:
    a = make_incident(database, "Incident A")
    b = make_incident(database, "Incident B")
    with database.session() as s:
        ra = publish_report(s, report_input(a))
        rb = publish_report(s, report_input(b))
        assert ra.person_id != rb.person_id
        assert ra.organization_id == rb.organization_id


def test_age_fills_in_but_never_overwrites(database: Database) -> None:
    incident_id = make_incident(database)
    with database.session() as s:
        publish_report(s, report_input(incident_id, person=PersonInput(name="Bo Test")))
        publish_report(s, report_input(incident_id, person=PersonInput(name="bo test", age=7)))
        publish_report(s, report_input(incident_id, person=PersonInput(name="Bo Test", age=9)))
    with database.sessions() as s:
        assert s.scalars(select(Person.age)).one() == 7


def test_missing_claim_opens_alert(database: Database) -> None:
    incident_id = make_incident(database)
    with database.session() as s:
        report = publish_report(s, report_input(incident_id, status=ClaimStatus.MISSING))
        report_id = report.id
    with database.sessions() as s:
        alert = s.scalars(select(Alert)).one()
        assert alert.state == "open"
        assert alert.incident_id == incident_id
        assert alert.claim.report_id == report_id
        assert alert.person.name == "Anna Test"


@pytest.mark.parametrize(
    ("summary", "text"),
    [("", "text"), ("summary", ""), ("   ", "text"), ("summary", "\n\t "), ("", "")],
)
def test_empty_summary_or_text_refused_and_nothing_saved(
    database: Database, summary: str, text: str
) -> None:
    incident_id = make_incident(database)
    with database.sessions() as s:
        before = counts(s)
        with pytest.raises(EmptyReportError) as info:
            publish_report(
                s,
                report_input(
                    incident_id, summary=summary, original_text=text, status=ClaimStatus.MISSING
                ),
            )
        assert str(info.value) == EMPTY_REPORT_MESSAGE
        assert not s.new and not s.dirty
        s.commit()
        assert counts(s) == before


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(blank=st.text(alphabet=" \t\r\n\u00a0\u2003", max_size=8))
def test_any_blank_summary_is_refused(database: Database, blank: str) -> None:
    with database.sessions() as s:
        with pytest.raises(EmptyReportError):
            publish_report(s, report_input("inc_unused", summary=blank))


def test_message_is_exact() -> None:
    assert EMPTY_REPORT_MESSAGE == "Enter a summary and the original report text."


def test_long_text_is_accepted(database: Database) -> None:
    incident_id = make_incident(database)
    long_text = "The family reports. " * 400  # 8,000 characters
    with database.session() as s:
        report = publish_report(s, report_input(incident_id, original_text=long_text))
        report_id = report.id
    with database.sessions() as s:
        stored = s.get(Report, report_id)
        assert stored is not None and stored.original_text == long_text
        assert len(stored.original_text) > 3000


def test_unknown_incident_and_blank_person_refused(database: Database) -> None:
    incident_id = make_incident(database)
    with database.sessions() as s:
        with pytest.raises(NotFoundError):
            publish_report(s, report_input("inc_nope"))
        with pytest.raises(InvalidReportError):
            publish_report(s, report_input(incident_id, person=PersonInput(name="  ")))
        with pytest.raises(InvalidReportError):
            publish_report(s, report_input(incident_id, source=" "))
        assert not s.new
        s.rollback()
        assert counts(s)["Report"] == 0


def test_failure_during_flush_saves_nothing(database: Database) -> None:
    """If the database refuses part of a report, the report, claim and alert all go."""
    incident_id = make_incident(database)

    def refuse_alerts(session: Session, _ctx: object, _instances: object) -> None:
        if any(isinstance(obj, Alert) for obj in session.new):
            raise RuntimeError("simulated failure while writing the alert")

    with database.sessions() as s:
        before = counts(s)
    with pytest.raises(RuntimeError, match="simulated"):
        with database.session() as s:
            event.listen(s, "before_flush", refuse_alerts)
            publish_report(s, report_input(incident_id, status=ClaimStatus.MISSING))
    with database.sessions() as s:
        assert counts(s) == before


def test_status_outside_the_set_is_refused() -> None:
    with pytest.raises(ValueError):
        PublishReportInput.model_validate(
            {"incident_id": "x", "source": "s", "status": "lost", "person": {"name": "A"}}
        )


@settings(max_examples=40, deadline=None)
@given(
    words=st.lists(
        st.text(
            alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=8
        ),
        min_size=1,
        max_size=4,
    ),
    pads=st.tuples(st.sampled_from(["", " ", "  ", "\t"]), st.sampled_from(["", " ", "\n"])),
    gap=st.sampled_from([" ", "  ", " \t "]),
)
def test_name_key_ignores_case_and_spacing(
    words: list[str], pads: tuple[str, str], gap: str
) -> None:
    from trace_app.domain import name_key

    plain = " ".join(words)
    variant = pads[0] + gap.join(w.swapcase() for w in words) + pads[1]
    assert name_key(variant) == name_key(plain)
    assert name_key(plain + "x") != name_key(plain)
