"""The audit trail (admin: ``audit:read``): ``GET /api/audit`` and the Audit page, newest
first, filtered by actor, action and object.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import Query, Request
from starlette.responses import Response

from trace_app.accounts.permissions import Permission
from trace_app.domain.audit_queries import AuditFilter, audit_page
from trace_app.web.accounts.audit_view import audit_rows
from trace_app.web.accounts.schemas import AuditEventOut, AuditPage
from trace_app.web.deps import open_session, render
from trace_app.web.errors import COMMON_RESPONSES, ErrorOut
from trace_app.web.gate import Access, gated_router, needs

router = gated_router(include_in_schema=False)
api_router = gated_router(prefix="/api", tags=["accounts"], responses=COMMON_RESPONSES)

FilterText = Annotated[str, Query(max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$")]


@api_router.get(
    "/audit",
    response_model=AuditPage,
    responses={401: {"model": ErrorOut}, 403: {"model": ErrorOut}},
)
def audit_api(
    request: Request,
    actor: FilterText = "",
    action: FilterText = "",
    object_id: Annotated[
        str, Query(alias="object", max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$")
    ] = "",
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    _: Access = needs(Permission.AUDIT_READ),
) -> AuditPage:
    """The audit trail, newest first (admin): filter by actor name, action or object id."""
    wanted = AuditFilter(actor=actor.strip(), action=action.strip(), object_id=object_id.strip())
    with open_session(request) as session:
        page = audit_page(session, wanted, offset=offset, limit=limit)
        items = [AuditEventOut.model_validate(row, from_attributes=True) for row in page.items]
    return AuditPage(items=items, total=page.total, offset=page.offset, limit=page.limit)


@router.get("/audit")
def audit_view(request: Request, _: Access = needs(Permission.AUDIT_READ)) -> Response:
    params = request.query_params
    wanted = AuditFilter(
        actor=params.get("actor", "").strip()[:200],
        action=params.get("action", "").strip()[:200],
        object_id=params.get("object", "").strip()[:200],
    )
    try:
        number = max(1, min(int(params.get("page", "1") or "1"), 1_000_000))
    except ValueError:
        number = 1
    limit = 50
    with open_session(request) as session:
        page = audit_page(session, wanted, offset=(number - 1) * limit, limit=limit)
        rows = audit_rows(session, list(page.items))
    query = {k: v for k, v in (("actor", wanted.actor), ("action", wanted.action)) if v}
    if wanted.object_id:
        query["object"] = wanted.object_id
    return render(
        request,
        "audit.html",
        {
            "page": page,
            "rows": rows,
            "filters": wanted,
            "number": number,
            "filter_query": urlencode(query),
        },
    )
