"""Who is asking, and may they: the web side of :mod:`trace_app.accounts`.

Routes name what they need through :mod:`trace_app.web.gate` (``anywhere``,
``in_incident``, ``on_record``, ``signed_in``) or ``PUBLIC`` (the login page and the
health check only); a test built from the app's own route list fails for a route that
names none. This module holds what the gate uses: the principal behind a request, the
object-level check (:func:`authorize`, ASVS 8.2.2), and the 401 and 403 answers.

A browser sends the session cookie (``trace_session``); a machine client sends
``Authorization: Bearer trc_...``. Without either, the API answers 401 with
``WWW-Authenticate: Bearer``, and a page sends the browser to ``/login``. A principal
without the permission gets 403. Both bodies are the API's usual ``{"detail", "code"}``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import quote

from fastapi import Depends, Request
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.security import APIKeyCookie, HTTPBearer
from sqlalchemy.orm import Session
from starlette.responses import Response

from trace_app import glossary
from trace_app.accounts import identify
from trace_app.accounts import sessions as web_sessions
from trace_app.accounts.permissions import Permission
from trace_app.accounts.principal import Principal
from trace_app.domain import queries
from trace_app.domain.errors import NotSignedInError, RefusedError
from trace_app.domain.text import name_key
from trace_app.i18n import gettext
from trace_app.settings import TraceSettings
from trace_app.store.models import Alert, Person, Report
from trace_app.web.deps import database, render

bearer_scheme = HTTPBearer(
    auto_error=False,
    scheme_name="bearerToken",
    description="An API token (`trace token create`), sent as `Authorization: Bearer trc_...`.",
)
cookie_scheme = APIKeyCookie(
    name=web_sessions.COOKIE,
    auto_error=False,
    scheme_name="sessionCookie",
    description="The session cookie a browser gets at /login.",
)

PUBLIC_MARK = "public"
SIGNED_IN_MARK = "signed-in"


# The access errors are the domain's (one error tree); these names are the web's.
NotSignedIn = NotSignedInError
Refused = RefusedError


def settings_of(request: Request) -> TraceSettings:
    settings = request.app.state.settings
    assert isinstance(settings, TraceSettings)
    return settings


def timeouts(settings: TraceSettings) -> web_sessions.Timeouts:
    return web_sessions.Timeouts(
        idle=timedelta(minutes=settings.session_idle_minutes),
        absolute=timedelta(hours=settings.session_max_hours),
    )


def client_address(request: Request) -> str:
    """The client's address: the connection's peer, or what a trusted proxy forwarded
    (``TRACE_TRUSTED_PROXIES``; without one, ``X-Forwarded-For`` changes nothing)."""
    return request.client.host if request.client else ""


def _resolve(
    request: Request, session: Session, bearer: str | None, cookie: str | None
) -> Principal | None:
    client = client_address(request)
    if bearer is not None:
        return identify.by_token(session, bearer, client)
    if cookie:
        return identify.by_session(session, cookie, timeouts(settings_of(request)), client)
    return None


def _bearer_token(request: Request) -> str | None:
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not credentials.strip():
        return None
    return credentials.strip()


def principal_of(request: Request, session: Session | None = None) -> Principal | None:
    """The principal behind the request's token or session cookie (a token wins), or None.
    Kept on ``request.state.principal`` for the templates' "signed in as" line. Read in
    ``session`` when given (the gate's one short session), else in one of its own."""
    if hasattr(request.state, "principal"):
        cached: Principal | None = request.state.principal
        return cached
    if session is None:
        with database(request).sessions() as own:
            return principal_of(request, own)
    principal = _resolve(
        request, session, _bearer_token(request), request.cookies.get(cookie_scheme.model.name)
    )
    request.state.principal = principal
    return principal


async def _public() -> None:
    return None


def _mark(dependency: Callable[..., Any], mark: str) -> Callable[..., Any]:
    dependency.trace_permission = mark  # type: ignore[attr-defined]
    return dependency


PUBLIC: Any = Depends(_mark(_public, PUBLIC_MARK))


def refusal_message(principal: Principal, permission: Permission) -> str:
    """Why a signed-in principal is refused, in words: who can (the glossary's line); a
    token names the scope it lacks, which its owner chose."""
    if principal.scopes is not None and permission not in principal.scopes:
        return f"This token's scopes do not include {permission.value}."
    return glossary.who_can(permission.value)


def authorize(
    principal: Principal,
    permission: Permission,
    incident_id: str | None,
    *,
    anywhere: bool = False,
) -> None:
    """The object-level check: may ``principal`` do ``permission`` in this incident?
    (``anywhere``: the function-level check, in some incident.)"""
    if anywhere:
        if principal.can_somewhere(permission):
            return
        raise RefusedError(refusal_message(principal, permission), permission=permission.value)
    if principal.can(permission, incident_id):
        return
    if incident_id is None:
        message = f"This needs {permission.value} in every incident, which you do not have."
    elif not principal.may_see(incident_id):
        message = gettext("You are not a member of this incident.")
    else:
        message = refusal_message(principal, permission)
    raise RefusedError(message, permission=permission.value, incident_id=incident_id)


def authorize_record(
    request: Request,
    principal: Principal,
    permission: Permission,
    kind: type[Report | Person | Alert],
    record_id: str,
) -> str:
    """The object-level check for a report, person or alert: looks up its incident in a
    short read of its own (so the caller's write transaction starts clean), then
    :func:`authorize`. Returns the incident id; NotFoundError for an unknown id."""
    with database(request).sessions() as session:
        incident_id = queries.incident_of(session, kind, record_id)
    authorize(principal, permission, incident_id)
    return incident_id


def reporting_organization(principal: Principal, incident_id: str, named: str | None = None) -> str:
    """The organisation a member publishes for in this incident (from the account, never
    from the form). Refused when the membership names none, or when the request names
    another organisation (ASVS 8.2.2: no publishing for someone else)."""
    membership = principal.membership_for(incident_id)
    if membership is None or not membership.organization_name:
        raise Refused("Your account has no organisation to publish for; ask a coordinator.")
    if named is not None and name_key(named) != name_key(membership.organization_name):
        raise Refused(
            f"You publish for {membership.organization_name} only, not for another organisation."
        )
    return membership.organization_name


# --- answers ----------------------------------------------------------------------------


def wants_json(request: Request) -> bool:
    """The API and its description answer JSON; pages answer HTML."""
    return request.url.path.startswith("/api/") or request.url.path == "/openapi.json"


def not_signed_in_response(request: Request) -> Response:
    if wants_json(request):
        return JSONResponse(
            {"detail": gettext(NotSignedInError.MESSAGE), "code": NotSignedInError.code},
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="trace"'},
        )
    if request.method == "GET":
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)
    return render(
        request,
        "error.html",
        {"title": gettext("Sign in first"), "message": NotSignedInError.MESSAGE},
        401,
    )


def refused_response(request: Request, exc: RefusedError) -> Response:
    if wants_json(request):
        return JSONResponse({"detail": exc.message, "code": exc.code}, status_code=403)
    return render(
        request, "error.html", {"title": gettext("Not allowed"), "message": exc.message}, 403
    )
