"""HTML pages: Incidents, People, Reports, report view, Reset (the publish form is
:mod:`trace_app.web.publish_routes`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app import demo_reset
from trace_app.accounts.permissions import Permission
from trace_app.accounts.principal import Principal
from trace_app.domain import queries, search
from trace_app.domain.errors import BadCursorError, NotFoundError
from trace_app.domain.search import AlertFilter
from trace_app.store.models import AlertState, Report
from trace_app.web.auth import authorize, authorize_record, needs
from trace_app.web.deps import DEMO_ONLY_MESSAGE, get_session, is_demo, open_session, render
from trace_app.web.forms import STATUSES
from trace_app.web.paging import BAD_CURSOR_MESSAGE, BAD_PAGE_MESSAGE, page_number

router = APIRouter(include_in_schema=False)


def _visible(session: Session, principal: Principal) -> list[queries.IncidentSummary]:
    return [s for s in queries.list_incidents(session) if principal.may_see(s.incident.id)]


def _not_found(request: Request, message: str) -> Response:
    return render(request, "error.html", {"title": "Not found", "message": message}, 404)


@router.get("/")
def home(
    request: Request,
    session: Session = Depends(get_session),
    principal: Principal = needs(Permission.READ),
) -> Response:
    summaries = _visible(session, principal)
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
def incident(incident_id: str, _: Principal = needs(Permission.READ)) -> Response:
    return RedirectResponse(f"/incidents/{incident_id}/people", status_code=307)


# Far beyond any incident (50 a page); SQLite's integers end at 2**63.


class BadPage(ValueError):
    """The ``page`` query parameter is not a page number Trace can show."""


def _page_number(request: Request) -> int:
    number = page_number(request.query_params.get("page", "1"))
    if number is None:
        raise BadPage(BAD_PAGE_MESSAGE)
    return number


def _bad_page(request: Request, exc: BadPage) -> Response:
    return render(request, "error.html", {"title": "No such page", "message": str(exc)}, 422)


@router.get("/incidents/{incident_id}/people")
async def people(
    request: Request, incident_id: str, principal: Principal = needs(Permission.READ)
) -> Response:
    # One thread hop for the whole page (session, queries and rendering): the People page
    # is the busiest read.
    authorize(principal, Permission.READ, incident_id)
    try:
        number = _page_number(request)
        filters = _search_filters(request)
        after = _after(request, filters)
    except BadPage as exc:
        return _bad_page(request, exc)
    return await run_in_threadpool(_people_page, request, incident_id, number, filters, after)


def _after(request: Request, filters: dict[str, str]) -> str:
    """The People page's ``after`` cursor (blank: none), only without a search or filter
    (BadPage otherwise)."""
    after = request.query_params.get("after", "").strip()
    if after and any(filters.values()):
        raise BadPage("A search is paged by page number: leave out after, or clear the search.")
    return after


def _search_filters(request: Request) -> dict[str, str]:
    """The People page's search box and filters, checked (BadPage for a bad value)."""
    params = request.query_params
    filters = {
        name: " ".join(params.get(name, "").split())
        for name in ("q", "status", "alert", "organization")
    }
    if any(len(value) > 200 for value in filters.values()):
        raise BadPage("A search or filter can be at most 200 characters long.")
    if filters["status"] not in ("", *STATUSES):
        raise BadPage(f"Status must be one of: {', '.join(STATUSES)}.")
    if filters["alert"] not in ("", *(a.value for a in AlertFilter)):
        raise BadPage("Alert must be open or closed.")
    return filters


def _people_page(
    request: Request, incident_id: str, number: int, filters: dict[str, str], after: str
) -> Response:
    """The People page. Without a search its Next link carries the cursor of the next
    page (``?after=``, ADR 0086), so walking on stays as cheap on page 5,000 as on page 2;
    ``?page=`` still opens any page by number (Previous links use it). A cursor Trace did
    not write is answered as a bad page number is (422)."""
    with open_session(request) as session:
        try:
            incident = queries.get_incident(session, incident_id)
        except NotFoundError as exc:
            return _not_found(request, str(exc))
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
        else:
            try:
                if after:
                    page = queries.people_page_after(session, incident_id, after=after, limit=limit)
                else:
                    page = queries.people_page(session, incident_id, offset=offset, limit=limit)
            except BadCursorError:
                return _bad_page(request, BadPage(BAD_CURSOR_MESSAGE))
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
    session: Session = Depends(get_session),
    principal: Principal = needs(Permission.READ),
) -> Response:
    authorize(principal, Permission.READ, incident_id)
    try:
        incident = queries.get_incident(session, incident_id)
    except NotFoundError as exc:
        return _not_found(request, str(exc))
    try:
        number = _page_number(request)
    except BadPage as exc:
        return _bad_page(request, exc)
    limit = queries.PEOPLE_PER_PAGE
    page = queries.reports_page(session, incident_id, offset=(number - 1) * limit, limit=limit)
    return render(
        request, "reports.html", {"incident": incident, "nav_incident": incident, "page": page}
    )


@router.get("/reports/{report_id}")
def report_view(
    request: Request,
    report_id: str,
    session: Session = Depends(get_session),
    principal: Principal = needs(Permission.READ),
) -> Response:
    try:
        authorize_record(request, principal, Permission.READ, Report, report_id)
        report = queries.get_report(session, report_id)
    except NotFoundError as exc:
        return _not_found(request, str(exc))
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
    session: Session = Depends(get_session),
    principal: Principal = needs(Permission.DEMO_RESET),
) -> Response:
    """Reset demo asks first: what it deletes, with the counts, and one button to go on."""
    if not is_demo(request):
        return render(
            request, "error.html", {"title": "Not a demo server", "message": DEMO_ONLY_MESSAGE}, 403
        )
    authorize(principal, Permission.DEMO_RESET, None)
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
    session: Session = Depends(get_session),
    principal: Principal = needs(Permission.DEMO_RESET),
) -> Response:
    if not is_demo(request):
        return render(
            request, "error.html", {"title": "Not a demo server", "message": DEMO_ONLY_MESSAGE}, 403
        )
    authorize(principal, Permission.DEMO_RESET, None)  # it deletes every incident's records
    demo_reset.reset(session, request.app.state.settings, actor=principal.actor)
    session.commit()
    return RedirectResponse("/?reset=1", status_code=303)
