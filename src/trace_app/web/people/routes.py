"""People: ``GET /api/incidents/{id}/people`` (the list, a search, its filters), the People
page, ``GET /api/people/{id}`` and the person page (what the API returns: names, the
status, claims with their reports and saved results, alerts, possible duplicates and
decisions), and same-person decisions (``POST /api/people/{id}/links`` and the page's
form, Post/Redirect/Get).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app.accounts.permissions import Permission
from trace_app.domain import alert_queries, outcomes, people_cursor, people_queries, queries, search
from trace_app.domain.duplicate_queue import person_facts
from trace_app.domain.errors import (
    InvalidInputError,
)
from trace_app.domain.links import decide_link_and_commit, link_history
from trace_app.domain.organizations import working_in
from trace_app.domain.person_view import PersonDetail, person_detail
from trace_app.domain.queries import get_incident
from trace_app.domain.search import AlertFilter
from trace_app.i18n import gettext
from trace_app.store.models import AlertState, ClaimStatus, LinkDecision, Person
from trace_app.web.deps import UNIT_OF_WORK, open_session, render
from trace_app.web.errors import (
    COMMON_RESPONSES,
    NOT_FOUND,
    ErrorOut,
    ValidationErrorOut,
)
from trace_app.web.failures import failing_as
from trace_app.web.gate import Access, gated_router, in_incident, on_record
from trace_app.web.investigation.views import saved_results
from trace_app.web.paging import (
    BAD_CURSOR_MESSAGE,
    BadPageError,
    requested_page,
)
from trace_app.web.params import After, IncidentId, Limit, Offset, PersonId, SearchText
from trace_app.web.people.schemas import LinkIn, LinkOut, PeoplePage, PersonDetailOut, PersonOut
from trace_app.web.reports.forms import STATUSES

api_router = gated_router(prefix="/api", tags=["api"], responses=COMMON_RESPONSES)
page_router = gated_router(include_in_schema=False)

PEOPLE_RESPONSES: dict[int | str, dict[str, Any]] = {
    **NOT_FOUND,
    422: {
        "model": ValidationErrorOut,
        "description": "A bad parameter; an after cursor Trace did not write (code "
        "bad_cursor), or after with q, a filter or an offset (code invalid_input)",
    },
}


AFTER_WITH_SEARCH = (
    "after pages the list without a search: leave out q and the filters, or page the "
    "search with offset."
)


AFTER_WITH_OFFSET = "Give after or offset, not both: after already says where the page starts."


@api_router.get(
    "/incidents/{incident_id}/people", response_model=PeoplePage, responses=PEOPLE_RESPONSES
)
def list_people(
    incident_id: IncidentId,
    q: SearchText = "",
    status: ClaimStatus | None = None,
    alert: AlertFilter | None = None,
    organization: SearchText = "",
    offset: Offset = 0,
    limit: Limit = 100,
    after: After = "",
    session: Session = UNIT_OF_WORK,
    _: Access = in_incident(Permission.READ),
) -> PeoplePage:
    """The incident's people. Without ``q`` or a filter: by name (then id), with
    ``next_after``, the cursor of the next page: pass it as ``after`` to walk a long list
    at the same cost per page however deep (``offset`` works too, but reads every earlier
    row). With them: the people whose name matches ``q`` (ignoring case, accents and
    script, tolerating typos), best first, then in natural order; ``status`` is the
    person's status (the latest claim over its linked group, each item's
    ``group_status``), ``alert=open`` people with an open alert, ``alert=closed``
    people whose alerts are all closed, ``organization`` people that organisation
    reported on; paged by ``offset`` only."""
    searching = bool(q.strip() or status or alert or organization.strip())
    if after and searching:
        raise InvalidInputError(AFTER_WITH_SEARCH)
    if after and offset:
        raise InvalidInputError(AFTER_WITH_OFFSET)
    if searching:
        page = search.search_page(
            session,
            incident_id,
            q=q,
            status=status.value if status else None,
            alert=alert,
            organization=organization.strip() or None,
            offset=offset,
            limit=limit,
        )
    elif after:
        page = people_queries.people_page_after(session, incident_id, after=after, limit=limit)
    else:
        page = people_queries.people_page(session, incident_id, offset=offset, limit=limit)
    return PeoplePage(
        items=[PersonOut.of(p) for p in page.items],
        total=page.total,
        offset=page.offset,
        limit=page.limit,
        next_after=page.next_after,
    )


@page_router.get("/incidents/{incident_id}/people")
async def people(
    request: Request, incident_id: str, _: Access = in_incident(Permission.READ)
) -> Response:
    # One thread hop for the whole page (session, queries and rendering): the People page
    # is the busiest read.
    number = requested_page(request)
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
        found: search.SearchResults | None = None  # a search: how many match in all
        if any(filters.values()):
            found = search.search_results(
                session,
                incident_id,
                q=filters["q"],
                status=filters["status"] or None,
                alert=AlertFilter(filters["alert"]) if filters["alert"] else None,
                organization=filters["organization"] or None,
            )
            matches = found.matches
            page = search.page_of_matches(session, incident_id, matches, offset=offset, limit=limit)
            # the alerts follow the search: only those about the people it finds
            alerts = alert_queries.open_alerts_of(
                session, incident_id, {m.person_id for m in matches}
            )
        elif after:
            page = people_queries.people_page_after(session, incident_id, after=after, limit=limit)
            alerts = alert_queries.open_alerts(session, incident_id)
        else:
            page = people_queries.people_page(session, incident_id, offset=offset, limit=limit)
            alerts = alert_queries.open_alerts(session, incident_id)
        closed = alert_queries.alerts_page(session, incident_id, state=AlertState.CLOSED)
        organizations = working_in(session, incident_id)  # this incident's, by the one rule
    return render(
        request,
        "people.html",
        {
            "incident": incident,
            "nav_incident": incident,
            "page": page,
            # "2,000 or more people match; showing the best 500" when the search is bounded
            "search_total": found.total if found else 0,
            "search_at_least": bool(found and found.at_least),
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


def _detail_with_results(session: Session, person_id: str) -> tuple[PersonDetail, dict[str, Any]]:
    detail = person_detail(session, person_id)
    report_ids = [c.report_id for c in detail.claims]
    report_ids += [c.report_id for p in detail.same_people for c in p.claims]
    return detail, saved_results(session, report_ids)


@api_router.get(
    "/people/{person_id}",
    response_model=PersonDetailOut,
    responses={404: {"model": ErrorOut, "description": "No such person"}},
)
def get_person(
    person_id: PersonId,
    session: Session = UNIT_OF_WORK,
    _: Access = on_record(Permission.READ, Person, "person_id"),
) -> PersonDetailOut:
    """One person: names, age, current status, claims with their reports and saved
    investigation results, alerts, possible duplicates (with reasons) and decisions."""
    detail, results = _detail_with_results(session, person_id)
    return PersonDetailOut.of(detail, results)


@api_router.post(
    "/people/{person_id}/links",
    status_code=201,
    response_model=LinkOut,
    responses={
        403: {"model": ErrorOut, "description": "Cross-site request"},
        404: {"model": ErrorOut, "description": "No such person (either of the two)"},
        422: {
            "model": ValidationErrorOut,
            "description": "A bad field; or the same person twice, two incidents, "
            "a blank note, or nothing to withdraw (code invalid_input)",
        },
    },
)
def create_link(
    person_id: PersonId,
    data: LinkIn,
    session: Session = UNIT_OF_WORK,
    access: Access = on_record(Permission.LINKS_WRITE, Person, "person_id"),
) -> LinkOut:
    """A reviewer's decision about two people; a later one supersedes it, both kept."""
    link = decide_link_and_commit(
        session, person_id, data.other_person_id, data.decision, data.note, actor=access.actor
    )
    view = next(v for v in link_history(session, person_id) if v.id == link.id)
    return LinkOut.of(view)


