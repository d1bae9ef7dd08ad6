"""API tokens for machine clients: ``Authorization: Bearer <secret>``, never in a URL.

A token is 256 random bits (``trc_`` and 43 URL-safe characters), shown once when it is
made; only its SHA-256 is stored (a fast hash is enough for a random secret of this
length). A token has scopes (permissions from :mod:`trace_app.accounts.permissions`) and
acts for its user: it may do what its scopes **and** its user's role allow. It can expire
and be revoked; a revoked or expired token answers 401.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.accounts.permissions import ROLE_PERMISSIONS, Permission, Role, parse_scopes
from trace_app.accounts.users import AccountError
from trace_app.domain import audit
from trace_app.domain.audit import Actor
from trace_app.domain.errors import NotFoundError
from trace_app.store.account_models import ApiToken, User
from trace_app.store.types import new_id, utc_now

PREFIX = "trc_"
MAX_DAYS = 3650


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def create(
    session: Session,
    actor: Actor,
    user: User,
    name: str,
    scopes: list[str],
    expires_days: int | None = None,
) -> tuple[ApiToken, str]:
    """A new token for ``user``; returns the row and the secret (shown once, never kept)."""
    try:
        permissions = parse_scopes(scopes)
    except ValueError as exc:
        raise AccountError(str(exc)) from None
    if not permissions:
        raise AccountError("Name at least one scope (--scope read, --scope pfif:read, ...).")
    granted: set[Permission] = set()
    for membership in user.memberships:
        granted |= ROLE_PERMISSIONS[Role(membership.role)]
    beyond = [p.value for p in permissions if p not in granted]
    if beyond:
        raise AccountError(f"{user.name}'s role does not allow: {', '.join(beyond)}.")
    if expires_days is not None and not 1 <= expires_days <= MAX_DAYS:
        raise AccountError(f"A token expires after 1 to {MAX_DAYS} days.")
    name = " ".join(name.split())[:80] or "token"
    secret = PREFIX + secrets.token_urlsafe(32)
    now = utc_now()
    token = ApiToken(
        id=new_id("tok"),
        user_id=user.id,
        name=name,
        prefix=secret[:10],
        secret_hash=secret_hash(secret),
        scopes=[p.value for p in permissions],
        created_at=now,
        expires_at=now + timedelta(days=expires_days) if expires_days else None,
    )
    session.add(token)
    session.flush()
    audit.record(
        session,
        actor,
        "token.create",
        object_type="token",
        object_id=token.id,
        touched=[f"user:{user.id}"],
        after={
            "name": name,
            "user": user.name,
            "scopes": token.scopes,
            "expires_days": expires_days,
        },
    )
    return token, secret


def is_live(revoked_at: datetime | None, expires_at: datetime | None, now: datetime) -> bool:
    """The token rule: not revoked, and not past its expiry (if it has one)."""
    return revoked_at is None and (expires_at is None or now < expires_at)


def revoke(session: Session, actor: Actor, token_id: str) -> ApiToken:
    token = session.get(ApiToken, token_id)
    if token is None:
        raise NotFoundError(f"No token with id {token_id!r}.")
    if token.revoked_at is not None:
        raise AccountError(f"Token {token_id} was already revoked.")
    token.revoked_at = utc_now()
    audit.record(
        session,
        actor,
        "token.revoke",
        object_type="token",
        object_id=token.id,
        touched=[f"user:{token.user_id}"],
        before={"revoked": False},
        after={"revoked": True},
    )
    return token


def list_tokens(session: Session) -> list[ApiToken]:
    """Every token, newest first (no secrets: they are not stored)."""
    return list(session.scalars(select(ApiToken).order_by(ApiToken.created_at.desc())))
