"""Read-side functions for reports: a page of an incident's reports, one report with its
source, person and claims.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session, joinedload, selectinload

from trace_app.domain.errors import NotFoundError
from trace_app.domain.queries import PEOPLE_PER_PAGE, Page, clamp_limit
from trace_app.store.models import (
    Report,
)


def reports_page(
    session: Session, incident_id: str, *, offset: int = 0, limit: int = PEOPLE_PER_PAGE
) -> Page[Report]:
    """One page of the incident's reports in publication order, with source and person."""
    limit = clamp_limit(limit)
    offset = max(0, offset)
    total = session.scalar(select(func.count(Report.id)).where(Report.incident_id == incident_id))
    reports = session.scalars(
        select(Report)
        .where(Report.incident_id == incident_id)
        .order_by(Report.position, Report.id)
        .offset(offset)
        .limit(limit)
        .options(
            joinedload(Report.organization),
            joinedload(Report.person),
            selectinload(Report.claims),
        )
    ).all()
    return Page(items=list(reports), total=total or 0, offset=offset, limit=limit)


def incident_reports(session: Session, incident_id: str) -> list[Report]:
    """All of the incident's single-source reports (each from one organisation), in
    publication order, with source and person loaded: one statement."""
    return list(
        session.scalars(
            select(Report)
            .where(Report.incident_id == incident_id)
            .order_by(Report.position, Report.id)
            .options(joinedload(Report.organization), joinedload(Report.person))
        ).all()
    )


def get_report(session: Session, report_id: str) -> Report:
    """A report with its source, person, incident and claims loaded."""
    report = find_report(session, report_id)
    if report is None:
        raise NotFoundError(f"No report with id {report_id!r}.")
    return report


def find_report(session: Session, report_id: str) -> Report | None:
    """:func:`get_report`, or None for an unknown id."""
    return session.scalars(
        select(Report)
        .where(Report.id == report_id)
        .options(
            joinedload(Report.organization),
            joinedload(Report.person),
            joinedload(Report.incident),
            selectinload(Report.claims),
        )
    ).first()
