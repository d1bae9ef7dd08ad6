"""Who is asking: the principal behind a session cookie or a bearer token.

This runs on every request, so it reads plain rows with prebuilt statements (as the
People page does, docs/decisions/0012): one row for the session or token with its user,
one statement for the user's memberships. The rules it applies (when a session or token
is live) are :func:`trace_app.accounts.sessions.is_live` and
:func:`trace_app.accounts.tokens.is_live`.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.orm import Session

from trace_app.accounts import sessions, tokens
from trace_app.accounts.permissions import Permission, Role
from trace_app.accounts.principal import MembershipView, Principal
from trace_app.domain.audit import Actor
from trace_app.store.account_models import ApiToken, Membership, User, WebSession
from trace_app.store.models import Organization
from trace_app.store.types import utc_now

_SESSION = (
    select(
        WebSession.user_id,
        WebSession.created_at,
        WebSession.last_seen_at,
        WebSession.expires_at,
        User.name,
        User.disabled,
    )
    .join(User, User.id == WebSession.user_id)
    .where(WebSession.id_hash == bindparam("id_hash"))
)
_TOKEN = (
    select(
        ApiToken.id,
        ApiToken.name.label("token_name"),
        ApiToken.scopes,
        ApiToken.user_id,
        ApiToken.revoked_at,
        ApiToken.expires_at,
        User.name,
        User.disabled,
    )
    .join(User, User.id == ApiToken.user_id)
    .where(ApiToken.secret_hash == bindparam("secret_hash"))
)
_MEMBERSHIPS = (
    select(Membership.scope, Membership.role, Membership.organization_id, Organization.name)
    .outerjoin(Organization, Organization.id == Membership.organization_id)
    .where(Membership.user_id == bindparam("user_id"))
    .order_by(Membership.scope)
)


def memberships(session: Session, user_id: str) -> tuple[MembershipView, ...]:
    return tuple(
        MembershipView(
            scope=row[0], role=Role(row[1]), organization_id=row[2], organization_name=row[3]
        )
        for row in session.execute(_MEMBERSHIPS, {"user_id": user_id})
    )


def by_session(
    session: Session,
    cookie: str,
    timeouts: sessions.Timeouts,
    client: str = "",
    now: datetime | None = None,
) -> Principal | None:
    """The signed-in user behind a session cookie, or None. An expired session's row is
    deleted; a live one's ``last_seen_at`` is written at most once a minute."""
    if not cookie or len(cookie) > 100:
        return None
    now = now or utc_now()
    key = sessions.id_hash(cookie)
    row = session.execute(_SESSION, {"id_hash": key}).first()
    if row is None:
        return None
    if not sessions.is_live(row.created_at, row.last_seen_at, row.expires_at, timeouts, now):
        session.execute(delete(WebSession).where(WebSession.id_hash == key))
        session.commit()
        return None
    if now - row.last_seen_at >= sessions.TOUCH_EVERY:
        session.execute(
            update(WebSession).where(WebSession.id_hash == key).values(last_seen_at=now)
        )
        session.commit()
    if row.disabled:
        return None
    return Principal(
        actor=Actor(kind="user", id=row.user_id, name=row.name, client=client),
        user_id=row.user_id,
        user_name=row.name,
        memberships=memberships(session, row.user_id),
    )


def by_token(
    session: Session, secret: str, client: str = "", now: datetime | None = None
) -> Principal | None:
    """The principal of a live bearer token (its scopes within its user's role), or None."""
    if not secret.startswith(tokens.PREFIX) or len(secret) > 100:
        return None
    row = session.execute(_TOKEN, {"secret_hash": tokens.secret_hash(secret)}).first()
    if row is None or row.disabled:
        return None
    if not tokens.is_live(row.revoked_at, row.expires_at, now or utc_now()):
        return None
    return Principal(
        actor=Actor(
            kind="token", id=row.id, name=f"{row.name} (token {row.token_name})", client=client
        ),
        user_id=row.user_id,
        user_name=row.name,
        memberships=memberships(session, row.user_id),
        scopes=frozenset(Permission(s) for s in row.scopes),
        token_id=row.id,
    )
