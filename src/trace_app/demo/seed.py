"""Seeding the demo.

:func:`reset_demo` deletes every incident, organisation, report, person (with its
alternate names and link decisions), claim, alert, investigation run and review
decision, and seeds the demo again through :func:`publish_report` (the same path as the
form). It never touches files (the model ledger included) and the caller commits. The
app's Reset demo, which also re-creates the investigation's REPLAYED runs in the same
transaction, is :func:`trace_app.demo_reset.reset`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from trace_app.demo.data import (
    HOSPITAL_EXAMPLE,
    INCIDENT_CREATED_AT,
    INCIDENT_DESCRIPTION,
    INCIDENT_NAME,
    ORGANIZATIONS,
    REPORTS,
    DemoReport,
)
from trace_app.domain.publish import (
    PersonInput,
    PublishReportInput,
    find_or_create_organization,
    publish_report,
)
from trace_app.store.account_models import Membership
from trace_app.store.models import (
    Alert,
    Claim,
    ClaimStatus,
    Incident,
    InvestigationRun,
    Organization,
    Person,
    PersonAlternateName,
    PersonLink,
    Report,
    ReviewDecision,
)
from trace_app.store.types import new_id

# Children first, so foreign keys hold on every backend.
_TABLES_IN_DELETE_ORDER: tuple[type[Any], ...] = (
    ReviewDecision,
    InvestigationRun,
    Alert,
    Claim,
    Report,
    PersonLink,
    PersonAlternateName,
    Person,
    Organization,
    Incident,
)


def demo_input(incident_id: str, item: DemoReport) -> PublishReportInput:
    return PublishReportInput(
        incident_id=incident_id,
        source=item.source,
        summary=item.summary,
        original_text=item.text,
        reported_at=item.reported_at,
        references=list(item.references),
        person=PersonInput(name=item.person, age=item.age),
        status=ClaimStatus(item.status),
        location=item.location,
    )


def hospital_example_input(incident_id: str) -> PublishReportInput:
    """The Central Hospital Demo report about Maya Gurung that the form's example fills."""
    return demo_input(incident_id, HOSPITAL_EXAMPLE)


def seed_demo(session: Session) -> Incident:
    """Add the demo incident, its organisations and reports. Expects an empty database."""
    incident = Incident(
        id=new_id("inc"),
        name=INCIDENT_NAME,
        description=INCIDENT_DESCRIPTION,
        created_at=INCIDENT_CREATED_AT,
    )
    session.add(incident)
    for name, kind in ORGANIZATIONS:
        find_or_create_organization(session, name, kind)
    session.flush()
    for item in REPORTS:
        publish_report(session, demo_input(incident.id, item))
    return incident


def clear_all(session: Session) -> None:
    """Delete every Trace record (not the ledger, not any file), but not the accounts, their
    memberships' organisations or the audit trail: people keep signing in after a reset."""
    members = select(Membership.organization_id).where(Membership.organization_id.is_not(None))
    for table in _TABLES_IN_DELETE_ORDER:
        query = delete(table)
        if table is Organization:
            query = query.where(Organization.id.not_in(members))
        session.execute(query)
    session.expunge_all()


def reset_demo(session: Session) -> Incident:
    """Delete everything and seed the demo (no REPLAYED runs). The caller commits."""
    clear_all(session)
    incident = seed_demo(session)
    session.flush()
    return incident


def is_empty(session: Session) -> bool:
    """True when the database holds no incident (a demo server seeds it then)."""
    return session.scalars(select(Incident.id).limit(1)).first() is None
