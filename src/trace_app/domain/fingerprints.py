"""Content of reports and incidents without database ids, and its fingerprint.

The same seeded content gives the same fingerprint after every reset, because ids and
publication times (wall clock) are left out. Canonical JSON is modelgate's
(``modelgate.fingerprint.canonical_json``: sorted keys, compact separators, UTF-8);
SHA-256 with a versioned prefix.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload, selectinload

from modelgate.fingerprint import canonical_json
from trace_app.store.models import Alert, Claim, Incident, Person, Report

FINGERPRINT_VERSION = "trace-content-v1"


def content_fingerprint(value: Any) -> str:
    digest = hashlib.sha256(canonical_json(value)).hexdigest()
    return f"{FINGERPRINT_VERSION}:{digest}"


def report_content(report: Report) -> dict[str, Any]:
    """What a report says, without ids: source, summary, text, time, references, person."""
    return {
        "source": report.organization.name,
        "summary": report.summary,
        "original_text": report.original_text,
        "reported_at": report.reported_at.isoformat(),
        "references": list(report.references),
        "person": {"name": report.person_name, "age": report.person_age},
        "status": report.status,
        "location": report.location,
    }


def incident_content(session: Session, incident: Incident) -> dict[str, Any]:
    """Everything the incident holds (reports, people with claims, alerts), without ids."""
    reports = session.scalars(
        select(Report)
        .where(Report.incident_id == incident.id)
        .order_by(Report.position, Report.reported_at)
        .options(joinedload(Report.organization))
    ).all()
    people = session.scalars(
        select(Person)
        .where(Person.incident_id == incident.id)
        .order_by(Person.name_key)
        .options(selectinload(Person.claims).joinedload(Claim.report))
    ).all()
    alerts = session.scalars(
        select(Alert)
        .where(Alert.incident_id == incident.id)
        .order_by(Alert.position)
        .options(joinedload(Alert.person))
    ).all()
    return {
        "incident": {"name": incident.name, "description": incident.description},
        "reports": [report_content(r) for r in reports],
        "people": [
            {
                "name": p.name,
                "age": p.age,
                "claims": [
                    {
                        "status": c.status,
                        "location": c.location,
                        "reported_at": c.report.reported_at.isoformat(),
                    }
                    for c in p.claims
                ],
            }
            for p in people
        ],
        "alerts": [
            {"person": a.person.name, "state": a.state, "raised_at": a.raised_at.isoformat()}
            for a in alerts
        ],
    }


def incident_fingerprint(session: Session, incident: Incident) -> str:
    return content_fingerprint(incident_content(session, incident))
