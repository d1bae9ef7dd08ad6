"""The review queue and a person's decisions: JSON API, the Reviews page and its form.

- ``GET /api/incidents/{incident_id}/reviews`` the NEEDS_REVIEW results awaiting a
  decision, by priority (``trace_app.investigation.review_queue`` has the rule), with
  optional filters (``organization_id``, ``reason``, ``assigned_to_me``).
- ``POST /api/reports/{report_id}/assignment`` ``{"mine": true|false}`` "assign to me"
  or release it (the page's form: ``/reports/{report_id}/assignment``, 303).
- ``POST /api/reports/{report_id}/review`` ``{"decision", "note"}`` records a person's
  decision (201); ``GET /api/reports/{report_id}/reviews`` lists them, newest first.
- ``/incidents/{incident_id}/reviews`` the Reviews page, one form per item; the form
  posts to ``/reports/{report_id}/review`` and answers 303 (Post/Redirect/Get).

A decision is only ever recorded here, by a person; the saved run is never changed.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote, urlencode

from fastapi import Query, Request
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app.accounts.permissions import Permission
from trace_app.domain import queries, report_queries, reviews
from trace_app.domain.errors import InvalidInputError
from trace_app.domain.reviews import (
    REVIEW_MEANINGS,
    ReviewRefusedError,
    ReviewValue,
)
from trace_app.domain.text import ID_PATTERN, MAX_ID_CHARACTERS, MAX_NOTE_CHARACTERS
from trace_app.i18n import gettext
from trace_app.investigation import evidence_store, review_queue
from trace_app.investigation.review_queue import REASON_WORDS, QueueFilter, ReviewReason
from trace_app.store.models import Report
from trace_app.web.deps import UNIT_OF_WORK, open_session, render
from trace_app.web.errors import COMMON_RESPONSES, ErrorOut
from trace_app.web.failures import failing_as, refusal_of
from trace_app.web.gate import Access, gated_router, in_incident, on_record
from trace_app.web.paging import MAX_PAGE_NUMBER, page_number_or_refuse
from trace_app.web.params import IncidentId, Limit, Offset, ReportId
from trace_app.web.reviews.cards import current_review
from trace_app.web.reviews.schemas import (
    AssignmentIn,
    AssignmentOut,
    ReviewHistory,
    ReviewIn,
    ReviewItemOut,
    ReviewOut,
    ReviewQueuePage,
)

router = gated_router(tags=["reviews"])

REVIEWS_PER_PAGE = 20

OrganizationFilter = Annotated[
    str | None,
    Query(
        max_length=MAX_ID_CHARACTERS,
        pattern=ID_PATTERN,
        description="Only reports from this organisation (its id).",
    ),
]


@router.get(
    "/api/incidents/{incident_id}/reviews",
    response_model=ReviewQueuePage,
    responses={**COMMON_RESPONSES, 404: {"model": ErrorOut, "description": "No such incident"}},
)
def review_queue_api(
    incident_id: IncidentId,
    offset: Offset = 0,
    limit: Limit = 100,
    organization_id: OrganizationFilter = None,
    reason: Annotated[
        ReviewReason | None, Query(description="Only results that wait for this reason.")
    ] = None,
    assigned_to_me: Annotated[
        bool, Query(description="Only the reviews the caller has taken.")
    ] = False,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.READ),
) -> ReviewQueuePage:
    """The NEEDS_REVIEW results that await a person's decision, by priority (an open
    alert first, then a child or an older person, then the oldest report): each
    report's latest saved run, decided with the current rules, on which no person has
    decided yet."""
    only = QueueFilter(
        organization_id=organization_id,
        reason=reason,
        assigned_to=access.actor.name if assigned_to_me else None,
    )
    page = review_queue.review_queue(session, incident_id, offset=offset, limit=limit, only=only)
    return ReviewQueuePage(
        items=[ReviewItemOut.of(item) for item in page.items],
        total=page.total,
        offset=page.offset,
        limit=page.limit,
        total_at_least=page.total_at_least,
    )


@router.post(
    "/api/reports/{report_id}/review",
    status_code=201,
    response_model=ReviewOut,
    responses={
        **COMMON_RESPONSES,
        403: {"model": ErrorOut, "description": "Cross-site request"},
        404: {"model": ErrorOut, "description": "No such report"},
        409: {
            "model": ErrorOut,
            "description": "No saved NEEDS_REVIEW result to decide (code not_awaiting_review)",
        },
    },
)
def record_review_api(
    report_id: ReportId,
    data: ReviewIn,
    session: Session = UNIT_OF_WORK,
    access: Access = on_record(Permission.REVIEWS_WRITE, Report, "report_id"),
) -> ReviewOut:
    """A reviewer records a decision on the report's NEEDS_REVIEW result. Appended: a later
    decision supersedes this one and both are kept. The saved run never changes."""
    row = review_queue.decide(session, report_id, data.decision, data.note, actor=access.actor)
    return ReviewOut.of(row, row.run_id)


@router.post(
    "/api/reports/{report_id}/assignment",
    response_model=AssignmentOut,
    responses={
        **COMMON_RESPONSES,
        403: {"model": ErrorOut, "description": "Cross-site request"},
        404: {"model": ErrorOut, "description": "No such report"},
    },
)
def assignment_api(
    report_id: ReportId,
    data: AssignmentIn,
    session: Session = UNIT_OF_WORK,
    access: Access = on_record(Permission.REVIEWS_WRITE, Report, "report_id"),
) -> AssignmentOut:
    """ "Assign to me" (``mine: true``, taking it from whoever held it) or release the
    report's review (``false``). Audited as ``review.assign`` when it changes."""
    row = review_queue.assign(session, report_id, data.mine, actor=access.actor)
    return AssignmentOut.of(report_id, row)


