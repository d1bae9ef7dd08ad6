"""When a tracing request closes and when its contacts are erased (issue 41): a death
gives a follow-up with the enquirers' contacts, marking it done closes their requests; a
mail telling them the person was found closes theirs; the purge erases contacts only once
the incident's retention has run out, leaves tombstones, and is audited; ``trace
inquiries purge`` runs it. SQLite (a copy of a migrated file) and the seeded demo app."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from accounts_helpers import TEST_OPERATOR, app_database
from sqlalchemy import select
from typer.testing import CliRunner

from conftest import copy_sqlite
from trace_app.cli import app as cli
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.notifications import retention
from trace_app.notifications.inquiries import InquiryInput, create_inquiry
from trace_app.store.account_models import AuditEvent
from trace_app.store.db import Database, make_engine
from trace_app.store.models import ClaimStatus, Incident
from trace_app.store.notification_models import Delivery, Inquiry, OutboxEvent
from trace_app.store.types import new_id

START = datetime(2026, 7, 15, 8, 0, tzinfo=UTC)


@pytest.fixture
def lite_path(tmp_path: Path, migrated_sqlite: Path) -> Path:
    copy_sqlite(migrated_sqlite, tmp_path / "trace.db")
    return tmp_path / "trace.db"


@pytest.fixture
def lite(lite_path: Path) -> Iterator[Database]:
    db = Database(make_engine(f"sqlite:///{lite_path}"))
    yield db
    db.dispose()


def _incident(db: Database, days: int = 90) -> str:
    with db.session() as s:
        incident = Incident(id=new_id("inc"), name=f"Retention {new_id('x')}")
        incident.contact_retention_days = days
        s.add(incident)
        return incident.id


def _publish(db: Database, incident_id: str, status: str, minutes: int, person: str | None) -> str:
    with db.session() as s:
        report = publish_report(
            s,
            PublishReportInput(
                incident_id=incident_id,
                source="Retention Clinic",
                summary=f"{status} report",
                original_text=f"The person is {status}.",
                reported_at=START + timedelta(minutes=minutes),
                person=PersonInput(name="Sita Retention", person_id=person),
                status=ClaimStatus(status),
            ),
        )
        return report.person_id


def _inquiry(db: Database, incident_id: str, person_id: str, closed: datetime | None) -> str:
    data = InquiryInput.model_validate(
        {
            "person_id": person_id,
            "enquirer": {"name": "Ram", "relationship": "father", "email": "ram@example.org"},
            "consent": True,
        }
    )
    with db.session() as s:
        inquiry = create_inquiry(s, incident_id, data, actor=TEST_OPERATOR)
        inquiry.closed_at = closed
        return inquiry.id


def _row(db: Database, inquiry_id: str) -> Inquiry:
    with db.sessions() as s:
        row = s.get(Inquiry, inquiry_id)
        assert row is not None
        s.expunge(row)
        return row


def test_contacts_are_erased_only_when_the_retention_has_run_out(lite: Database) -> None:
    default, short = _incident(lite), _incident(lite, days=10)
    closed = datetime(2026, 8, 1, tzinfo=UTC)
    person = _publish(lite, default, "missing", 0, None)
    other = _publish(lite, short, "missing", 0, None)
    kept = _inquiry(lite, default, person, closed)
    early = _inquiry(lite, short, other, closed)
    never = _inquiry(lite, default, person, None)  # still open: kept however long

    with lite.session() as s:
        result = retention.purge(s, actor=TEST_OPERATOR, now=closed + timedelta(days=89))
    assert (result.erased, result.erased_ids) == (1, (early,))
    assert _row(lite, kept).email == "ram@example.org"
    tomb = _row(lite, early)
    assert tomb.email is None and tomb.enquirer_name is None and tomb.phone is None
    assert tomb.contacts_erased_at is not None and tomb.erased_by is not None
    assert tomb.erased_by.startswith("retention")

    with lite.session() as s:
        dry = retention.purge(s, actor=TEST_OPERATOR, now=closed + timedelta(days=90), dry_run=True)
        s.rollback()
    assert dry.erased_ids == (kept,) and _row(lite, kept).email is not None
    with lite.session() as s:
        assert retention.purge(s, actor=TEST_OPERATOR, now=closed + timedelta(days=90)).erased == 1
    assert _row(lite, kept).contacts_erased_at is not None
    assert _row(lite, never).email == "ram@example.org"
    with lite.sessions() as s:
        purges = s.scalars(select(AuditEvent).where(AuditEvent.action == "inquiry.purge")).all()
    assert [p.after for p in purges] == [{"closed": 0, "erased": 1}] * 2
    assert purges[0].touched == [f"inquiry:{early}"]


def test_a_request_closes_when_a_mail_told_them_the_person_was_found(lite: Database) -> None:
    incident_id = _incident(lite)
    person = _publish(lite, incident_id, "missing", 0, None)
    told = _inquiry(lite, incident_id, person, None)
    _publish(lite, incident_id, "safe", 10, person)
    delivered_at = datetime(2026, 8, 2, 9, 30, tzinfo=UTC)
    with lite.session() as s:
        [event] = s.scalars(select(OutboxEvent).where(OutboxEvent.kind == "status.changed")).all()[
            1:
        ]
        assert '"status":"safe"' in event.payload
        s.add(
            Delivery(
                id=new_id("dlv"),
                event_id=event.id,
                channel="email",
                target_id=told,
                state="delivered",
                delivered_at=delivered_at,
            )
        )
    with lite.session() as s:
        assert retention.close_informed(s) == [told]
    assert _row(lite, told).closed_at == delivered_at
    # missing again: a request told "safe" before stays closed, none other closes
    again = _inquiry(lite, incident_id, person, None)
    _publish(lite, incident_id, "missing", 20, person)
    with lite.session() as s:
        assert retention.close_informed(s) == []
    assert _row(lite, again).closed_at is None


def test_a_death_gives_a_follow_up_and_done_closes_the_requests(web: Any, incident_id: str) -> None:
    people = web.get(f"/api/incidents/{incident_id}/people").json()["items"]
    person_id = people[0]["id"]
    made = web.post(
        f"/api/incidents/{incident_id}/inquiries",
        json={
            "person_id": person_id,
            "enquirer": {"name": "Maya Follow", "relationship": "wife", "phone": "+977 98 1"},
            "consent": True,
        },
    )
    assert made.status_code == 201, made.text
    url = f"/api/incidents/{incident_id}/follow-ups"
    seeded = {f["id"] for f in web.get(url).json()["items"]}  # the demo's own deaths
    died = web.post(
        "/api/reports",
        json={
            "incident_id": incident_id,
            "summary": "Died at the district hospital.",
            "original_text": "Identified by the family at the district hospital.",
            "person": {"name": people[0]["name"], "person_id": person_id},
            "status": "deceased",
        },
    )
    assert died.status_code == 201, died.text
    [follow_up] = [f for f in web.get(url).json()["items"] if f["id"] not in seeded]
    assert follow_up["person_id"] == person_id
    assert follow_up["kind"] == "inform_in_person" and follow_up["done_at"] is None
    assert [e["enquirer_name"] for e in follow_up["enquirers"]] == ["Maya Follow"]
    assert follow_up["enquirers"][0]["phone"] == "+977 98 1"

    done = web.post(f"{url}/{follow_up['id']}/done", json={})
    assert done.status_code == 200, done.text
    assert done.json()["done_by"].startswith("admin-")
    assert web.post(f"{url}/{follow_up['id']}/done", json={}).json()["code"] == "follow_up_done"
    assert {f["id"] for f in web.get(url).json()["items"]} == seeded
    done_ones = web.get(url, params={"include_done": True}).json()["items"]
    assert [f["id"] for f in done_ones if f["done_at"]] == [follow_up["id"]]
    inquiry = web.get(f"/api/inquiries/{made.json()['id']}").json()
    assert inquiry["closed_at"] is not None
    with app_database(web.app).sessions() as s:
        actions = list(s.scalars(select(AuditEvent.action)))
    assert "follow_up.done" in actions and actions.count("inquiry.read_contacts") >= 2


def test_trace_inquiries_purge_and_retention(
    lite_path: Path, lite: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{lite_path}")
    monkeypatch.delenv("TRACE_DEMO", raising=False)
    incident_id = _incident(lite)
    person = _publish(lite, incident_id, "missing", 0, None)
    _inquiry(lite, incident_id, person, datetime(2020, 1, 1, tzinfo=UTC))
    runner = CliRunner()
    dry = runner.invoke(cli, ["inquiries", "purge", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "would erase 1" in dry.output
    done = runner.invoke(cli, ["inquiries", "purge"])
    assert done.exit_code == 0 and "erased the contacts of 1" in done.output
    assert "erased the contacts of 0" in runner.invoke(cli, ["inquiries", "purge"]).output
    set_days = runner.invoke(cli, ["inquiries", "retention", incident_id, "30"])
    assert set_days.exit_code == 0, set_days.output
    with lite.sessions() as s:
        incident = s.get(Incident, incident_id)
        assert incident is not None and incident.contact_retention_days == 30
    refused = runner.invoke(cli, ["inquiries", "retention", incident_id, "5000"])
    assert refused.exit_code == 2 and "error:" in refused.output


def test_the_retention_is_set_per_incident_over_the_api(web: Any, incident_id: str) -> None:
    url = f"/api/incidents/{incident_id}/contact-retention"
    answer = web.put(url, json={"days": 30})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"incident_id": incident_id, "days": 30}
    for days in (-1, 3651, "30", 1.5):
        assert web.put(url, json={"days": days}).status_code == 422, days
    with app_database(web.app).sessions() as s:
        incident = s.get(Incident, incident_id)
        assert incident is not None and incident.contact_retention_days == 30
        changes = s.scalars(
            select(AuditEvent).where(AuditEvent.action == "incident.contact_retention")
        ).all()
    assert [(c.before, c.after) for c in changes] == [({"days": 90}, {"days": 30})]
