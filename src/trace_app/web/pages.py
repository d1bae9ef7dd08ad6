"""HTML pages: Incidents, People, Reports, report view, Reset (the publish form is
:mod:`trace_app.web.publish_routes`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app import demo_reset
from trace_app.accounts.permissions import Permission
from trace_app.accounts.principal import Principal
from trace_app.domain import people_cursor, queries, search
from trace_app.domain.search import AlertFilter
from trace_app.store.models import AlertState, Report
from trace_app.web.auth import authorize
from trace_app.web.deps import DEMO_ONLY_MESSAGE, UNIT_OF_WORK, is_demo, open_session, render
from trace_app.web.failures import failing_as
from trace_app.web.forms import STATUSES
from trace_app.web.gate import Access, gated_router, in_incident, needs, on_record
from trace_app.web.paging import BAD_CURSOR_MESSAGE, BadPageError, page_number_or_refuse

router = gated_router(include_in_schema=False)


def _visible(session: Session, principal: Principal) -> list[queries.IncidentSummary]:
    return [s for s in queries.list_incidents(session) if principal.may_see(s.incident.id)]


@router.get("/")
def home(
    request: Request,
    session: Session = UNIT_OF_WORK,
    access: Access = needs(Permission.READ),
) -> Response:
    summaries = _visible(session, access.principal)
    return render(
        request,
        "home.html",
        {
            "summaries": summaries,
            "nav_incident": summaries[0].incident if summaries else None,
            "was_reset": request.query_params.get("reset") == "1",
        },
    )


@router.get("/incidents/{incident_id}")
def incident(incident_id: str, _: Access = in_incident(Permission.READ)) -> Response:
    return RedirectResponse(f"/incidents/{incident_id}/people", status_code=307)


# Far beyond any incident (50 a page); SQLite's integers end at 2**63.


def _page_number(request: Request) -> int:
    failing_as(request, "No such page")
    return page_number_or_refuse(request.query_params.get("page", "1"))


@router.get("/incidents/{incident_id}/people")
async def people(
    request: Request, incident_id: str, _: Access = in_incident(Permission.READ)
) -> Response:
    # One thread hop for the whole page (session, queries and rendering): the People page
    # is the busiest read.
    number = _page_number(request)
    filters = _search_filters(request)
    after = _after(request, filters)
    return await run_in_threadpool(_people_page, request, incident_id, number, filters, after)


def _after(request: Request, filters: dict[str, str]) -> str:
    """The People page's ``after`` cursor (blank: none), only without a search or filter
    (BadPage otherwise)."""
    after = request.query_params.get("after", "").strip()
    if after and any(filters.values()):
        raise BadPageError(
            "A search is paged by page number: leave out after, or clear the search."
        )
    if after and not people_cursor.readable(after):
        raise BadPageError(BAD_CURSOR_MESSAGE)  # the page's own words for a cut-short link
    return after


def _search_filters(request: Request) -> dict[str, str]:
    """The People page's search box and filters, checked (BadPage for a bad value)."""
    params = request.query_params
    filters = {
        name: " ".join(params.get(name, "").split())
        for name in ("q", "status", "alert", "organization")
    }
    if any(len(value) > 200 for value in filters.values()):
        raise BadPageError("A search or filter can be at most 200 characters long.")
    if filters["status"] not in ("", *STATUSES):
        raise BadPageError(f"Status must be one of: {', '.join(STATUSES)}.")
    if filters["alert"] not in ("", *(a.value for a in AlertFilter)):
        raise BadPageError("Alert must be open or closed.")
    return filters


