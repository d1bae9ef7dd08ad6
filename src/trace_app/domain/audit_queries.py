"""Reading the audit trail: newest first, filtered by actor name, action or object id."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from trace_app.domain.queries import Page
from trace_app.store.account_models import AuditEvent


@dataclass(frozen=True, slots=True)
class AuditFilter:
    actor: str = ""  # an actor's name (exact, any case)
    action: str = ""  # an action ("report.publish"), or a prefix ending in "." ("user.")
    object_id: str = ""  # the object's id, or one it touched
    since: datetime | None = None


def _query(wanted: AuditFilter):  # type: ignore[no-untyped-def]
    query = select(AuditEvent)
    if wanted.actor:
        query = query.where(func.lower(AuditEvent.actor_name) == wanted.actor.lower())
    if wanted.action.endswith("."):
        query = query.where(AuditEvent.action.startswith(wanted.action, autoescape=True))
    elif wanted.action:
        query = query.where(AuditEvent.action == wanted.action)
    if wanted.object_id:
        query = query.where(AuditEvent.object_id == wanted.object_id)
    if wanted.since is not None:
        query = query.where(AuditEvent.at >= wanted.since)
    return query


def audit_page(
    session: Session, wanted: AuditFilter, *, offset: int = 0, limit: int = 100
) -> Page[AuditEvent]:
    query = _query(wanted)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(
        query.order_by(AuditEvent.sequence.desc()).offset(offset).limit(limit)
    ).all()
    return Page(items=list(rows), total=int(total), offset=offset, limit=limit)


def audit_since(session: Session, wanted: AuditFilter) -> list[AuditEvent]:
    """Every matching row, oldest first (``trace audit``)."""
    return list(session.scalars(_query(wanted).order_by(AuditEvent.sequence)))
