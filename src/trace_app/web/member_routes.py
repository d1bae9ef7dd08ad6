"""Who works on an incident: coordinators give users a role in it (``members:write``).

- ``GET /api/incidents/{id}/members``: the incident's members, and the members of every
  incident (who also work on it).
- ``PUT /api/incidents/{id}/members/{user}`` ``{"role", "organization"}``: a role in this
  incident, for an organisation (a new name creates it). Up to the granter's own role,
  never above it. The user's sessions end, so the role applies at their next sign-in.
- ``POST /api/incidents/{id}/members/{user}/remove`` ``{}``: the incident's membership
  goes (a membership for every incident is changed at the command line only).

Users themselves are made by an admin at the server (``trace user create``). Every change
is audited (``member.set``, ``member.remove``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import or_, select
from sqlalchemy.orm import Session, selectinload

from trace_app.accounts import users
from trace_app.accounts.permissions import Permission, Role, may_grant
from trace_app.accounts.principal import Principal
from trace_app.domain.errors import InvalidInputError, NotFoundError
from trace_app.domain.queries import get_incident
from trace_app.domain.text import SourceNameText
from trace_app.store.account_models import EVERY_INCIDENT, Membership, User
from trace_app.web.api import IncidentId
from trace_app.web.auth import Refused, authorize, needs
from trace_app.web.deps import get_session
from trace_app.web.errors import (
    COMMON_RESPONSES,
    ErrorOut,
    ValidationErrorOut,
    trace_error_response,
)

router = APIRouter(prefix="/api", tags=["members"], responses=COMMON_RESPONSES)

UserName = Annotated[str, Path(max_length=80, pattern=users.USER_NAME.pattern)]


class MemberIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Role
    organization: SourceNameText | None = Field(
        default=None, description="The organisation they act for (a reporter needs one)."
    )


class RemoveIn(BaseModel):
    """Removing takes an empty object."""

    model_config = ConfigDict(extra="forbid")


class MemberOut(BaseModel):
    user: str
    role: Role
    organization: str | None
    scope: str = Field(description="This incident's id, or '*' for every incident.")


class MemberList(BaseModel):
    items: list[MemberOut]


def _granter_role(principal: Principal, incident_id: str) -> Role:
    membership = principal.membership_for(incident_id)
    assert membership is not None  # authorize() passed
    return membership.role


def _may_change(principal: Principal, incident_id: str, user: User) -> None:
    """Refused when ``user``'s membership of this incident is above the granter's role."""
    held = next((m for m in user.memberships if m.scope == incident_id), None)
    if held is not None and not may_grant(_granter_role(principal, incident_id), held.role):
        raise Refused(f"{user.name}'s role here is above yours.")


@router.get(
    "/incidents/{incident_id}/members",
    response_model=MemberList,
    responses={404: {"model": ErrorOut, "description": "No such incident"}},
)
def list_members(
    incident_id: IncidentId,
    session: Session = Depends(get_session),
    principal: Principal = needs(Permission.MEMBERS_WRITE),
) -> MemberList | JSONResponse:
    """The incident's own members, then the members of every incident, by name."""
    authorize(principal, Permission.MEMBERS_WRITE, incident_id)
    try:
        get_incident(session, incident_id)
    except NotFoundError as exc:
        return trace_error_response(404, exc)
    rows = session.scalars(
        select(Membership)
        .where(or_(Membership.scope == incident_id, Membership.scope == EVERY_INCIDENT))
        .options(selectinload(Membership.user), selectinload(Membership.organization))
    ).all()
    items = [
        MemberOut(
            user=m.user.name,
            role=Role(m.role),
            organization=m.organization.name if m.organization else None,
            scope=m.scope,
        )
        for m in sorted(rows, key=lambda m: (m.scope == EVERY_INCIDENT, m.user.name_key))
    ]
    return MemberList(items=items)


@router.put(
    "/incidents/{incident_id}/members/{user_name}",
    response_model=MemberOut,
    responses={
        403: {"model": ErrorOut, "description": "Not a coordinator here, or a role above yours"},
        404: {"model": ErrorOut, "description": "No such incident or user"},
        422: {"model": ValidationErrorOut, "description": "A reporter without an organisation"},
    },
)
def set_member(
    incident_id: IncidentId,
    user_name: UserName,
    data: MemberIn,
    session: Session = Depends(get_session),
    principal: Principal = needs(Permission.MEMBERS_WRITE),
) -> MemberOut | JSONResponse:
    """Give a user a role in this incident (audited; their sessions end)."""
    authorize(principal, Permission.MEMBERS_WRITE, incident_id)
    if not may_grant(_granter_role(principal, incident_id), data.role):
        raise Refused(f"You can give roles up to your own, not {data.role.value}.")
    try:
        get_incident(session, incident_id)
        user = users.get_user(session, user_name)
        _may_change(principal, incident_id, user)
        membership = users.NewMembership(data.role.value, data.organization, incident_id)
        users.set_membership(session, principal.actor, user, membership)
        session.commit()
    except NotFoundError as exc:
        session.rollback()
        return trace_error_response(404, exc)
    except InvalidInputError as exc:
        session.rollback()
        return trace_error_response(422, exc)
    organization = " ".join(data.organization.split()) if data.organization else None
    return MemberOut(user=user.name, role=data.role, organization=organization, scope=incident_id)


@router.post(
    "/incidents/{incident_id}/members/{user_name}/remove",
    response_model=MemberList,
    responses={
        403: {"model": ErrorOut, "description": "Not a coordinator here"},
        404: {"model": ErrorOut, "description": "No such incident, user or membership"},
    },
)
def remove_member(
    incident_id: IncidentId,
    user_name: UserName,
    _body: RemoveIn,
    session: Session = Depends(get_session),
    principal: Principal = needs(Permission.MEMBERS_WRITE),
) -> MemberList | JSONResponse:
    """Remove a user's membership of this incident (audited; their sessions end). Answers
    the incident's members as they are now."""
    authorize(principal, Permission.MEMBERS_WRITE, incident_id)
    try:
        user = users.get_user(session, user_name)
        _may_change(principal, incident_id, user)
        users.remove_membership(session, principal.actor, user, incident_id)
        session.commit()
    except NotFoundError as exc:
        session.rollback()
        return trace_error_response(404, exc)
    return list_members(incident_id, session, principal)