def _people_page(
    request: Request, incident_id: str, number: int, filters: dict[str, str], after: str
) -> Response:
    """The People page. Without a search its Next link carries the cursor of the next
    page (``?after=``, ADR 0086), so walking on stays as cheap on page 5,000 as on page 2;
    ``?page=`` still opens any page by number (Previous links use it). A cursor Trace did
    not write is answered as a bad page number is (422)."""
    with open_session(request) as session:
        incident = queries.get_incident(session, incident_id)
        limit = queries.PEOPLE_PER_PAGE
        offset = (number - 1) * limit
        if any(filters.values()):
            matches = search.search_people(
                session,
                incident_id,
                q=filters["q"],
                status=filters["status"] or None,
                alert=AlertFilter(filters["alert"]) if filters["alert"] else None,
                organization=filters["organization"] or None,
            )
            page = search.page_of_matches(session, incident_id, matches, offset=offset, limit=limit)
            # the alerts follow the search: only those about the people it finds
            alerts = queries.open_alerts_of(session, incident_id, {m.person_id for m in matches})
        elif after:
            page = queries.people_page_after(session, incident_id, after=after, limit=limit)
            alerts = queries.open_alerts(session, incident_id)
        else:
            page = queries.people_page(session, incident_id, offset=offset, limit=limit)
            alerts = queries.open_alerts(session, incident_id)
        closed = queries.alerts_page(session, incident_id, state=AlertState.CLOSED)
        organizations = [o.name for o in queries.list_organizations(session)]
    return render(
        request,
        "people.html",
        {
            "incident": incident,
            "nav_incident": incident,
            "page": page,
            "alerts": alerts,
            "closed_alerts": closed,
            "closed_note": request.query_params.get("closed") == "1",
            "time_zone_set": request.query_params.get("time_zone_set") == "1",
            "filters": filters,
            "filter_query": urlencode({k: v for k, v in filters.items() if v}),
            "statuses": STATUSES,
            "organizations": organizations,
        },
    )


@router.get("/incidents/{incident_id}/reports")
def reports(
    request: Request,
    incident_id: str,
    session: Session = UNIT_OF_WORK,
    _: Access = in_incident(Permission.READ),
) -> Response:
    incident = queries.get_incident(session, incident_id)
    number = _page_number(request)
    limit = queries.PEOPLE_PER_PAGE
    page = queries.reports_page(session, incident_id, offset=(number - 1) * limit, limit=limit)
    return render(
        request, "reports.html", {"incident": incident, "nav_incident": incident, "page": page}
    )


@router.get("/reports/{report_id}")
def report_view(
    request: Request,
    report_id: str,
    session: Session = UNIT_OF_WORK,
    _: Access = on_record(Permission.READ, Report, "report_id"),
) -> Response:
    report = queries.get_report(session, report_id)
    context = report_page_context(request, session, report)
    context["just_published"] = request.query_params.get("published") == "1"
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


@router.get("/demo/reset")
def confirm_reset(
    request: Request,
    session: Session = UNIT_OF_WORK,
    access: Access = needs(Permission.DEMO_RESET),
) -> Response:
    """Reset demo asks first: what it deletes, with the counts, and one button to go on."""
    if not is_demo(request):
        return render(
            request, "error.html", {"title": "Not a demo server", "message": DEMO_ONLY_MESSAGE}, 403
        )
    authorize(access.principal, Permission.DEMO_RESET, None)
    summaries = queries.list_incidents(session)
    return render(
        request,
        "confirm_reset.html",
        {
            "summaries": summaries,
            "reports": sum(s.reports for s in summaries),
            "people": sum(s.people for s in summaries),
        },
    )


@router.post("/demo/reset")
def reset(
    request: Request,
    session: Session = UNIT_OF_WORK,
    access: Access = needs(Permission.DEMO_RESET),
) -> Response:
    if not is_demo(request):
        return render(
            request, "error.html", {"title": "Not a demo server", "message": DEMO_ONLY_MESSAGE}, 403
        )
    authorize(access.principal, Permission.DEMO_RESET, None)  # it deletes every incident
    demo_reset.reset(session, request.app.state.settings, actor=access.actor)
    session.commit()
    return RedirectResponse("/?reset=1", status_code=303)
