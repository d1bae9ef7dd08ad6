"""Tracing requests over the API (issue 41): taken with consent for an existing record or
a new person (a missing report from the desk's organisation), an ``inquiry.created``
event in the same transaction, contacts readable only with contacts:read and every such
read audited, erasure leaving a tombstone, and no contact in exports or the audit trail.
A real app on SQLite with the seeded demo, real accounts and sessions."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from accounts_helpers import ADMIN_ORGANIZATION, TEST_OPERATOR, app_database, signed_in
from sqlalchemy import select

from trace_app.notifications import retention
from trace_app.notifications.inquiries import (
    InquiryInput,
    close_inquiry,
    create_inquiry,
    get_inquiry,
    looking_for_count,
)
from trace_app.store.account_models import AuditEvent
from trace_app.store.db import Database
from trace_app.store.models import Claim, Incident, Organization, Report
from trace_app.store.notification_models import Inquiry, OutboxEvent
from trace_app.store.types import new_id

EMAIL = "planted.enquirer-41@example.org"
PHONE = "+977 98 5555 0101"
ENQUIRER = "Plantedname Zyxwv"
NOTE = "Call after 6 pm; Plantednote Qwxyz"


def _body(**extra: Any) -> dict[str, Any]:
    return {
        "enquirer": {
            "name": ENQUIRER,
            "relationship": "brother",
            "email": EMAIL,
            "phone": PHONE,
            "language": "ne",
        },
        "note": NOTE,
        "consent": True,
        **extra,
    }


def _person(web: Any, incident_id: str) -> str:
    people = web.get(f"/api/incidents/{incident_id}/people").json()["items"]
    return str(people[0]["id"])


def _audit_actions(web: Any) -> list[str]:
    with app_database(web.app).sessions() as s:
        return list(s.scalars(select(AuditEvent.action).order_by(AuditEvent.sequence)))


def test_consent_is_required_and_nothing_is_kept_without_it(web: Any, incident_id: str) -> None:
    person_id = _person(web, incident_id)
    url = f"/api/incidents/{incident_id}/inquiries"
    for consent in ({}, {"consent": False}):
        body = _body(person_id=person_id)
        body.pop("consent")
        refused = web.post(url, json={**body, **consent})
        assert refused.status_code == 422, refused.text
        assert refused.json()["code"] == "consent_required"
    assert web.post(url, json=_body(person_id=person_id, consent="yes")).status_code == 422
    with app_database(web.app).sessions() as s:
        assert s.scalars(select(Inquiry)).all() == []


def test_an_inquiry_for_a_record_writes_its_event_and_its_contacts_are_audited(
    web: Any, incident_id: str
) -> None:
    person_id = _person(web, incident_id)
    made = web.post(f"/api/incidents/{incident_id}/inquiries", json=_body(person_id=person_id))
    assert made.status_code == 201, made.text
    inquiry_id = made.json()["id"]
    assert made.json()["person_id"] == person_id
    with app_database(web.app).sessions() as s:
        [event] = s.scalars(select(OutboxEvent).where(OutboxEvent.kind == "inquiry.created"))
        payload = json.loads(event.payload)
        assert payload["inquiry_id"] == inquiry_id and payload["incident_id"] == incident_id
        assert EMAIL not in event.payload and PHONE not in event.payload
        row = s.get(Inquiry, inquiry_id)
        assert row is not None and row.language == "ne" and row.consent_at is not None
    assert web.get(f"/api/people/{person_id}/looking-for").json()["count"] == 1

    before = _audit_actions(web)
    shown = web.get(f"/api/inquiries/{inquiry_id}")
    assert shown.status_code == 200
    assert shown.json()["email"] == EMAIL and shown.json()["phone"] == PHONE
    assert shown.json()["enquirer_name"] == ENQUIRER and shown.json()["note"] == NOTE
    listed = web.get(f"/api/people/{person_id}/inquiries").json()["items"]
    assert [i["id"] for i in listed] == [inquiry_id]
    assert _audit_actions(web)[len(before) :] == ["inquiry.read_contacts"] * 2

    erased = web.post(f"/api/inquiries/{inquiry_id}/erase", json={})
    assert erased.status_code == 200, erased.text
    tomb = web.get(f"/api/inquiries/{inquiry_id}").json()
    assert tomb["email"] is None and tomb["phone"] is None and tomb["enquirer_name"] is None
    assert tomb["note"] is None and tomb["relationship"] == "brother"
    assert tomb["contacts_erased_at"] is not None and tomb["erased_by"].startswith("admin-")
    assert web.post(f"/api/inquiries/{inquiry_id}/erase", json={}).status_code == 200
    assert _audit_actions(web).count("inquiry.erase") == 1
    with app_database(web.app).sessions() as s:
        rows = s.scalars(select(AuditEvent)).all()
        trail = json.dumps([[r.before, r.after, r.touched, r.note] for r in rows])
    assert EMAIL not in trail and PHONE not in trail and ENQUIRER not in trail


def test_an_inquiry_for_a_new_person_publishes_a_missing_report_for_the_desk(
    web: Any, incident_id: str
) -> None:
    made = web.post(
        f"/api/incidents/{incident_id}/inquiries",
        json=_body(person={"name": "Bikash Deskrequest", "age": 31}),
    )
    assert made.status_code == 201, made.text
    person_id = made.json()["person_id"]
    with app_database(web.app).sessions() as s:
        [(status, source, text)] = s.execute(
            select(Claim.status, Organization.name, Report.original_text)
            .join(Report, Report.id == Claim.report_id)
            .join(Organization, Organization.id == Report.organization_id)
            .where(Claim.person_id == person_id)
        ).all()
        kinds = sorted(
            s.scalars(select(OutboxEvent.kind).where(OutboxEvent.person_id == person_id))
        )
    assert status == "missing" and source == ADMIN_ORGANIZATION  # the desk's organisation
    assert ENQUIRER not in text and EMAIL not in text
    assert kinds == ["alert.opened", "inquiry.created", "status.changed"]


def test_bad_requests_are_refused_with_what_is_wrong(web: Any, incident_id: str) -> None:
    person_id = _person(web, incident_id)
    url = f"/api/incidents/{incident_id}/inquiries"

    def enquirer(**changes: Any) -> dict[str, Any]:
        body = _body(person_id=person_id)
        body["enquirer"] = {**body["enquirer"], **changes}
        return body

    cases = [
        (enquirer(email="not an address"), "invalid_inquiry"),
        (enquirer(email="a@b.c\r\nBcc: x@y.z"), "invalid_inquiry"),
        (enquirer(email=None, phone=None), "invalid_inquiry"),
        (enquirer(phone="call me"), "invalid_inquiry"),
        (enquirer(language="xx"), "invalid_inquiry"),
        (_body(person_id=person_id, person={"name": "Both Given"}), "invalid_body"),
        (_body(), "invalid_body"),
    ]
    for body, code in cases:
        refused = web.post(url, json=body)
        assert refused.status_code == 422, (body, refused.text)
        assert refused.json()["code"] == code, (body, refused.json())
    other = web.post("/api/incidents", json={"name": "Other Flood Inquiries"}).json()["id"]
    elsewhere = web.post(f"/api/incidents/{other}/inquiries", json=_body(person_id=person_id))
    assert elsewhere.status_code == 404


def test_only_contacts_read_sees_contacts(web: Any, incident_id: str) -> None:
    person_id = _person(web, incident_id)
    made = web.post(f"/api/incidents/{incident_id}/inquiries", json=_body(person_id=person_id))
    inquiry_id = made.json()["id"]
    with signed_in(web.app, role="reporter", organization="Camp Desk Test") as reporter:
        taken = reporter.post(
            f"/api/incidents/{incident_id}/inquiries", json=_body(person_id=person_id)
        )
        assert taken.status_code == 201, taken.text  # a desk takes requests ...
        for path in (f"/api/inquiries/{inquiry_id}", f"/api/people/{person_id}/inquiries"):
            assert reporter.get(path).status_code == 403  # ... and reads no contacts
        assert reporter.post(f"/api/inquiries/{inquiry_id}/erase", json={}).status_code == 403
        assert reporter.get(f"/api/people/{person_id}/looking-for").json()["count"] == 2
    with signed_in(web.app, role="viewer", organization="Camp Desk Test") as viewer:
        url = f"/api/incidents/{incident_id}/inquiries"
        assert viewer.post(url, json=_body(person_id=person_id)).status_code == 403
    with signed_in(web.app, role="coordinator", organization="Camp Desk Test") as coordinator:
        assert coordinator.get(f"/api/inquiries/{inquiry_id}").json()["email"] == EMAIL


def test_exports_never_include_enquirer_contacts(web: Any, incident_id: str) -> None:
    person_id = _person(web, incident_id)
    for body in (_body(person_id=person_id), _body(person={"name": "Exported Deskperson"})):
        assert web.post(f"/api/incidents/{incident_id}/inquiries", json=body).status_code == 201
    exports = [
        web.get(f"/api/incidents/{incident_id}/pfif"),
        web.get(f"/api/incidents/{incident_id}/people.csv"),
    ]
    for export in exports:
        assert export.status_code == 200
        assert "Exported Deskperson" in export.text  # the new person is exported ...
        for planted in (EMAIL, PHONE, ENQUIRER, "Plantednote", "5555"):
            assert planted not in export.text  # ... their enquirer never


def test_a_request_from_taking_to_purge_on_both_databases(database: Database) -> None:
    """The domain functions the routes call, on SQLite and PostgreSQL: a new person's
    request, an audited read, closing, and the purge's tombstone after the retention."""
    with database.session() as s:
        incident = Incident(id=new_id("inc"), name="Inquiry Lifecycle")
        s.add(incident)
        incident_id = incident.id
    data = InquiryInput.model_validate(_body(person={"name": "Lifecycle Person", "age": 7}))
    with database.session() as s:
        made = create_inquiry(s, incident_id, data, actor=TEST_OPERATOR, source="Lifecycle Desk")
        inquiry_id, person_id = made.id, made.person_id
    with database.session() as s:
        assert looking_for_count(s, person_id) == 1
        assert get_inquiry(s, inquiry_id, actor=TEST_OPERATOR).email == EMAIL
        closed = close_inquiry(s, inquiry_id, actor=TEST_OPERATOR).closed_at
    assert closed is not None
    with database.session() as s:
        result = retention.purge(s, actor=TEST_OPERATOR, now=closed + timedelta(days=90))
    assert result.erased_ids == (inquiry_id,)
    with database.session() as s:
        tomb = get_inquiry(s, inquiry_id, actor=TEST_OPERATOR)
        assert tomb.email is None and tomb.phone is None and tomb.contacts_erased_at
        assert looking_for_count(s, person_id) == 0  # closed: no one is looking any more
        actions = list(s.scalars(select(AuditEvent.action).order_by(AuditEvent.sequence)))
    assert actions == [
        "report.publish",
        "inquiry.create",
        "inquiry.read_contacts",
        "inquiry.close",
        "inquiry.purge",
        "inquiry.read_contacts",
    ]