@router.get(
    "/api/reports/{report_id}/reviews",
    response_model=ReviewHistory,
    responses={**COMMON_RESPONSES, 404: {"model": ErrorOut, "description": "No such report"}},
)
def review_history_api(
    report_id: ReportId,
    offset: Offset = 0,
    limit: Limit = 100,
    session: Session = UNIT_OF_WORK,
    _: Access = on_record(Permission.READ, Report, "report_id"),
) -> ReviewHistory:
    """Every decision recorded on the report, newest (the current one) first."""
    rows, total = reviews.review_history(session, report_id, offset=offset, limit=limit)
    shown_id = evidence_store.latest_run_id(session, report_id)
    return ReviewHistory(
        items=[ReviewOut.of(row, shown_id) for row in rows],
        total=total,
        offset=offset,
        limit=limit,
    )


def _page_filter(request: Request, me: str) -> tuple[QueueFilter, dict[str, str]]:
    """The page's filters from its address (an unknown value is no filter), and the
    address's query for links that keep them."""
    params = request.query_params
    organization = params.get("organization", "")
    if len(organization) > MAX_ID_CHARACTERS or not organization.isascii():
        organization = ""
    reason = params.get("reason", "")
    known = reason if reason in set(ReviewReason) else ""
    mine = params.get("mine", "") == "1"
    kept = {"organization": organization, "reason": known, "mine": "1" if mine else ""}
    only = QueueFilter(
        organization_id=organization or None,
        reason=ReviewReason(known) if known else None,
        assigned_to=me if mine else None,
    )
    return only, {k: v for k, v in kept.items() if v}


