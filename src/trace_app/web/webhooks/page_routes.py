"""The Webhooks page (issue 41, docs/notifications.md "Pages"), for coordinators
(webhooks:write): register a partner's URL (the signing secret is shown on the answer to
that POST, once, and never again), list, remove.
"""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app import i18n
from trace_app.accounts.permissions import Permission
from trace_app.domain.queries import get_incident
from trace_app.notifications import webhook_registry
from trace_app.store.notification_models import EventKind
from trace_app.web.deps import UNIT_OF_WORK, render
from trace_app.web.failures import failing_as, refusal_of
from trace_app.web.gate import Access, gated_router, in_incident

page_router = gated_router(include_in_schema=False)


def _page(
    request: Request,
    session: Session,
    incident_id: str,
    *,
    created: webhook_registry.EndpointView | None = None,
    secret: str | None = None,
    url: str = "",
    error: str = "",
    removed: bool = False,
    status_code: int = 200,
) -> Response:
    incident = get_incident(session, incident_id)
    return render(
        request,
        "webhooks.html",
        {
            "incident": incident,
            "nav_incident": incident,
            "endpoints": webhook_registry.list_endpoints(session, incident_id),
            "created": created,
            "secret": secret,
            "url": url,
            "error": error,
            "removed": removed,
            "kinds": [k.value for k in EventKind],
        },
        status_code,
    )


@page_router.get("/incidents/{incident_id}/webhooks")
def webhooks_page(
    request: Request,
    incident_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.WEBHOOKS_WRITE),
) -> Response:
    return _page(
        request, session, access.incident, removed=request.query_params.get("removed") == "1"
    )


@page_router.post("/incidents/{incident_id}/webhooks")
async def register(
    request: Request,
    incident_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.WEBHOOKS_WRITE),
) -> Response:
    """Register: the answer is the page itself, with the secret this once (no redirect:
    a reload of the list never shows it again)."""
    submitted = await request.form()
    url = submitted.get("url", "")
    chosen = [e for e in submitted.getlist("events") if isinstance(e, str)]
    text = url if isinstance(url, str) else ""
    return await run_in_threadpool(_register, request, session, access, text, chosen)


def _register(
    request: Request, session: Session, access: Access, url: str, events: list[str]
) -> Response:
    failing_as(request, i18n.gettext("Webhook not registered"))

    def add() -> tuple[webhook_registry.EndpointView, str]:
        made = webhook_registry.register(
            session,
            access.incident,
            url,
            events or None,
            actor=access.actor,
            created_by=access.principal.user_id,
            private_addresses=request.app.state.settings.webhook_private_addresses,
        )
        session.commit()
        return made

    made, refusal = refusal_of(add)
    if made is None:
        assert refusal is not None
        session.rollback()
        words = i18n.gettext(str(refusal))
        return _page(request, session, access.incident, url=url, error=words, status_code=422)
    view, secret = made
    return _page(request, session, access.incident, created=view, secret=secret)


@page_router.post("/incidents/{incident_id}/webhooks/{webhook_id}/remove")
def remove(
    request: Request,
    incident_id: str,
    webhook_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.WEBHOOKS_WRITE),
) -> Response:
    failing_as(request, i18n.gettext("Webhook not removed"))
    webhook_registry.remove(session, access.incident, webhook_id, actor=access.actor)
    return RedirectResponse(f"/incidents/{access.incident}/webhooks?removed=1", status_code=303)
