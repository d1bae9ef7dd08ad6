"""Who works on an incident: coordinators give users a role in it (``members:write``).

- ``GET /api/incidents/{id}/members``: the incident's members, and the members of every
  incident (who also work on it).
- ``PUT /api/incidents/{id}/members/{user}`` ``{"role", "organization"}``: a role in this
  incident, for an organisation of this incident (a new name creates it; one that works
  only in other incidents is refused, :mod:`trace_app.domain.organizations`). Up to the
  granter's own role, never above it, and never for a user who holds a role above the
  granter's anywhere. Roles are read at each request, so the change applies at the
  user's next one; their sessions, in this and other incidents, go on.
- ``POST /api/incidents/{id}/members/{user}/remove`` ``{}``: the incident's membership
  goes (a membership for every incident is changed at the command line only), by the
  same rule.

Users themselves are made by an admin at the server (``trace user create``). Every change
is audited (``member.set``, ``member.remove``).
"""

from __future__ import annotations

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, selectinload

from trace_app.accounts import users
from trace_app.accounts.permissions import Permission, Role, may_grant
from trace_app.accounts.principal import Principal
from trace_app.domain import organizations
from trace_app.domain.errors import RefusedError
from trace_app.store.account_models import EVERY_INCIDENT, Membership, User
from trace_app.web.accounts.schemas import MemberIn, MemberList, MemberOut, RemoveIn, UserName
from trace_app.web.deps import UNIT_OF_WORK
from trace_app.web.errors import COMMON_RESPONSES, ErrorOut, ValidationErrorOut
from trace_app.web.gate import Access, gated_router, in_incident
from trace_app.web.params import IncidentId

router = gated_router(prefix="/api", tags=["members"], responses=COMMON_RESPONSES)


def _granter_role(principal: Principal, incident_id: str) -> Role:
    membership = principal.membership_for(incident_id)
    assert membership is not None  # the gate passed
    return membership.role


def _may_change(principal: Principal, incident_id: str, user: User) -> None:
    """Refused when any of ``user``'s roles, in any incident or in every incident, is
    above the granter's role here: a coordinator of one incident cannot demote (or end
    the work of) an admin or another incident's coordinator."""
    granter = _granter_role(principal, incident_id)
    if any(not may_grant(granter, m.role) for m in user.memberships):
        raise RefusedError(
            f"{user.name} holds a role above yours; an admin can change it.",
            permission=Permission.MEMBERS_WRITE.value,
            incident_id=incident_id,
        )


@router.get(
    "/incidents/{incident_id}/members",
    response_model=MemberList,
    responses={404: {"model": ErrorOut, "description": "No such incident"}},
)
def list_members(
    incident_id: IncidentId,
    session: Session = UNIT_OF_WORK,
    _: Access = in_incident(Permission.MEMBERS_WRITE),
) -> MemberList:
    """The incident's own members, then the members of every incident, by name."""
    return _members(session, incident_id)


def _members(session: Session, incident_id: str) -> MemberList:
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
        403: {
            "model": ErrorOut,
            "description": "Not a coordinator here, a role above yours, or an organisation "
            "of other incidents",
        },
        404: {"model": ErrorOut, "description": "No such incident or user"},
        422: {"model": ValidationErrorOut, "description": "A reporter without an organisation"},
    },
)
def set_member(
    incident_id: IncidentId,
    user_name: UserName,
    data: MemberIn,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.MEMBERS_WRITE),
) -> MemberOut:
    """Give a user a role in this incident (audited; it applies at their next request)."""
    principal = access.principal
    if not may_grant(_granter_role(principal, incident_id), data.role):
        raise RefusedError(
            f"You can give roles up to your own, not {data.role.value}.",
            permission=Permission.MEMBERS_WRITE.value,
            incident_id=incident_id,
        )
    user = users.get_user(session, user_name)
    _may_change(principal, incident_id, user)
    if data.organization and not principal.sees_every_incident():
        if not organizations.may_act_in(session, data.organization, incident_id):
            raise RefusedError(
                organizations.refusal(data.organization),
                permission=Permission.MEMBERS_WRITE.value,
                incident_id=incident_id,
            )
    membership = users.NewMembership(data.role.value, data.organization, incident_id)
    users.set_membership(session, access.actor, user, membership)
    organization = " ".join(data.organization.split()) if data.organization else None
    return MemberOut(user=user.name, role=data.role, organization=organization, scope=incident_id)


@router.post(
    "/incidents/{incident_id}/members/{user_name}/remove",
    response_model=MemberList,
    responses={
        403: {"model": ErrorOut, "description": "Not a coordinator here, or a role above yours"},
        404: {"model": ErrorOut, "description": "No such incident, user or membership"},
    },
)
def remove_member(
    incident_id: IncidentId,
    user_name: UserName,
    _body: RemoveIn,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.MEMBERS_WRITE),
) -> MemberList:
    """Remove a user's membership of this incident (audited; it applies at their next
    request). Answers the incident's members as they are now."""
    user = users.get_user(session, user_name)
    _may_change(access.principal, incident_id, user)
    users.remove_membership(session, access.actor, user, incident_id)
    session.flush()
    return _members(session, incident_id)
