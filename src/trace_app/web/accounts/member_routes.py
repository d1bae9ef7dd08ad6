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

The Members page (``/incidents/{id}/members``) does the same by form, through the same
rules (:func:`_grant`, :func:`_remove`): a refused value is shown beside its field.

Users themselves are made by an admin at the server (``trace user create``). Every change
is audited (``member.set``, ``member.remove``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote, urlencode

from fastapi import Request
from fastapi.responses import RedirectResponse
from pydantic import ValidationError
from sqlalchemy import or_, select
from sqlalchemy.orm import Session, selectinload
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app.accounts import users
from trace_app.accounts.permissions import Permission, Role, may_grant
from trace_app.accounts.principal import Principal
from trace_app.domain import organizations, queries
from trace_app.domain.errors import RefusedError, TraceError
from trace_app.store.account_models import EVERY_INCIDENT, Membership, User
from trace_app.web.accounts.schemas import MemberIn, MemberList, MemberOut, RemoveIn, UserName
from trace_app.web.deps import UNIT_OF_WORK, open_session, render
from trace_app.web.errors import COMMON_RESPONSES, ErrorOut, ValidationErrorOut, plain
from trace_app.web.failures import refusal_of
from trace_app.web.gate import Access, gated_router, in_incident
from trace_app.web.params import IncidentId

router = gated_router(prefix="/api", tags=["members"], responses=COMMON_RESPONSES)
page_router = gated_router(include_in_schema=False)

FORM_FIELD = "form_field"


@contextmanager
def _field(name: str) -> Iterator[None]:
    """A Trace error raised inside is marked with the form field it is about (the API
    answers it unchanged; the Members page shows it beside that field)."""
    try:
        yield
    except TraceError as exc:
        if getattr(exc, FORM_FIELD, None) is None:
            setattr(exc, FORM_FIELD, name)
        raise


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
    return _grant(session, access, incident_id, user_name, data)


def _grant(
    session: Session, access: Access, incident_id: str, user_name: str, data: MemberIn
) -> MemberOut:
    """The one way a role in an incident is given, by the API and by the Members page."""
    principal = access.principal
    with _field("role"):
        if not may_grant(_granter_role(principal, incident_id), data.role):
            raise RefusedError(
                f"You can give roles up to your own, not {data.role.value}.",
                permission=Permission.MEMBERS_WRITE.value,
                incident_id=incident_id,
            )
    with _field("user"):
        user = users.get_user(session, user_name)
        _may_change(principal, incident_id, user)
    with _field("organization"):
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
    _remove(session, access, incident_id, user_name)
    return _members(session, incident_id)


def _remove(session: Session, access: Access, incident_id: str, user_name: str) -> None:
    user = users.get_user(session, user_name)
    _may_change(access.principal, incident_id, user)
    users.remove_membership(session, access.actor, user, incident_id)
    session.flush()


# --- the Members page -----------------------------------------------------------------


def _members_page(
    request: Request,
    session: Session,
    access: Access,
    values: dict[str, str] | None = None,
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    incident_id = access.incident
    incident = queries.get_incident(session, incident_id)
    own = _granter_role(access.principal, incident_id)
    params = request.query_params
    return render(
        request,
        "members.html",
        {
            "incident": incident,
            "nav_incident": incident,
            "members": _members(session, incident_id).items,
            "roles": [role for role in Role if may_grant(own, role)],
            "own_role": own,
            "organizations": organizations.working_in(session, incident_id),
            "values": values or {"user": "", "role": Role.VIEWER.value, "organization": ""},
            "errors": errors or {},
            "created": params.get("created") == "1",
            "changed": params.get("changed", "")[:80],
            "removed": params.get("removed", "")[:80],
        },
        status_code,
    )


@page_router.get("/incidents/{incident_id}/members")
def members_page(
    request: Request,
    incident_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.MEMBERS_WRITE),
) -> Response:
    """Who works on the incident, and a form to give someone a role in it."""
    return _members_page(request, session, access)


@page_router.post("/incidents/{incident_id}/members")
async def member_form(
    request: Request, incident_id: str, access: Access = in_incident(Permission.MEMBERS_WRITE)
) -> Response:
    submitted = await request.form()
    values = {
        name: value[:200] if isinstance(value := submitted.get(name, ""), str) else ""
        for name in ("user", "role", "organization")
    }
    return await run_in_threadpool(_member_from_form, request, access, values)


def _form_errors(exc: ValidationError) -> dict[str, str]:
    found: dict[str, str] = {}
    for error in exc.errors(include_url=False, include_input=False):
        name = str(error["loc"][0]) if error["loc"] else "user"
        label = {"role": "Role", "organization": "Organisation"}.get(name, name)
        found.setdefault(name, f"{label} {plain(error).rstrip('.')}.")
    return found


def _member_from_form(request: Request, access: Access, values: dict[str, str]) -> Response:
    user_name = values["user"].strip()
    organization = values["organization"].strip() or None
    with open_session(request) as session:
        try:
            data = MemberIn.model_validate({"role": values["role"], "organization": organization})
        except ValidationError as exc:
            return _members_page(request, session, access, values, _form_errors(exc), 422)
        if not users.USER_NAME.fullmatch(user_name):
            errors = {"user": "Type the name the person signs in with, e.g. asha.rai."}
            return _members_page(request, session, access, values, errors, 422)
        _, refusal = refusal_of(lambda: _grant(session, access, access.incident, user_name, data))
        if refusal is None:
            session.commit()
    if refusal is not None:  # shown beside its field; the session above closed unsaved
        if isinstance(refusal, RefusedError):  # still on the audit trail (rate-limited)
            request.app.state.refusal_audit.record(request, refusal)
        errors = {getattr(refusal, FORM_FIELD, None) or "user": str(refusal)}
        with open_session(request) as session:
            return _members_page(request, session, access, values, errors, refusal.http_status)
    query = urlencode({"changed": user_name})
    return RedirectResponse(
        f"/incidents/{quote(access.incident)}/members?{query}#members", status_code=303
    )


@page_router.post("/incidents/{incident_id}/members/{user_name}/remove")
def member_remove_form(
    request: Request,
    incident_id: str,
    user_name: UserName,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.MEMBERS_WRITE),
) -> Response:
    """Ends the user's membership of this incident (refused as the API refuses it)."""
    _remove(session, access, access.incident, user_name)
    query = urlencode({"removed": user_name})
    return RedirectResponse(
        f"/incidents/{quote(access.incident)}/members?{query}#members", status_code=303
    )
