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

from typing import Annotated
from urllib.parse import quote

from fastapi import Query, Request
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app.accounts.permissions import Permission
from trace_app.domain import outcomes, queries
from trace_app.domain.duplicate_queue import (
    DUPLICATES_PER_PAGE,
    duplicates_page,
    queue_refusal,
)
from trace_app.domain.errors import InvalidInputError, NotFoundError
from trace_app.domain.links import decide_link_and_commit
from trace_app.i18n import gettext
from trace_app.store.models import LinkDecision, Person
from trace_app.web.deps import UNIT_OF_WORK, open_session, render
from trace_app.web.duplicates.schemas import DuplicatePageOut, DuplicatePairOut
from trace_app.web.errors import COMMON_RESPONSES, ErrorOut
from trace_app.web.failures import failing_as
from trace_app.web.gate import Access, gated_router, in_incident
from trace_app.web.paging import page_number, page_number_or_refuse
from trace_app.web.params import MAX_OFFSET, IncidentId

api_router = gated_router(prefix="/api", tags=["api"], responses=COMMON_RESPONSES)
page_router = gated_router(include_in_schema=False)

QUEUE_DECISIONS = (LinkDecision.SAME, LinkDecision.DIFFERENT)


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
    session: Session = UNIT_OF_WORK,
    _: Access = in_incident(Permission.READ),
) -> DuplicatePageOut:
    """The incident's possible duplicates, oldest pair first: each side's name, age,
    latest status, place, source and alert, and the reasons. A person decides each pair
    (``POST /api/people/{id}/links``)."""
    page = duplicates_page(session, incident_id, offset=offset, limit=limit)
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
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.READ),
) -> Response:
    incident = queries.get_incident(session, incident_id)
    failing_as(request, gettext("No such page"))
    number = page_number_or_refuse(request.query_params.get("page", "1"))
    limit = DUPLICATES_PER_PAGE
    shown: dict[str, object] = {
        "incident": incident,
        "nav_incident": incident,
        "decided": request.query_params.get("decided", ""),
        "may_decide": access.principal.can(Permission.LINKS_WRITE, incident_id),
        **_decided_person(session, incident_id, request.query_params.get("person", "")),
    }
    too_many = queue_refusal(session, incident_id)
    if too_many is not None:  # the page itself says why, with the way around it
        return render(request, "duplicates.html", {**shown, "too_many": str(too_many)}, 409)
    page = duplicates_page(session, incident_id, offset=(number - 1) * limit, limit=limit)
    return render(request, "duplicates.html", {**shown, "page": page})


@page_router.post("/incidents/{incident_id}/duplicates/decisions")
async def decide_pair(
    request: Request, incident_id: str, access: Access = in_incident(Permission.LINKS_WRITE)
) -> Response:
    submitted = await request.form()
    names = ("person_id", "other_person_id", "decision", "note", "page")
    values = {name: submitted.get(name, "") for name in names}
    texts = {name: value if isinstance(value, str) else "" for name, value in values.items()}
    return await run_in_threadpool(_decide_pair, request, access, incident_id, texts)


def _decided_person(session: Session, incident_id: str, person_id: str) -> dict[str, object]:
    """After a decision: the person it was recorded on (a link on the page) and the alerts a
    "same person" decision closed; nothing for an id that is not this incident's."""
    person = session.get(Person, person_id) if person_id else None
    if person is None or person.incident_id != incident_id:
        return {}
    return {
        "decided_person": person,
        "closed_by_decision": outcomes.closed_by_latest_decision(session, person.id),
    }


class NotOfThisIncident(NotFoundError):
    code = "not_of_this_incident"


def _decide_pair(
    request: Request, access: Access, incident_id: str, values: dict[str, str]
) -> Response:
    failing_as(request, gettext("Not decided"))
    decision = next((d for d in QUEUE_DECISIONS if d.value == values["decision"]), None)
    if decision is None:
        raise InvalidInputError("Choose same person or different people.")
    with open_session(request) as check:  # a short read: the write starts clean
        for pid in (values["person_id"], values["other_person_id"]):
            person = check.get(Person, pid) if pid else None
            if person is None or person.incident_id != incident_id:
                raise NotOfThisIncident("Both people must be records of this incident.")
    with open_session(request) as session:
        decide_link_and_commit(
            session,
            values["person_id"],
            values["other_person_id"],
            decision,
            values["note"],
            actor=access.actor,
        )
    number = page_number(values["page"]) or 1
    return RedirectResponse(
        f"/incidents/{incident_id}/duplicates?page={number}&decided={decision.value}"
        f"&person={quote(values['person_id'])}",
        status_code=303,
    )
