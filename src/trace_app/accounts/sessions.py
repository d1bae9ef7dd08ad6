"""Server-side sessions: a random id in an HttpOnly cookie, its SHA-256 in the database.

A session ends at sign-out (the row is deleted), when it has been idle longer than the
idle timeout, at the absolute timeout after sign-in, and when the user's password or role
changes (:func:`trace_app.accounts.users.end_sessions`). Signing in always starts a new
session with a new id (no session fixation). ``last_seen_at`` is written at most once a
minute, so a page view costs one indexed read, not a write.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.orm import Session

from trace_app.store.account_models import WebSession
from trace_app.store.types import utc_now

COOKIE = "trace_session"
TOUCH_EVERY = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class Timeouts:
    idle: timedelta = timedelta(minutes=30)
    absolute: timedelta = timedelta(hours=12)


def id_hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()


def start(session: Session, user_id: str, timeouts: Timeouts, now: datetime | None = None) -> str:
    """A new session for the user; returns the cookie value (256 random bits)."""
    now = now or utc_now()
    session_id = secrets.token_urlsafe(32)
    session.add(
        WebSession(
            id_hash=id_hash(session_id),
            user_id=user_id,
            created_at=now,
            last_seen_at=now,
            expires_at=now + timeouts.absolute,
        )
    )
    session.flush()
    return session_id


def is_live(
    created_at: datetime,
    last_seen_at: datetime,
    expires_at: datetime,
    timeouts: Timeouts,
    now: datetime,
) -> bool:
    """The session rule: not past its absolute end, not idle for longer than allowed."""
    return (
        now < expires_at
        and now < created_at + timeouts.absolute
        and (now - last_seen_at <= timeouts.idle)
    )


def end(session: Session, session_id: str) -> str | None:
    """Delete the session behind a cookie value; the user id it belonged to, if any."""
    row = session.get(WebSession, id_hash(session_id)) if session_id else None
    if row is None:
        return None
    user_id = row.user_id
    session.execute(delete(WebSession).where(WebSession.id_hash == row.id_hash))
    return user_id