def _reviews_page(
    request: Request,
    access: Access,
    number: int,
    refused: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    incident_id = access.incident
    only, kept = _page_filter(request, access.actor.name)
    with open_session(request) as session:
        incident = queries.get_incident(session, incident_id)
        limit = REVIEWS_PER_PAGE
        page = review_queue.review_queue(
            session, incident_id, offset=(number - 1) * limit, limit=limit, only=only
        )
        decided = request.query_params.get("decided", "")
        decided_report = None
        decided_review = None
        if decided:
            decided_report = report_queries.find_report(session, decided)
            if decided_report is not None:
                decided_review = current_review(session, decided_report.id)
        recent = [
            {"review": ReviewOut.of(row, None), "summary": summary}
            for row, summary in reviews.recent_decisions(session, incident_id)
        ]
        return render(
            request,
            "reviews.html",
            {
                "incident": incident,
                "nav_incident": incident,
                "page": page,
                "entries": [
                    {
                        "item": item,
                        "earlier": ReviewOut.of(item.earlier_review, item.run.id)
                        if item.earlier_review is not None
                        else None,
                    }
                    for item in page.items
                ],
                "decided_report": decided_report,
                "decided_review": decided_review,
                "recent": recent,
                "organizations": review_queue.queue_organizations(session, incident_id),
                "reasons": REASON_WORDS,
                "filters": kept,
                "filter_query": urlencode(kept) + "&" if kept else "",
                "me": access.actor.name,
                "may_review": access.principal.can(Permission.REVIEWS_WRITE, incident_id),
                "refused": refused or {},
                "review_values": list(ReviewValue),
                "review_meanings": REVIEW_MEANINGS,
                "max_note": MAX_NOTE_CHARACTERS,
            },
            status_code,
        )


@router.get("/incidents/{incident_id}/reviews", include_in_schema=False)
async def reviews_page(
    request: Request, incident_id: str, access: Access = in_incident(Permission.READ)
) -> Response:
    failing_as(request, gettext("No such page"))
    number = page_number_or_refuse(request.query_params.get("page", "1"))
    return await run_in_threadpool(_reviews_page, request, access, number)


@router.post("/reports/{report_id}/review", include_in_schema=False)
async def review_form(
    request: Request,
    report_id: str,
    access: Access = on_record(Permission.REVIEWS_WRITE, Report, "report_id"),
) -> Response:
    """The Reviews page's form (and the report page's "Change the decision")."""
    submitted = await request.form()

    def text(name: str) -> str:
        value = submitted.get(name, "")
        return value if isinstance(value, str) else ""

    page = text("page")
    number = int(page) if page.isascii() and page.isdigit() and len(page) <= 7 else 1
    number = number if 1 <= number <= MAX_PAGE_NUMBER else 1
    fields = (text("decision"), text("note"), text("back"))
    return await run_in_threadpool(_review_form, request, access, report_id, *fields, number)


def _review_form(
    request: Request,
    access: Access,
    report_id: str,
    value: str,
    note: str,
    back: str,
    number: int = 1,
) -> Response:
    failing_as(request, gettext("Decision not recorded"))
    with open_session(request) as session:
        row, refusal = refusal_of(
            lambda: review_queue.decide(
                session, report_id, reviews.parse_value(value), note, actor=access.actor
            )
        )
    if row is None:
        assert refusal is not None
        shown_on_card = isinstance(refusal, InvalidInputError) and not isinstance(
            refusal, ReviewRefusedError
        )
        if back == "report" or not shown_on_card:
            raise refusal
        # shown beside the queue's card it came from
        refused = {"report_id": report_id, "message": str(refusal), "decision": value}
        return _reviews_page(request, access, number, refused | {"note": note}, 422)
    if back == "report":
        return RedirectResponse(
            f"/reports/{quote(row.report_id)}?reviewed=1#review-decision", status_code=303
        )
    return RedirectResponse(
        f"/incidents/{quote(row.incident_id)}/reviews?decided={quote(row.report_id)}",
        status_code=303,
    )


@router.post("/reports/{report_id}/assignment", include_in_schema=False)
async def assignment_form(
    request: Request,
    report_id: str,
    access: Access = on_record(Permission.REVIEWS_WRITE, Report, "report_id"),
) -> Response:
    """The Reviews page's "Assign to me" / "Release" button: 303 back to the same view."""
    submitted = await request.form()
    mine = submitted.get("mine", "") == "1"
    back = submitted.get("back", "")
    back_query = back if isinstance(back, str) and _safe_query(back) else ""
    return await run_in_threadpool(_assignment_form, request, access, report_id, mine, back_query)


def _safe_query(query: str) -> bool:
    """A query string the page itself wrote (its filters and page number), nothing else."""
    return len(query) <= 300 and all(c.isalnum() or c in "=&_-" for c in query)


def _assignment_form(
    request: Request, access: Access, report_id: str, mine: bool, back_query: str
) -> Response:
    failing_as(request, gettext("Review not assigned"))
    with open_session(request) as session:
        review_queue.assign(session, report_id, mine, actor=access.actor)
    target = f"/incidents/{quote(access.incident)}/reviews"
    if back_query:
        target += f"?{back_query}"
    return RedirectResponse(f"{target}#review-{quote(report_id)}", status_code=303)
