"""Users and their memberships: create, sign-in check, password and role changes.

No account exists until an operator creates the first admin (``trace user create NAME
--role admin``); there is no default account. Every change here is audited and ends the
user's other sessions where the issue's rules say so (a password or role change).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session, selectinload

from trace_app.accounts import passwords
from trace_app.accounts.permissions import Role
from trace_app.domain import audit
from trace_app.domain.audit import Actor
from trace_app.domain.errors import InvalidInputError, NotFoundError
from trace_app.store.account_models import EVERY_INCIDENT, Membership, User, WebSession
from trace_app.store.models import Incident, Organization
from trace_app.store.types import new_id, utc_now

USER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,79}$")


class AccountError(InvalidInputError):
    """An account change Trace refuses (a bad name, a weak password, an unknown role)."""

    code = "invalid_account"


def check_name(name: str) -> str:
    name = name.strip()
    if not USER_NAME.fullmatch(name):
        raise AccountError(
            "A user name has 1 to 80 letters, digits, dots, hyphens, underscores or @, "
            "and starts with a letter or digit."
        )
    return name


def find_user(session: Session, name: str) -> User | None:
    return session.scalars(
        select(User).where(User.name_key == name.strip().casefold())
    ).one_or_none()


def get_user(session: Session, name: str) -> User:
    user = find_user(session, name)
    if user is None:
        raise NotFoundError(f"No user named {name!r}.")
    return user


def count_users(session: Session) -> int:
    return int(session.scalar(select(func.count()).select_from(User)) or 0)


def _organization(session: Session, name: str | None) -> Organization | None:
    from trace_app.domain.publish import find_or_create_organization

    if name is None or not name.strip():
        return None
    return find_or_create_organization(session, " ".join(name.split()))


def _scope(session: Session, incident_id: str | None) -> str:
    if incident_id is None:
        return EVERY_INCIDENT
    if session.get(Incident, incident_id) is None:
        raise NotFoundError(f"No incident with id {incident_id!r}.")
    return incident_id


def _role(role: str) -> Role:
    try:
        return Role(role)
    except ValueError:
        raise AccountError(
            f"Unknown role {role!r}; the roles are: {', '.join(r.value for r in Role)}."
        ) from None


@dataclass(frozen=True, slots=True)
class NewMembership:
    role: str
    organization: str | None = None
    incident_id: str | None = None  # None: every incident


def create_user(
    session: Session, actor: Actor, name: str, password: str, membership: NewMembership
) -> User:
    """A new user with one membership (audited as ``user.create``)."""
    name = check_name(name)
    try:
        password_hash = passwords.hash_password(password, user_inputs=(name,))
    except passwords.PasswordRuleError as exc:
        raise AccountError(str(exc)) from None
    if find_user(session, name) is not None:
        raise AccountError(f"A user named {name!r} already exists.")
    user = User(id=new_id("usr"), name=name, name_key=name.casefold(), password_hash=password_hash)
    session.add(user)
    session.flush()
    view = _set_membership(session, user, membership)
    audit.record(
        session,
        actor,
        "user.create",
        object_type="user",
        object_id=user.id,
        incident_id=membership.incident_id,
        after={"name": name, **view},
    )
    return user


def _set_membership(session: Session, user: User, membership: NewMembership) -> dict[str, str]:
    role = _role(membership.role)
    organization = _organization(session, membership.organization)
    if role is Role.REPORTER and organization is None:
        raise AccountError("A reporter publishes for an organisation: name it (--organization).")
    scope = _scope(session, membership.incident_id)
    row = session.scalars(
        select(Membership).where(Membership.user_id == user.id, Membership.scope == scope)
    ).one_or_none()
    if row is None:
        row = Membership(id=new_id("mem"), user_id=user.id, scope=scope, role=role.value)
        session.add(row)
    row.role = role.value
    row.organization_id = organization.id if organization else None
    session.flush()
    return {
        "role": role.value,
        "organization": organization.name if organization else "",
        "scope": scope,
    }


def _role_in(user: User, scope: str) -> dict[str, str]:
    """The role ``user`` holds where ``scope`` is: its own membership there, else the one
    for every incident (what a change there replaces), with the membership's scope."""
    by_scope = {m.scope: m.role for m in user.memberships}
    for where in (scope, EVERY_INCIDENT):
        if where in by_scope:
            return {"role": by_scope[where], "scope": where}
    return {"role": "", "scope": ""}


