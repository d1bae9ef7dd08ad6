"""The audit trail: who did what, when, to which objects, with a short before/after.

Every state change writes exactly one :class:`~trace_app.store.account_models.AuditEvent`
**in its own transaction**, through :func:`record`: if the change rolls back, so does its
row, and a row is only ever added beside the change it describes. The operation that
changes something (publishing, an import, a decision, a close, a review, a reset, an
account change) names its :class:`Actor` and calls :func:`record` once; nothing else
writes audit rows, and the table refuses UPDATE and DELETE (triggers).

The guard: a session marked with :func:`require_audit` (every web request's session and
every CLI command's) refuses to commit a change without an audit row
(:class:`UnauditedChangeError`), so a new route or command cannot forget it.

Login failures and PFIF exports change nothing but are recorded too (each in a short
transaction of its own).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import ORMExecuteState, Session

from trace_app.store.account_models import AuditEvent
from trace_app.store.types import utc_now

# A before/after value is cut to this many characters: the trail says what changed, it is
# not a second copy of the data.
MAX_VALUE_CHARACTERS = 200


class UnauditedChangeError(RuntimeError):
    """A session that requires an audit row tried to commit a change without one."""


@dataclass(frozen=True, slots=True)
class Actor:
    """Who acts: a signed-in ``user``, an API ``token`` (of a user), the ``operator`` at
    the command line, or ``anonymous`` (only for a failed login)."""

    kind: str
    id: str
    name: str
    client: str = ""

    @classmethod
    def operator(cls, name: str = "command line") -> Actor:
        return cls(kind="operator", id="operator", name=f"operator ({name})")

    @classmethod
    def system(cls, name: str) -> Actor:
        """Trace itself, e.g. seeding the demo into an empty database at start-up."""
        return cls(kind="system", id="system", name=f"Trace ({name})")

    @classmethod
    def anonymous(cls, client: str = "") -> Actor:
        return cls(kind="anonymous", id="anonymous", name="anonymous", client=client)

    @property
    def label(self) -> str:
        """How pages name whoever made a decision."""
        return self.name


def _short(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_VALUE_CHARACTERS:
        return value[: MAX_VALUE_CHARACTERS - 1] + "…"
    if isinstance(value, Mapping):
        return {str(k): _short(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_short(v) for v in value]
    return value


def record(
    session: Session,
    actor: Actor,
    action: str,
    *,
    object_type: str = "",
    object_id: str = "",
    incident_id: str | None = None,
    touched: list[str] | None = None,
    before: Mapping[str, Any] | None = None,
    after: Mapping[str, Any] | None = None,
    outcome: str = "ok",
    note: str = "",
) -> AuditEvent:
    """Add the audit row of one change to ``session`` (flushed; committed with the change)."""
    row = AuditEvent(
        at=utc_now(),
        actor_kind=actor.kind,
        actor_id=actor.id,
        actor_name=actor.name[:200],
        action=action,
        outcome=outcome,
        incident_id=incident_id,
        object_type=object_type,
        object_id=object_id[:200],
        touched=list(touched or []),
        before=_short(dict(before)) if before is not None else None,
        after=_short(dict(after)) if after is not None else None,
        client=actor.client[:100],
        note=_short(note),
    )
    session.add(row)
    session.flush()
    return row


# --- the guard --------------------------------------------------------------------------

_REQUIRED = "trace_audit_required"
_CHANGED = "trace_audit_changed"
_AUDITED = "trace_audit_written"


def require_audit(session: Session) -> Session:
    """Mark ``session``: committing a change without an audit row raises
    :class:`UnauditedChangeError` (and the caller rolls back)."""
    session.info[_REQUIRED] = True
    return session


def _after_flush(session: Session, _context: Any) -> None:
    if not session.info.get(_REQUIRED):
        return
    for obj in (*session.new, *session.dirty, *session.deleted):
        if isinstance(obj, AuditEvent):
            session.info[_AUDITED] = True
        elif session.is_modified(obj) or obj in session.new or obj in session.deleted:
            session.info[_CHANGED] = True


def _on_execute(state: ORMExecuteState) -> None:
    session = state.session
    if not session.info.get(_REQUIRED):
        return
    if state.is_insert or state.is_update or state.is_delete:
        mapper = state.bind_mapper
        if mapper is not None and mapper.class_ is AuditEvent:
            session.info[_AUDITED] = True
        else:
            session.info[_CHANGED] = True


def _before_commit(session: Session) -> None:
    if not session.info.get(_REQUIRED):
        return
    session.flush()
    if session.info.get(_CHANGED) and not session.info.get(_AUDITED):
        raise UnauditedChangeError(
            "a change was about to be committed without its audit row (trace_app.domain.audit)"
        )


def _reset(session: Session, *_args: Any) -> None:
    session.info.pop(_CHANGED, None)
    session.info.pop(_AUDITED, None)


event.listen(Session, "after_flush", _after_flush)
event.listen(Session, "do_orm_execute", _on_execute)
event.listen(Session, "before_commit", _before_commit)
event.listen(Session, "after_commit", _reset)
event.listen(Session, "after_rollback", _reset)
