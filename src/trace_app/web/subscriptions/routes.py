"""``/subscriptions/confirm/{token}`` and ``/subscriptions/unsubscribe/{token}``: public
pages reached from mail (issue 41; the tokens: :mod:`trace_app.notifications.links`).

A GET shows a page with one button and changes nothing, so a mail scanner that follows
links changes nothing. The POST does the change and writes an audit row. The
unsubscribe POST is also RFC 8058's one-click request (``List-Unsubscribe=One-Click``,
sent by the mail provider): it needs no form token (the security middleware lets this
one path through; the link's token is the credential) and may be repeated. An unknown,
expired or used-up link is one 404 page that says what to do
(:data:`trace_app.notifications.links.INVALID_LINK`).
"""

from __future__ import annotations

from fastapi import Request
from sqlalchemy.orm import Session
from starlette.responses import Response

from trace_app.domain import audit
from trace_app.domain.audit import Actor
from trace_app.notifications import links
from trace_app.store.notification_models import Inquiry, LinkPurpose
from trace_app.web.auth import PUBLIC, client_address
from trace_app.web.deps import UNIT_OF_WORK, render
from trace_app.web.gate import gated_router
from trace_app.web.language import prefer_language

router = gated_router(include_in_schema=False)


@router.get("/subscriptions/confirm/{token}")
def confirm_page(
    request: Request, token: str, session: Session = UNIT_OF_WORK, _: None = PUBLIC
) -> Response:
    _link, inquiry = links.find(session, token, LinkPurpose.CONFIRM)
    prefer_language(request, inquiry.language)  # the enquirer's (issue 42)
    return render(
        request,
        "subscription_confirm.html",
        {"action": f"/subscriptions/confirm/{token}", "reference": inquiry.id},
    )


@router.post("/subscriptions/confirm/{token}")
def confirm(
    request: Request, token: str, session: Session = UNIT_OF_WORK, _: None = PUBLIC
) -> Response:
    inquiry = links.confirm(session, token)
    return _done(request, session, inquiry, "inquiry.email_confirmed", "confirmed")


@router.get("/subscriptions/unsubscribe/{token}")
def unsubscribe_page(
    request: Request, token: str, session: Session = UNIT_OF_WORK, _: None = PUBLIC
) -> Response:
    _link, inquiry = links.find(session, token, LinkPurpose.UNSUBSCRIBE)
    prefer_language(request, inquiry.language)
    return render(
        request,
        "subscription_unsubscribe.html",
        {
            "action": f"/subscriptions/unsubscribe/{token}",
            "reference": inquiry.id,
            "already": inquiry.unsubscribed_at is not None,
        },
    )


@router.post("/subscriptions/unsubscribe/{token}")
def unsubscribe(
    request: Request, token: str, session: Session = UNIT_OF_WORK, _: None = PUBLIC
) -> Response:
    """The button's POST and RFC 8058's one-click POST alike; a repeat answers the same."""
    inquiry = links.unsubscribe(session, token)
    return _done(request, session, inquiry, "inquiry.unsubscribed", "unsubscribed")


def _done(request: Request, session: Session, inquiry: Inquiry, action: str, done: str) -> Response:
    """After a link's change: its audit row (by whoever held the link) and the page that
    says what was done, in the enquirer's language."""
    prefer_language(request, inquiry.language)
    audit.record(
        session,
        Actor.anonymous(client_address(request)),
        action,
        object_type="inquiry",
        object_id=inquiry.id,
        incident_id=inquiry.incident_id,
    )
    return render(request, "subscription_done.html", {"done": done})
