"""Alerts: ``GET /api/incidents/{id}/alerts``, ``POST /api/alerts/{id}/close`` and
``/reopen`` (audited; a found-safe close publishes a claim for the member's
organisation), and the close page with its confirmation.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app.accounts.permissions import Permission
from trace_app.accounts.principal import Principal
from trace_app.domain import alert_actions, alert_queries, queries
from trace_app.domain.errors import (
    InvalidInputError,
)
from trace_app.i18n import gettext
from trace_app.store.models import Alert, AlertCloseReason, AlertState
from trace_app.web.alerts.schemas import AlertOut, AlertPage, CloseAlertIn, ReopenAlertIn
from trace_app.web.deps import UNIT_OF_WORK, open_session, render
from trace_app.web.errors import (
    COMMON_RESPONSES,
    NOT_FOUND,
    ErrorOut,
    ValidationErrorOut,
)
from trace_app.web.failures import failing_as
from trace_app.web.gate import Access, gated_router, in_incident, on_record
from trace_app.web.params import AlertId, IncidentId, Limit, Offset

api_router = gated_router(prefix="/api", tags=["api"], responses=COMMON_RESPONSES)
page_router = gated_router(include_in_schema=False)


@api_router.get("/incidents/{incident_id}/alerts", response_model=AlertPage, responses=NOT_FOUND)
def list_alerts(
    incident_id: IncidentId,
    state: AlertState = AlertState.OPEN,
    offset: Offset = 0,
    limit: Limit = 100,
    session: Session = UNIT_OF_WORK,
    _: Access = in_incident(Permission.READ),
) -> AlertPage:
    """The incident's alerts in one state (default open), newest first."""
    page = alert_queries.alerts_page(session, incident_id, state=state, offset=offset, limit=limit)
    return AlertPage(
        items=[AlertOut.of(a) for a in page.items],
        total=page.total,
        offset=page.offset,
        limit=page.limit,
    )


REASONS = [(r.value, alert_actions.REASON_WORDS[r]) for r in AlertCloseReason]


CONFIRM_MESSAGE = "Tick the box to confirm: a closed alert stops the search for this person."


_ANSWERS: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorOut, "description": "Cross-site request"},
    404: {"model": ErrorOut, "description": "No such alert"},
    422: {
        "model": ValidationErrorOut,
        "description": "A bad field, a blank note, or no organisation to publish the "
        "closing (or reopening) report for (code invalid_input)",
    },
}


def _organization(principal: Principal, incident_id: str) -> str | None:
    membership = principal.membership_for(incident_id)
    return membership.organization_name if membership else None


@api_router.post(
    "/alerts/{alert_id}/close",
    response_model=AlertOut,
    responses={
        **_ANSWERS,
        409: {"model": ErrorOut, "description": "Already closed (code alert_closed)"},
    },
)
def close_alert(
    alert_id: AlertId,
    data: CloseAlertIn,
    session: Session = UNIT_OF_WORK,
    access: Access = on_record(Permission.ALERTS_WRITE, Alert, "alert_id"),
) -> AlertOut:
    """A reviewer closes the person's open alert, saying what they know; audited."""
    shown = _apply(session, access, alert_id, data.note, data.reason)
    return AlertOut.of(alert_queries.get_alert(session, shown))


@api_router.post(
    "/alerts/{alert_id}/reopen",
    response_model=AlertOut,
    responses={**_ANSWERS, 409: {"model": ErrorOut, "description": "Open (code alert_closed)"}},
)
def reopen_alert(
    alert_id: AlertId,
    data: ReopenAlertIn,
    session: Session = UNIT_OF_WORK,
    access: Access = on_record(Permission.ALERTS_WRITE, Alert, "alert_id"),
) -> AlertOut:
    """A reviewer reopens an alert closed by mistake, with a note; audited. Returns the
    person's open alert."""
    shown = _apply(session, access, alert_id, data.note, None)
    return AlertOut.of(alert_queries.get_alert(session, shown))


def _apply(
    session: Session, access: Access, alert_id: str, note: str, reason: AlertCloseReason | None
) -> str:
    """Close (``reason`` given) or reopen, and commit; the id of the alert to show."""
    source = _organization(access.principal, access.incident)
    if reason is not None:
        alert = alert_actions.close_alert(
            session, alert_id, reason, note, actor=access.actor, source=source
        )
    else:
        alert = alert_actions.reopen_alert(
            session, alert_id, note, actor=access.actor, source=source
        )
    session.commit()
    return alert.id


@page_router.get("/alerts/{alert_id}/close")
def close_page(
    request: Request,
    alert_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = on_record(Permission.ALERTS_WRITE, Alert, "alert_id"),
) -> Response:
    """The confirmation step before a close (or a reopen, for a closed alert)."""
    alert = alert_queries.get_alert(session, alert_id)
    incident = queries.get_incident(session, access.incident)
    return render(
        request,
        "alert_close.html",
        {
            "alert": alert,
            "incident": incident,
            "nav_incident": incident,
            "reasons": REASONS,
            "organization": _organization(access.principal, incident.id),
        },
    )


@page_router.post("/alerts/{alert_id}/close")
async def close_form(
    request: Request,
    alert_id: str,
    access: Access = on_record(Permission.ALERTS_WRITE, Alert, "alert_id"),
) -> Response:
    return await _form(request, alert_id, access, "close")


@page_router.post("/alerts/{alert_id}/reopen")
async def reopen_form(
    request: Request,
    alert_id: str,
    access: Access = on_record(Permission.ALERTS_WRITE, Alert, "alert_id"),
) -> Response:
    return await _form(request, alert_id, access, "reopen")


async def _form(request: Request, alert_id: str, access: Access, action: str) -> Response:
    submitted = await request.form()
    values = {name: submitted.get(name, "") for name in ("reason", "note", "confirm")}
    texts = {name: value if isinstance(value, str) else "" for name, value in values.items()}
    return await run_in_threadpool(_form_action, request, access, alert_id, action, texts)


def _form_action(
    request: Request, access: Access, alert_id: str, action: str, values: dict[str, str]
) -> Response:
    failing_as(
        request,
        gettext("Alert not closed") if action == "close" else gettext("Alert not reopened"),
    )
    reason: AlertCloseReason | None = None
    if action == "close":
        if values["reason"] not in AlertCloseReason._value2member_map_:
            raise InvalidInputError(
                "Choose what you know: " + ", ".join(w for _, w in REASONS) + "."
            )
        reason = AlertCloseReason(values["reason"])
    if values["confirm"] != "yes":
        raise InvalidInputError(CONFIRM_MESSAGE)
    with open_session(request) as session:
        shown = _apply(session, access, alert_id, values["note"], reason)
        person_id = alert_queries.get_alert(session, shown).person_id
    done = "closed" if action == "close" else "reopened"
    return RedirectResponse(f"/people/{person_id}?alert={done}#person-alerts", status_code=303)
