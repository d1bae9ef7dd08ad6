"""Reports: ``POST /api/reports`` publishes for the member's organisation, ``GET
/api/reports/{id}``, ``GET /api/incidents/{id}/reports``, the Reports page and the
report view (with what registered providers add, the investigation's panel among them).
The publish form is :mod:`trace_app.web.reports.publish_routes`.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session
from starlette.responses import Response

from trace_app.accounts.permissions import Permission
from trace_app.domain import outcomes, queries, report_queries
from trace_app.domain.publish import PublishReportInput, publish_and_commit
from trace_app.store.models import Report
from trace_app.web.auth import authorize, reporting_organization
from trace_app.web.deps import UNIT_OF_WORK, render
from trace_app.web.errors import (
    COMMON_RESPONSES,
    NOT_FOUND,
    ErrorOut,
    ValidationErrorOut,
)
from trace_app.web.gate import Access, gated_router, in_incident, needs, on_record
from trace_app.web.paging import requested_page
from trace_app.web.params import IncidentId, Limit, Offset, ReportId
from trace_app.web.reports.schemas import ReportIn, ReportOut, ReportPage

api_router = gated_router(prefix="/api", tags=["api"], responses=COMMON_RESPONSES)
page_router = gated_router(include_in_schema=False)


@api_router.post(
    "/reports",
    status_code=201,
    response_model=ReportOut,
    responses={
        403: {"model": ErrorOut, "description": "Cross-site request, or not allowed"},
        404: {"model": ErrorOut, "description": "No such incident"},
        422: {
            "model": ValidationErrorOut,
            "description": "Empty summary or text (code empty_report), or another bad field",
        },
        429: {"model": ErrorOut, "description": "Too many reports from this account"},
    },
)
def create_report(
    request: Request,
    data: ReportIn,
    session: Session = UNIT_OF_WORK,
    access: Access = needs(Permission.REPORTS_WRITE),
) -> ReportOut | JSONResponse:
    """Publish a report (the same function as the publish form) for the signed-in
    member's organisation in this incident: the source is the account's, never a field."""
    principal = access.principal
    authorize(principal, Permission.REPORTS_WRITE, data.incident_id)  # named by the body
    source = reporting_organization(principal, data.incident_id, data.source)
    refusal = request.app.state.publish_limiter.refusal(principal.token_id or principal.user_id)
    if refusal is not None:
        return JSONResponse(
            {"detail": refusal.message, "code": "too_many_reports"},
            status_code=429,
            headers={"Retry-After": str(refusal.retry_after_s)},
        )
    report = publish_and_commit(
        session, PublishReportInput.from_content(data, source), actor=principal.actor
    )
    return ReportOut.of(report_queries.get_report(session, report.id))


@api_router.get("/incidents/{incident_id}/reports", response_model=ReportPage, responses=NOT_FOUND)
def list_reports(
    incident_id: IncidentId,
    offset: Offset = 0,
    limit: Limit = 100,
    session: Session = UNIT_OF_WORK,
    _: Access = in_incident(Permission.READ),
) -> ReportPage:
    page = report_queries.reports_page(session, incident_id, offset=offset, limit=limit)
    return ReportPage(
        items=[ReportOut.of(r) for r in page.items],
        total=page.total,
        offset=page.offset,
        limit=page.limit,
    )


@api_router.get("/reports/{report_id}", response_model=ReportOut, responses=NOT_FOUND)
def get_report(
    report_id: ReportId,
    session: Session = UNIT_OF_WORK,
    _: Access = on_record(Permission.READ, Report, "report_id"),
) -> ReportOut:
    return ReportOut.of(report_queries.get_report(session, report_id))


@page_router.get("/incidents/{incident_id}/reports")
def reports(
    request: Request,
    incident_id: str,
    session: Session = UNIT_OF_WORK,
    _: Access = in_incident(Permission.READ),
) -> Response:
    incident = queries.get_incident(session, incident_id)
    number = requested_page(request)
    limit = queries.PEOPLE_PER_PAGE
    page = report_queries.reports_page(
        session, incident_id, offset=(number - 1) * limit, limit=limit
    )
    return render(
        request, "reports.html", {"incident": incident, "nav_incident": incident, "page": page}
    )


@page_router.get("/reports/{report_id}")
def report_view(
    request: Request,
    report_id: str,
    session: Session = UNIT_OF_WORK,
    _: Access = on_record(Permission.READ, Report, "report_id"),
) -> Response:
    report = report_queries.get_report(session, report_id)
    context = report_page_context(request, session, report)
    context["just_published"] = request.query_params.get("published") == "1"
    if context["just_published"]:  # say what publishing changed: person, alerts
        context["published"] = outcomes.publish_outcome(session, report)
    return render(request, "report.html", context)


def report_page_context(request: Request, session: Session, report: Report) -> dict[str, Any]:
    """The report view's template context, with every registered provider's names (the
    investigation's saved result among them). Reads only."""
    context: dict[str, Any] = {
        "report": report,
        "incident": report.incident,
        "nav_incident": report.incident,
        "just_published": False,
    }
    for provider in request.app.state.report_context_providers:
        context.update(provider(session, report))
    for request_provider in request.app.state.report_request_providers:
        context.update(request_provider(request, report))
    return context
