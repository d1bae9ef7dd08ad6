"""Partner webhooks and deliveries (issue 41, docs/notifications.md):

- ``POST /api/incidents/{incident_id}/webhooks`` (webhooks:write): register a URL; the
  answer carries its secret, shown this once;
- ``GET /api/incidents/{incident_id}/webhooks`` and ``POST
  .../webhooks/{webhook_id}/remove`` (webhooks:write): list (no secrets) and remove (a
  POST with a JSON body, as every change: the members' removal does the same);
- ``GET /api/incidents/{incident_id}/deliveries?state=failed`` (contacts:read): what
  failed (dead, or retrying after an error), or the deliveries in another state.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Path, Request
from sqlalchemy.orm import Session

from trace_app.accounts.permissions import Permission
from trace_app.domain.text import ID_PATTERN, MAX_ID_CHARACTERS
from trace_app.notifications import follow_ups, webhook_registry
from trace_app.web.deps import UNIT_OF_WORK
from trace_app.web.errors import COMMON_RESPONSES, NOT_FOUND, ErrorOut, ValidationErrorOut
from trace_app.web.gate import Access, gated_router, in_incident
from trace_app.web.params import IncidentId, Limit
from trace_app.web.webhooks.schemas import (
    DeliveryList,
    DeliveryOut,
    WebhookCreatedOut,
    WebhookIn,
    WebhookList,
    WebhookOut,
)

api_router = gated_router(prefix="/api", tags=["api"], responses=COMMON_RESPONSES)

WebhookId = Annotated[str, Path(max_length=MAX_ID_CHARACTERS, pattern=ID_PATTERN)]
DeliveryState = Literal["failed", "pending", "delivered", "dead", "skipped"]


@api_router.post(
    "/incidents/{incident_id}/webhooks",
    status_code=201,
    response_model=WebhookCreatedOut,
    responses={
        403: {"model": ErrorOut, "description": "Cross-site request, or not a coordinator"},
        404: {"model": ErrorOut, "description": "No such incident"},
        422: {
            "model": ValidationErrorOut,
            "description": "A URL that is not http(s), one inside the server's network, "
            "or an unknown event kind",
        },
    },
)
def register_webhook(
    request: Request,
    incident_id: IncidentId,
    data: WebhookIn,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.WEBHOOKS_WRITE),
) -> WebhookCreatedOut:
    """Register a partner's URL for the incident's events; the answer's ``secret`` signs
    every request (Standard Webhooks) and is never shown again. Audited."""
    events = [e.value for e in data.events] if data.events is not None else None
    view, secret = webhook_registry.register(
        session,
        access.incident,
        data.url,
        events,
        actor=access.actor,
        created_by=access.principal.user_id,
        private_addresses=request.app.state.settings.webhook_private_addresses,
    )
    session.commit()
    return WebhookCreatedOut(**WebhookOut.of(view).model_dump(), secret=secret)


@api_router.get(
    "/incidents/{incident_id}/webhooks", response_model=WebhookList, responses=NOT_FOUND
)
def list_webhooks(
    incident_id: IncidentId,
    include_removed: bool = False,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.WEBHOOKS_WRITE),
) -> WebhookList:
    """The incident's webhooks, oldest first, without their secrets."""
    found = webhook_registry.list_endpoints(
        session, access.incident, include_removed=include_removed
    )
    return WebhookList(items=[WebhookOut.of(v) for v in found])


@api_router.post(
    "/incidents/{incident_id}/webhooks/{webhook_id}/remove",
    response_model=WebhookOut,
    responses=NOT_FOUND,
)
def remove_webhook(
    incident_id: IncidentId,
    webhook_id: WebhookId,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.WEBHOOKS_WRITE),
) -> WebhookOut:
    """Stop sending to the webhook (what waited for it is skipped). Audited; removing
    it again changes nothing."""
    view = webhook_registry.remove(session, access.incident, webhook_id, actor=access.actor)
    return WebhookOut.of(view)


@api_router.get(
    "/incidents/{incident_id}/deliveries", response_model=DeliveryList, responses=NOT_FOUND
)
def list_deliveries(
    incident_id: IncidentId,
    state: DeliveryState = "failed",
    limit: Limit = 100,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.CONTACTS_READ),
) -> DeliveryList:
    """The incident's deliveries in one state, newest first: ``failed`` (the default) is
    every dead delivery and every one waiting to be retried after an error."""
    found = follow_ups.deliveries(session, access.incident, state, limit=limit)
    return DeliveryList(items=[DeliveryOut.of(v) for v in found])
