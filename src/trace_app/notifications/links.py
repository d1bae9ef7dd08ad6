"""Links mailed to an enquirer: confirm the address, unsubscribe (issue 41).

A link carries a random token (32 bytes, URL-safe); only its SHA-256 is stored
(``inquiry_links``), so a copy of the database opens nothing. Each token has one purpose
and an expiry. A GET of the link only shows a page with one button; the POST does the
change (so a mail scanner that follows links changes nothing). Confirming uses the token
up; unsubscribing may be repeated with the same token and answers the same (RFC 8058's
one-click POST is retried by mail providers).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from trace_app.domain.errors import NotFoundError
from trace_app.store.notification_models import Inquiry, InquiryLink, LinkPurpose

CONFIRM_DAYS = 14
# an unsubscribe link works as long as the contacts may be kept, and a while after
UNSUBSCRIBE_DAYS = 365
TOKEN_BYTES = 32
LINK_PATHS = {
    LinkPurpose.CONFIRM: "/subscriptions/confirm/",
    LinkPurpose.UNSUBSCRIBE: "/subscriptions/unsubscribe/",
}
INVALID_LINK = (
    "This link is not valid any more: it has expired, was already used, or was copied "
    "incompletely. Ask the desk where you registered your request for a new one."
)


class LinkInvalidError(NotFoundError):
    """A confirm or unsubscribe token that is unknown, expired, used up, or of the other
    purpose: one answer for all, so a guess learns nothing."""

    code = "link_invalid"

    def __init__(self, message: str = INVALID_LINK) -> None:
        super().__init__(message)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def issue(
    session: Session, inquiry_id: str, purpose: LinkPurpose, *, now: datetime | None = None
) -> str:
    """A new token for ``inquiry_id`` and ``purpose`` (its hash is added to the session)."""
    now = now or datetime.now(UTC)
    days = CONFIRM_DAYS if purpose is LinkPurpose.CONFIRM else UNSUBSCRIBE_DAYS
    token = secrets.token_urlsafe(TOKEN_BYTES)
    session.add(
        InquiryLink(
            token_hash=token_hash(token),
            inquiry_id=inquiry_id,
            purpose=purpose.value,
            expires_at=now + timedelta(days=days),
        )
    )
    return token


def link_url(base_url: str, purpose: LinkPurpose, token: str) -> str:
    return f"{base_url.rstrip('/')}{LINK_PATHS[purpose]}{token}"


def find(
    session: Session, token: str, purpose: LinkPurpose, *, now: datetime | None = None
) -> tuple[InquiryLink, Inquiry]:
    """The link and its inquiry, for a token of ``purpose`` that is still valid; raises
    :class:`LinkInvalidError` otherwise (a confirm link already used counts as invalid)."""
    now = now or datetime.now(UTC)
    if not token or len(token) > 200:
        raise LinkInvalidError
    link = session.get(InquiryLink, token_hash(token))
    if link is None or link.purpose != purpose.value or link.expires_at <= now:
        raise LinkInvalidError
    if purpose is LinkPurpose.CONFIRM and link.used_at is not None:
        raise LinkInvalidError
    inquiry = session.get(Inquiry, link.inquiry_id)
    if inquiry is None or inquiry.contacts_erased_at is not None:
        raise LinkInvalidError
    return link, inquiry


def confirm(session: Session, token: str, *, now: datetime | None = None) -> Inquiry:
    """The enquirer confirms their address: later changes are mailed. Uses the token up."""
    now = now or datetime.now(UTC)
    link, inquiry = find(session, token, LinkPurpose.CONFIRM, now=now)
    link.used_at = now
    if inquiry.email_confirmed_at is None:
        inquiry.email_confirmed_at = now
    return inquiry


def unsubscribe(session: Session, token: str, *, now: datetime | None = None) -> Inquiry:
    """No more mail to this enquirer. Idempotent: a repeat changes nothing and succeeds."""
    now = now or datetime.now(UTC)
    link, inquiry = find(session, token, LinkPurpose.UNSUBSCRIBE, now=now)
    if link.used_at is None:
        link.used_at = now
    if inquiry.unsubscribed_at is None:
        inquiry.unsubscribed_at = now
    return inquiry
