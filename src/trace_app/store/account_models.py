"""Accounts, memberships, server-side sessions, API tokens and the audit trail (tables).

A User signs in with a name and a password (only its Argon2id hash is kept). A Membership
gives the user a role, for one organisation, in one incident or in every incident
(``scope`` is the incident id, or ``*``). A WebSession is a signed-in browser: the row
holds the SHA-256 of the cookie's random id, never the id itself. An ApiToken belongs to a
user and holds scopes (permissions); only the SHA-256 of its 256-bit secret is kept. An
AuditEvent is one append-only row per state change, written in the change's transaction
(:mod:`trace_app.domain.audit`); it names objects by id without foreign keys, so it
outlives what it describes (a demo reset deletes records, never their audit).

The rules over these rows (who may do what) live in :mod:`trace_app.accounts`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from trace_app.store.models import Base, Organization
from trace_app.store.types import ID_LENGTH, UTCDateTime, utc_now

EVERY_INCIDENT = "*"


class User(Base):
    __tablename__ = "users"

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    name: Mapped[str] = mapped_column(String(80))
    # case-folded name: unique, what login looks up
    name_key: Mapped[str] = mapped_column(String(80), unique=True)
    password_hash: Mapped[str] = mapped_column(String(200))
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    password_changed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    # the language the account chose with ?lang= (issue 42): "en", "ne", "es", "ar"; None:
    # none chosen (the browser's Accept-Language decides)
    language: Mapped[str | None] = mapped_column(String(8), nullable=True)

    memberships: Mapped[list[Membership]] = relationship(
        back_populates="user", cascade="all, delete-orphan", order_by="Membership.scope"
    )


class Membership(Base):
    """A user's role for one organisation, in one incident (``scope`` = its id) or in every
    incident (``scope`` = ``*``). One membership per user and scope."""

    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("user_id", "scope", name="uq_memberships_user_scope"),)

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    organization_id: Mapped[str | None] = mapped_column(
        ForeignKey("organizations.id", ondelete="SET NULL"), nullable=True
    )
    role: Mapped[str] = mapped_column(String(20))
    scope: Mapped[str] = mapped_column(String(ID_LENGTH))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)

    user: Mapped[User] = relationship(back_populates="memberships")
    organization: Mapped[Organization | None] = relationship()


class WebSession(Base):
    """A signed-in browser. ``id_hash`` is the SHA-256 (hex) of the cookie's random id."""

    __tablename__ = "web_sessions"

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ApiToken(Base):
    """A machine client's bearer token. ``secret_hash`` is the SHA-256 (hex) of the secret;
    ``prefix`` is its first characters, shown in lists so a person can tell tokens apart."""

    __tablename__ = "api_tokens"

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(80))
    prefix: Mapped[str] = mapped_column(String(16))
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)
    scopes: Mapped[list[str]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    user: Mapped[User] = relationship()


class AuditEvent(Base):
    """Who did what, when, to which objects, with a short before/after. Append-only: the
    migration adds triggers that refuse UPDATE and DELETE on both databases."""

    __tablename__ = "audit_events"
    __table_args__ = (
        Index("ix_audit_events_actor", "actor_name", "sequence"),
        Index("ix_audit_events_action", "action", "sequence"),
        Index("ix_audit_events_object", "object_id", "sequence"),
    )

    sequence: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    actor_kind: Mapped[str] = mapped_column(String(20))
    actor_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    actor_name: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(60))
    outcome: Mapped[str] = mapped_column(String(20), default="ok")
    incident_id: Mapped[str | None] = mapped_column(String(ID_LENGTH), nullable=True)
    object_type: Mapped[str] = mapped_column(String(40), default="")
    object_id: Mapped[str] = mapped_column(String(200), default="")
    # other objects the change touched, as "type:id"
    touched: Mapped[list[str]] = mapped_column(JSON, default=list)
    before: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    client: Mapped[str] = mapped_column(String(100), default="")
    note: Mapped[str] = mapped_column(Text, default="")
