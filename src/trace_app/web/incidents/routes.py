"""Incidents: the home page (the incidents you may see), ``GET``/``POST /api/incidents``
and the New incident page (``/incidents/new``, coordinators of every incident), an
incident's time zone (``PUT /api/incidents/{id}/time-zone``, its page and the People
page's form) and Reset demo (a demo server only).

A form's refused value is shown beside its field (the domain's
:class:`~trace_app.domain.incidents.IncidentInputError` names it), with 422.
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import Request
from fastapi.datastructures import FormData
from fastapi.responses import JSONResponse, RedirectResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app import demo_reset
from trace_app.accounts.permissions import Permission
from trace_app.accounts.principal import Principal
from trace_app.domain import queries
from trace_app.domain.incidents import create_incident, set_time_zone
from trace_app.domain.time_zones import DEFAULT_TIME_ZONE, TIME_ZONE_EXAMPLE
from trace_app.i18n import gettext
from trace_app.web.auth import authorize
from trace_app.web.deps import DEMO_ONLY_MESSAGE, UNIT_OF_WORK, is_demo, open_session, render
from trace_app.web.errors import (
    COMMON_RESPONSES,
    ErrorOut,
    ValidationErrorOut,
)
from trace_app.web.failures import refusal_of
from trace_app.web.gate import Access, gated_router, in_incident, needs
from trace_app.web.incidents.schemas import (
    IncidentIn,
    IncidentList,
    IncidentOut,
    ResetIn,
    ResetOut,
    TimeZoneIn,
    TimeZoneOut,
)
from trace_app.web.incidents.views import time_zone_choices
from trace_app.web.params import IncidentId

api_router = gated_router(prefix="/api", tags=["api"], responses=COMMON_RESPONSES)
page_router = gated_router(include_in_schema=False)


@api_router.get("/incidents", response_model=IncidentList)
def list_incidents(
    session: Session = UNIT_OF_WORK, access: Access = needs(Permission.READ)
) -> IncidentList:
    """The incidents this account is a member of, with their counts."""
    return IncidentList(
        items=[
            IncidentOut(
                id=s.incident.id,
                name=s.incident.name,
                description=s.incident.description,
                time_zone=s.incident.time_zone,
                reports=s.reports,
                people=s.people,
                open_alerts=s.open_alerts,
            )
            for s in queries.list_incidents(session)
            if access.principal.may_see(s.incident.id)
        ]
    )


@api_router.post(
    "/incidents",
    status_code=201,
    response_model=IncidentOut,
    responses={
        403: {"model": ErrorOut, "description": "Cross-site request, or not a coordinator"},
        422: {
            "model": ValidationErrorOut,
            "description": "A bad or already used name, or an unknown time zone",
        },
    },
)
def create_incident_api(
    data: IncidentIn,
    session: Session = UNIT_OF_WORK,
    access: Access = needs(Permission.INCIDENTS_WRITE),
) -> IncidentOut:
    """A coordinator of every incident opens a new incident (audited)."""
    incident = create_incident(
        session, data.name, data.description, time_zone=data.time_zone, actor=access.actor
    )
    session.commit()
    return IncidentOut(
        id=incident.id,
        name=incident.name,
        description=incident.description,
        time_zone=incident.time_zone,
        reports=0,
        people=0,
        open_alerts=0,
    )


@api_router.post(
    "/demo/reset",
    response_model=ResetOut,
    responses={403: {"model": ErrorOut, "description": "Not a demo server (code demo_only)"}},
)
def reset(
    request: Request,
    _body: ResetIn,
    session: Session = UNIT_OF_WORK,
    access: Access = needs(Permission.DEMO_RESET),
) -> ResetOut | JSONResponse:
    """Delete everything (investigation runs included) and seed the demo again.

    Only on a demo server (``trace demo``, ``trace serve --demo``); elsewhere 403."""
    if not is_demo(request):
        return JSONResponse({"detail": DEMO_ONLY_MESSAGE, "code": "demo_only"}, status_code=403)
    authorize(access.principal, Permission.DEMO_RESET, None)  # it deletes every incident
    incident = demo_reset.reset(session, request.app.state.settings, actor=access.actor)
    session.commit()
    summary = next(s for s in queries.list_incidents(session) if s.incident.id == incident.id)
    return ResetOut(
        incident_id=incident.id,
        reports=summary.reports,
        people=summary.people,
        open_alerts=summary.open_alerts,
    )


def _visible(session: Session, principal: Principal) -> list[queries.IncidentSummary]:
    return [s for s in queries.list_incidents(session) if principal.may_see(s.incident.id)]


@page_router.get("/")
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


def _text(form: FormData, name: str, limit: int) -> str:
    value = form.get(name, "")
    return value[:limit] if isinstance(value, str) else ""


def _incident_form(
    request: Request,
    values: dict[str, str],
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    return render(
        request,
        "incident_new.html",
        {
            "values": values,
            "errors": errors or {},
            "zones": time_zone_choices(),
            "zone_example": TIME_ZONE_EXAMPLE,
        },
        status_code,
    )


@page_router.get("/incidents/new")
def new_incident_page(request: Request, _: Access = needs(Permission.INCIDENTS_WRITE)) -> Response:
    """The New incident form: a name, what it is, and its time zone from a list."""
    values = {"name": "", "description": "", "time_zone": DEFAULT_TIME_ZONE}
    return _incident_form(request, values)


@page_router.post("/incidents/new")
async def new_incident(
    request: Request, access: Access = needs(Permission.INCIDENTS_WRITE)
) -> Response:
    submitted = await request.form()
    values = {
        "name": _text(submitted, "name", 1000),
        "description": _text(submitted, "description", 10_000),
        "time_zone": _text(submitted, "time_zone", 200),
    }
    return await run_in_threadpool(_create_from_form, request, access, values)


def _create_from_form(request: Request, access: Access, values: dict[str, str]) -> Response:
    """Opens the incident and goes on to its members (no one works on it yet)."""
    authorize(access.principal, Permission.INCIDENTS_WRITE, None)  # server-wide
    with open_session(request) as session:
        incident, refusal = refusal_of(
            lambda: create_incident(
                session,
                values["name"],
                values["description"],
                time_zone=values["time_zone"],
                actor=access.actor,
            )
        )
        if incident is None:  # shown beside its field; nothing was added
            assert refusal is not None
            field = getattr(refusal, "field", "name")
            return _incident_form(request, values, {field: str(refusal)}, refusal.http_status)
        session.commit()
        incident_id = incident.id
    return RedirectResponse(f"/incidents/{quote(incident_id)}/members?created=1", status_code=303)


@page_router.get("/incidents/{incident_id}")
def incident(incident_id: str, _: Access = in_incident(Permission.READ)) -> Response:
    return RedirectResponse(f"/incidents/{incident_id}/people", status_code=307)


@page_router.get("/demo/reset")
def confirm_reset(
    request: Request,
    session: Session = UNIT_OF_WORK,
    access: Access = needs(Permission.DEMO_RESET),
) -> Response:
    """Reset demo asks first: what it deletes, with the counts, and one button to go on."""
    if not is_demo(request):
        return render(
            request,
            "error.html",
            {"title": gettext("Not a demo server"), "message": DEMO_ONLY_MESSAGE},
            403,
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


@page_router.post("/demo/reset")
def reset_form(
    request: Request,
    session: Session = UNIT_OF_WORK,
    access: Access = needs(Permission.DEMO_RESET),
) -> Response:
    if not is_demo(request):
        return render(
            request,
            "error.html",
            {"title": gettext("Not a demo server"), "message": DEMO_ONLY_MESSAGE},
            403,
        )
    authorize(access.principal, Permission.DEMO_RESET, None)  # it deletes every incident
    demo_reset.reset(session, request.app.state.settings, actor=access.actor)
    session.commit()
    return RedirectResponse("/?reset=1", status_code=303)


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


def _time_zone_page(
    request: Request,
    session: Session,
    incident_id: str,
    value: str,
    error: str = "",
    status_code: int = 200,
) -> Response:
    incident = queries.get_incident(session, incident_id)
    return render(
        request,
        "time_zone.html",
        {
            "incident": incident,
            "nav_incident": incident,
            "value": value,
            "error": error,
            "zones": time_zone_choices(),
        },
        status_code,
    )


@page_router.get("/incidents/{incident_id}/time-zone")
def time_zone_page(
    request: Request,
    incident_id: str,
    session: Session = UNIT_OF_WORK,
    _: Access = in_incident(Permission.INCIDENTS_WRITE),
) -> Response:
    """The incident's time zone, chosen from a list."""
    incident = queries.get_incident(session, incident_id)
    return _time_zone_page(request, session, incident_id, incident.time_zone)


@page_router.post("/incidents/{incident_id}/time-zone")
async def time_zone_form(
    request: Request, incident_id: str, access: Access = in_incident(Permission.INCIDENTS_WRITE)
) -> Response:
    submitted = await request.form()
    zone = _text(submitted, "time_zone", 200)
    return await run_in_threadpool(_set_from_form, request, access, incident_id, zone)


def _set_from_form(request: Request, access: Access, incident_id: str, zone: str) -> Response:
    """Sets the zone and goes back to the People page; a zone Trace does not know is shown
    beside the list of zones (422), and nothing changes."""
    with open_session(request) as session:
        _, refusal = refusal_of(
            lambda: set_time_zone(session, incident_id, zone, actor=access.actor)
        )
        if refusal is None:
            session.commit()
    if refusal is not None:  # beside the list of zones; the session above closed unsaved
        with open_session(request) as session:
            return _time_zone_page(
                request, session, incident_id, zone, str(refusal), refusal.http_status
            )
    return RedirectResponse(
        f"/incidents/{quote(incident_id)}/people?time_zone_set=1", status_code=303
    )