def set_membership(session: Session, actor: Actor, user: User, membership: NewMembership) -> None:
    """Give ``user`` a role (in one incident or every incident), audited as ``member.set``
    with the role it replaces. Roles are read at each request, so a change in one
    incident applies at once and ends no session; a change for every incident also ends
    the user's sessions (a server-wide role is the one to start afresh from)."""
    before = _role_in(user, _scope(session, membership.incident_id))
    view = _set_membership(session, user, membership)
    if membership.incident_id is None:
        end_sessions(session, user.id)
    audit.record(
        session,
        actor,
        "member.set",
        object_type="user",
        object_id=user.id,
        incident_id=membership.incident_id,
        before=before,
        after=view,
    )


def remove_membership(session: Session, actor: Actor, user: User, incident_id: str | None) -> None:
    scope = EVERY_INCIDENT if incident_id is None else incident_id
    row = session.scalars(
        select(Membership).where(Membership.user_id == user.id, Membership.scope == scope)
    ).one_or_none()
    if row is None:
        raise NotFoundError(f"{user.name} has no membership for {scope!r}.")
    session.delete(row)
    if incident_id is None:
        end_sessions(session, user.id)
    audit.record(
        session,
        actor,
        "member.remove",
        object_type="user",
        object_id=user.id,
        incident_id=incident_id,
        before={"role": row.role, "scope": scope},
    )


def set_password(
    session: Session, actor: Actor, user: User, password: str, *, keep_session: str | None = None
) -> None:
    """A new password; every session of the user ends but ``keep_session`` (the hash of
    the session that changed it). Audited as ``user.password`` (no secret in the row)."""
    try:
        user.password_hash = passwords.hash_password(password, user_inputs=(user.name,))
    except passwords.PasswordRuleError as exc:
        raise AccountError(str(exc)) from None
    user.password_changed_at = utc_now()
    end_sessions(session, user.id, keep=keep_session)
    audit.record(session, actor, "user.password", object_type="user", object_id=user.id)


def set_disabled(session: Session, actor: Actor, user: User, disabled: bool) -> None:
    user.disabled = disabled
    if disabled:
        end_sessions(session, user.id)
    audit.record(
        session,
        actor,
        "user.disable" if disabled else "user.enable",
        object_type="user",
        object_id=user.id,
        before={"disabled": not disabled},
        after={"disabled": disabled},
    )


def end_sessions(session: Session, user_id: str, *, keep: str | None = None) -> None:
    query = delete(WebSession).where(WebSession.user_id == user_id)
    if keep is not None:
        query = query.where(WebSession.id_hash != keep)
    session.execute(query)


def authenticate(session: Session, name: str, password: str) -> User | None:
    """The enabled user with this name and password, or None; an unknown name costs the
    same Argon2 check as a wrong password."""
    user = find_user(session, name) if USER_NAME.fullmatch(name.strip()) else None
    if user is None:
        passwords.verify_password(passwords.dummy_hash(), password)
        return None
    if not passwords.verify_password(user.password_hash, password) or user.disabled:
        return None
    if passwords.needs_rehash(user.password_hash):
        user.password_hash = passwords.hasher().hash(password)
    return user


def list_users(session: Session) -> list[User]:
    return list(
        session.scalars(
            select(User)
            .order_by(User.name_key)
            .options(selectinload(User.memberships).selectinload(Membership.organization))
        )
    )
