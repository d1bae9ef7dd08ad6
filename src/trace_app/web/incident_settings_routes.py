"""A coordinator sets an incident's time zone: ``PUT /api/incidents/{id}/time-zone`` and
the People page's form (``POST /incidents/{id}/time-zone``, Post/Redirect/Get).

Both need ``incidents:write`` (a coordinator of every incident, as for creating one) and
call :func:`trace_app.domain.incidents.set_time_zone` (audited as ``incident.time_zone``).
Stored times and the API's times stay UTC; the pages show the new zone at once.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import Path, Request
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app.accounts.permissions import Permission
from trace_app.domain.incidents import set_time_zone
from trace_app.domain.text import ID_PATTERN, MAX_ID_CHARACTERS
from trace_app.domain.time_zones import MAX_TIME_ZONE_CHARACTERS
from trace_app.web.deps import UNIT_OF_WORK, open_session
from trace_app.web.errors import (
    COMMON_RESPONSES,
    ErrorOut,
    ValidationErrorOut,
)
from trace_app.web.failures import failing_as
from trace_app.web.gate import Access, gated_router, in_incident

api_router = gated_router(prefix="/api", tags=["api"], responses=COMMON_RESPONSES)
page_router = gated_router(include_in_schema=False)

IncidentId = Annotated[str, Path(max_length=MAX_ID_CHARACTERS, pattern=ID_PATTERN)]


class TimeZoneIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    time_zone: str = Field(
        max_length=MAX_TIME_ZONE_CHARACTERS,
        description="An IANA zone name such as Asia/Kathmandu, or UTC.",
    )


class TimeZoneOut(BaseModel):
    incident_id: str
    time_zone: str


@api_router.put(
    "/incidents/{incident_id}/time-zone",
    response_model=TimeZoneOut,
    responses={
        403: {"model": ErrorOut, "description": "Cross-site request, or not a coordinator"},
        404: {"model": ErrorOut, "description": "No such incident"},
        422: {"model": ValidationErrorOut, "description": "A zone zoneinfo does not know"},
    },
)
def put_time_zone(
    incident_id: IncidentId,
    data: TimeZoneIn,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.INCIDENTS_WRITE),
) -> TimeZoneOut:
    """Set the zone the incident's pages show times in (audited); times stay UTC here."""
    incident = set_time_zone(session, incident_id, data.time_zone, actor=access.actor)
    return TimeZoneOut(incident_id=incident.id, time_zone=incident.time_zone)


@page_router.post("/incidents/{incident_id}/time-zone")
async def time_zone_form(
    request: Request, incident_id: str, access: Access = in_incident(Permission.INCIDENTS_WRITE)
) -> Response:
    submitted = await request.form()
    value = submitted.get("time_zone", "")
    zone = value if isinstance(value, str) else ""
    return await run_in_threadpool(_set_from_form, request, access, incident_id, zone)


def _set_from_form(request: Request, access: Access, incident_id: str, zone: str) -> Response:
    failing_as(request, "Time zone not changed")
    with open_session(request) as session:
        set_time_zone(session, incident_id, zone, actor=access.actor)
        session.commit()
    return RedirectResponse(
        f"/incidents/{quote(incident_id)}/people?time_zone_set=1", status_code=303
    )
