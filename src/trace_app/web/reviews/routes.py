"""The review queue and a person's decisions: JSON API, the Reviews page and its form.

- ``GET /api/incidents/{incident_id}/reviews`` the NEEDS_REVIEW results awaiting a
  decision, oldest first (``trace_app.investigation.review_queue`` has the rule).
- ``POST /api/reports/{report_id}/review`` ``{"decision", "note"}`` records a person's
  decision (201); ``GET /api/reports/{report_id}/reviews`` lists them, newest first.
- ``/incidents/{incident_id}/reviews`` the Reviews page, one form per item; the form
  posts to ``/reports/{report_id}/review`` and answers 303 (Post/Redirect/Get).

A decision is only ever recorded here, by a person; the saved run is never changed.
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import Request
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app.accounts.permissions import Permission
from trace_app.domain import queries, reviews
from trace_app.domain.errors import InvalidInputError
from trace_app.domain.reviews import (
    REVIEW_MEANINGS,
    ReviewRefusedError,
    ReviewValue,
)
from trace_app.domain.text import MAX_NOTE_CHARACTERS
from trace_app.investigation import evidence_store, review_queue
from trace_app.store.models import Report
from trace_app.web.deps import UNIT_OF_WORK, open_session, render
from trace_app.web.errors import COMMON_RESPONSES, ErrorOut
from trace_app.web.failures import failing_as
from trace_app.web.gate import Access, gated_router, in_incident, on_record
from trace_app.web.paging import MAX_PAGE_NUMBER, page_number_or_refuse
from trace_app.web.params import IncidentId, Limit, Offset, ReportId
from trace_app.web.reviews.cards import current_review
from trace_app.web.reviews.schemas import (
    ReviewHistory,
    ReviewIn,
    ReviewItemOut,
    ReviewOut,
    ReviewQueuePage,
)

router = gated_router(tags=["reviews"])

REVIEWS_PER_PAGE = 20


@router.get(
    "/api/incidents/{incident_id}/reviews",
    response_model=ReviewQueuePage,
    responses={**COMMON_RESPONSES, 404: {"model": ErrorOut, "description": "No such incident"}},
)
def review_queue_api(
    incident_id: IncidentId,
    offset: Offset = 0,
    limit: Limit = 100,
    session: Session = UNIT_OF_WORK,
    _: Access = in_incident(Permission.READ),
) -> ReviewQueuePage:
    """The NEEDS_REVIEW results that await a person's decision, oldest run first: each
    report's latest saved run, decided with the current rules, on which no person has
    decided yet."""
    page = review_queue.review_queue(session, incident_id, offset=offset, limit=limit)
    return ReviewQueuePage(
        items=[ReviewItemOut.of(item) for item in page.items],
        total=page.total,
        offset=page.offset,
        limit=page.limit,
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


def _reviews_page(
    request: Request,
    incident_id: str,
    number: int,
    refused: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    with open_session(request) as session:
        incident = queries.get_incident(session, incident_id)
        limit = REVIEWS_PER_PAGE
        page = review_queue.review_queue(
            session, incident_id, offset=(number - 1) * limit, limit=limit
        )
        decided = request.query_params.get("decided", "")
        decided_report = None
        decided_review = None
        if decided:
            decided_report = queries.find_report(session, decided)
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
                "refused": refused or {},
                "review_values": list(ReviewValue),
                "review_meanings": REVIEW_MEANINGS,
                "max_note": MAX_NOTE_CHARACTERS,
            },
            status_code,
        )


@router.get("/incidents/{incident_id}/reviews", include_in_schema=False)
async def reviews_page(
    request: Request, incident_id: str, _: Access = in_incident(Permission.READ)
) -> Response:
    failing_as(request, "No such page")
    number = page_number_or_refuse(request.query_params.get("page", "1"))
    return await run_in_threadpool(_reviews_page, request, incident_id, number)


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
    failing_as(request, "Decision not recorded")
    with open_session(request) as session:
        try:
            row = review_queue.decide(
                session, report_id, reviews.parse_value(value), note, actor=access.actor
            )
        except InvalidInputError as exc:  # shown beside the queue's card, unless from a report
            if back == "report" or isinstance(exc, ReviewRefusedError):
                raise
            refused = {"report_id": report_id, "message": str(exc), "decision": value, "note": note}
            return _reviews_page(request, access.incident, number, refused, 422)
    if back == "report":
        return RedirectResponse(
            f"/reports/{quote(row.report_id)}?reviewed=1#review-decision", status_code=303
        )
    return RedirectResponse(
        f"/incidents/{quote(row.incident_id)}/reviews?decided={quote(row.report_id)}",
        status_code=303,
    )