@page_router.get("/people/{person_id}")
def person_page(
    request: Request,
    person_id: str,
    session: Session = UNIT_OF_WORK,
    _: Access = on_record(Permission.READ, Person, "person_id"),
) -> Response:
    detail, results = _detail_with_results(session, person_id)
    incident = get_incident(session, detail.incident_id)
    return render(
        request,
        "person.html",
        {
            "person": detail,
            "results": results,
            "incident": incident,
            "nav_incident": incident,
            "decided": request.query_params.get("decided", ""),
            # the alerts the decision just closed, said in words with the person's link
            "closed_by_decision": outcomes.closed_by_latest_decision(session, person_id)
            if request.query_params.get("decided") == "same"
            else [],
            "alert_done": {"closed": "closed", "reopened": "reopened"}.get(
                request.query_params.get("alert", ""), ""
            ),
            "claim_ids": {c.id for c in detail.claims}
            | {c.id for p in detail.same_people for c in p.claims},
            "decisions": [d.value for d in LinkDecision],
            # what to compare beside each possible duplicate (age, status, place, ...)
            "duplicate_facts": person_facts(
                session, [d.person_id for d in detail.possible_duplicates]
            ),
        },
    )


@page_router.post("/people/{person_id}/links")
async def link_form(
    request: Request,
    person_id: str,
    access: Access = on_record(Permission.LINKS_WRITE, Person, "person_id"),
) -> Response:
    submitted = await request.form()
    values = {name: submitted.get(name, "") for name in ("other_person_id", "decision", "note")}
    texts = {name: value if isinstance(value, str) else "" for name, value in values.items()}
    return await run_in_threadpool(_link_form, request, access, person_id, texts)


def _link_form(
    request: Request, access: Access, person_id: str, values: dict[str, str]
) -> Response:
    failing_as(request, gettext("Not decided"))
    if values["decision"] not in LinkDecision._value2member_map_:
        raise InvalidInputError("Choose same, different or undecided.")
    decision = LinkDecision(values["decision"])
    with open_session(request) as session:
        decide_link_and_commit(
            session,
            person_id,
            values["other_person_id"],
            decision,
            values["note"],
            actor=access.actor,
        )
    return RedirectResponse(f"/people/{person_id}?decided={decision.value}", status_code=303)
