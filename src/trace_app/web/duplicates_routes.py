"""The incident's Duplicates queue: ``/incidents/{id}/duplicates`` and its API.

- ``GET /incidents/{id}/duplicates?page=N``: every pair the look-alike rules offer,
  oldest first (:mod:`trace_app.domain.duplicate_queue`), each side by side with name,
  age, latest status, place, source and alert, and a "same" / "different" decision
  (``POST /incidents/{id}/duplicates/decisions``, Post/Redirect/Get back to the page;
  the decision is :func:`trace_app.domain.links.decide_link`'s, audited as
  ``link.decide``).
- ``GET /api/incidents/{id}/duplicates?offset=&limit=``: the same pairs as JSON.

An incident of more than ``duplicate_queue.MAX_QUEUE_PEOPLE`` people has no queue: the
page says so (409) and points to the person pages, the API answers 409
``too_many_people``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app.accounts.permissions import Permission
from trace_app.accounts.principal import Principal
from trace_app.domain import queries
from trace_app.domain.duplicate_queue import (
    DUPLICATES_PER_PAGE,
    DuplicatePair,
    PersonFacts,
    duplicates_page,
)
from trace_app.domain.errors import InvalidInputError, NotFoundError, TooManyPeopleError
from trace_app.domain.links import decide_link_and_commit
from trace_app.domain.text import ID_PATTERN, MAX_ID_CHARACTERS
from trace_app.store.models import AlertState, ClaimStatus, LinkDecision, Person
from trace_app.web.auth import authorize, needs
from trace_app.web.deps import get_session, open_session, render
from trace_app.web.errors import COMMON_RESPONSES, ErrorOut, trace_error_response
from trace_app.web.paging import BAD_PAGE_MESSAGE, page_number

api_router = APIRouter(prefix="/api", tags=["api"], responses=COMMON_RESPONSES)
page_router = APIRouter(include_in_schema=False)

IncidentId = Annotated[str, Path(max_length=MAX_ID_CHARACTERS, pattern=ID_PATTERN)]
MAX_OFFSET = 1_000_000_000
QUEUE_DECISIONS = (LinkDecision.SAME, LinkDecision.DIFFERENT)


class PersonFactsOut(BaseModel):
    person_id: str
    name: str
    age: int | None
    status: ClaimStatus | None = Field(description="The current status; null with no claim.")
    reported_at: datetime | None = Field(description="UTC time of the claim that gives it.")
    location: str
    source: str = Field(description="The organisation whose claim gives the status.")
    alert: AlertState | None = Field(description="open, closed, or null when none was raised.")

    @classmethod
    def of(cls, facts: PersonFacts) -> PersonFactsOut:
        return cls(
            person_id=facts.person_id,
            name=facts.name,
            age=facts.age,
            status=facts.status,
            reported_at=facts.reported_at,
            location=facts.location,
            source=facts.source,
            alert=facts.alert,
        )


class DuplicateReasonOut(BaseModel):
    code: str
    words: str


class DuplicatePairOut(BaseModel):
    first: PersonFactsOut = Field(description="The older record.")
    second: PersonFactsOut
    reasons: list[DuplicateReasonOut]

    @classmethod
    def of(cls, pair: DuplicatePair) -> DuplicatePairOut:
        return cls(
            first=PersonFactsOut.of(pair.first),
            second=PersonFactsOut.of(pair.second),
            reasons=[DuplicateReasonOut(code=r.code, words=r.words) for r in pair.reasons],
        )


class DuplicatePageOut(BaseModel):
    items: list[DuplicatePairOut]
    total: int
    offset: int
    limit: int


@api_router.get(
    "/incidents/{incident_id}/duplicates",
    response_model=DuplicatePageOut,
    responses={
        404: {"model": ErrorOut, "description": "Unknown id"},
        409: {
            "model": ErrorOut,
            "description": "The incident holds too many people for the queue "
            "(code `too_many_people`); each person's look-alikes are on "
            "`GET /api/people/{id}`",
        },
    },
)
def list_duplicates(
    incident_id: IncidentId,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=queries.MAX_PAGE_SIZE)] = DUPLICATES_PER_PAGE,
    session: Session = Depends(get_session),
    principal: Principal = needs(Permission.READ),
) -> DuplicatePageOut | JSONResponse:
    """The incident's possible duplicates, oldest pair first: each side's name, age,
    latest status, place, source and alert, and the reasons. A person decides each pair
    (``POST /api/people/{id}/links``)."""
    authorize(principal, Permission.READ, incident_id)
    try:
        queries.get_incident(session, incident_id)
    except NotFoundError as exc:
        return trace_error_response(404, exc)
    try:
        page = duplicates_page(session, incident_id, offset=offset, limit=limit)
    except TooManyPeopleError as exc:
        return trace_error_response(409, exc)
    return DuplicatePageOut(
        items=[DuplicatePairOut.of(p) for p in page.items],
        total=page.total,
        offset=page.offset,
        limit=page.limit,
    )


@page_router.get("/incidents/{incident_id}/duplicates")
def duplicates(
    request: Request,
    incident_id: str,
    session: Session = Depends(get_session),
    principal: Principal = needs(Permission.READ),
) -> Response:
    authorize(principal, Permission.READ, incident_id)
    try:
        incident = queries.get_incident(session, incident_id)
    except NotFoundError as exc:
        return render(request, "error.html", {"title": "Not found", "message": str(exc)}, 404)
    number = page_number(request.query_params.get("page", "1"))
    if number is None:
        context = {"title": "No such page", "message": BAD_PAGE_MESSAGE}
        return render(request, "error.html", context, 422)
    limit = DUPLICATES_PER_PAGE
    shown: dict[str, object] = {
        "incident": incident,
        "nav_incident": incident,
        "decided": request.query_params.get("decided", ""),
        "may_decide": principal.can(Permission.LINKS_WRITE, incident_id),
    }
    try:
        page = duplicates_page(session, incident_id, offset=(number - 1) * limit, limit=limit)
    except TooManyPeopleError as exc:
        return render(request, "duplicates.html", {**shown, "too_many": str(exc)}, 409)
    return render(request, "duplicates.html", {**shown, "page": page})


@page_router.post("/incidents/{incident_id}/duplicates/decisions")
async def decide_pair(
    request: Request, incident_id: str, principal: Principal = needs(Permission.LINKS_WRITE)
) -> Response:
    submitted = await request.form()
    names = ("person_id", "other_person_id", "decision", "note", "page")
    values = {name: submitted.get(name, "") for name in names}
    texts = {name: value if isinstance(value, str) else "" for name, value in values.items()}
    return await run_in_threadpool(_decide_pair, request, principal, incident_id, texts)


def _refused(request: Request, title: str, message: str, status: int) -> Response:
    return render(request, "error.html", {"title": title, "message": message}, status)


def _decide_pair(
    request: Request, principal: Principal, incident_id: str, values: dict[str, str]
) -> Response:
    authorize(principal, Permission.LINKS_WRITE, incident_id)
    decision = next((d for d in QUEUE_DECISIONS if d.value == values["decision"]), None)
    if decision is None:
        return _refused(request, "Not decided", "Choose same person or different people.", 422)
    with open_session(request) as check:  # a short read: the write starts clean
        for pid in (values["person_id"], values["other_person_id"]):
            person = check.get(Person, pid) if pid else None
            if person is None or person.incident_id != incident_id:
                message = "Both people must be records of this incident."
                return _refused(request, "Not decided", message, 404)
    with open_session(request) as session:
        try:
            decide_link_and_commit(
                session,
                values["person_id"],
                values["other_person_id"],
                decision,
                values["note"],
                actor=principal.actor,
            )
        except NotFoundError as exc:
            return _refused(request, "Not found", str(exc), 404)
        except InvalidInputError as exc:
            return _refused(request, "Not decided", str(exc), 422)
    number = page_number(values["page"]) or 1
    return RedirectResponse(
        f"/incidents/{incident_id}/duplicates?page={number}&decided={decision.value}",
        status_code=303,
    )
