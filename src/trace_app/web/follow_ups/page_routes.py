"""Coordinators' pages (issue 41, docs/notifications.md "Pages"):

- ``GET /incidents/{incident_id}/follow-ups`` (contacts:read): "Tell the family in
  person" after a death, with the enquirers' contacts (the read is audited), and
  ``POST .../follow-ups/{follow_up_id}/done``;
- ``GET /incidents/{incident_id}/deliveries`` (contacts:read): messages that failed (dead
  letters, retries after an error), and mail waiting when no mail server is set up.
"""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import RedirectResponse
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.responses import Response

from trace_app import i18n
from trace_app.accounts.permissions import Permission
from trace_app.domain.queries import get_incident
from trace_app.notifications import follow_ups
from trace_app.notifications.worker import mail_waiting
from trace_app.store.models import Person
from trace_app.web.deps import UNIT_OF_WORK, render
from trace_app.web.failures import failing_as
from trace_app.web.gate import Access, gated_router, in_incident

page_router = gated_router(include_in_schema=False)

DONE_SHOWN = 20  # the latest follow-ups marked done, under the open ones


@page_router.get("/incidents/{incident_id}/follow-ups")
def follow_ups_page(
    request: Request,
    incident_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.CONTACTS_READ),
) -> Response:
    """Open follow-ups first (each with the enquirers' contacts: one audited read), then
    the latest done ones (who, when; no contacts)."""
    incident = get_incident(session, access.incident)
    open_ones = follow_ups.open_follow_ups(session, access.incident, actor=access.actor)
    done = [
        v
        for v in follow_ups.list_follow_ups(session, access.incident, include_done=True)
        if v.done_at is not None
    ]
    done.sort(key=lambda v: v.done_at or v.created_at, reverse=True)
    failed = follow_ups.failed_deliveries(session, access.incident)
    return render(
        request,
        "follow_ups.html",
        {
            "incident": incident,
            "nav_incident": incident,
            "follow_ups": open_ones,
            "done_follow_ups": done[:DONE_SHOWN],
            "marked": request.query_params.get("done") == "1",
            "failed_count": len(failed),
            "mail_waits": not request.app.state.settings.smtp_url,
            "languages": i18n.LANGUAGES,
        },
    )


@page_router.post("/incidents/{incident_id}/follow-ups/{follow_up_id}/done")
def mark_done(
    request: Request,
    incident_id: str,
    follow_up_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.CONTACTS_READ),
) -> Response:
    """The family was told in person: done, and their requests close."""
    failing_as(request, i18n.gettext("Not marked done"))
    follow_ups.mark_done(session, access.incident, follow_up_id, actor=access.actor)
    return RedirectResponse(f"/incidents/{access.incident}/follow-ups?done=1", status_code=303)


@page_router.get("/incidents/{incident_id}/deliveries")
def deliveries_page(
    request: Request,
    incident_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.CONTACTS_READ),
) -> Response:
    """What failed to be sent (never an address: the enquirer's request is named), and
    how much mail waits for a mail server."""
    incident = get_incident(session, access.incident)
    failed = follow_ups.failed_deliveries(session, access.incident)
    ids = sorted({d.person_id for d in failed})
    query = select(Person.id, Person.name).where(Person.id.in_(ids))
    names = {pid: name for pid, name in session.execute(query)}
    waiting = mail_waiting(session, request.app.state.settings, access.incident)
    return render(
        request,
        "deliveries.html",
        {
            "incident": incident,
            "nav_incident": incident,
            "failed": failed,
            "names": names,
            "mail_waiting": waiting,
            "smtp_set": bool(request.app.state.settings.smtp_url),
        },
    )
