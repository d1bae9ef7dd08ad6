"""Signing in and out, the account page, the API's description, and the health check.

- ``GET /login``, ``POST /login``: the only page (with ``/static`` and ``/healthz``) that
  answers without a session. Every failure gives the same words, whether or not the
  account exists; failures are throttled per account name and per client address
  (``limits``; 429 with ``Retry-After``). Success starts a new server-side session (a new
  random id: no fixation) and sends the browser where it wanted to go.
- ``POST /logout`` deletes the session row; ``/account`` changes the password, which ends
  the user's other sessions.
- ``GET /api/me``: who the request is made as. ``/openapi.json`` and ``/docs`` (Swagger
  UI served from its package) for signed-in users. The audit trail is
  :mod:`trace_app.web.accounts.audit_routes`.
"""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import JSONResponse, RedirectResponse
from sqlalchemy import select
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app.accounts import sessions as web_sessions
from trace_app.accounts import users
from trace_app.accounts.permissions import Permission
from trace_app.accounts.principal import Principal
from trace_app.domain import audit
from trace_app.domain.audit import Actor
from trace_app.store.models import Incident
from trace_app.web.accounts.login_throttle import LoginThrottle
from trace_app.web.accounts.schemas import MeOut
from trace_app.web.auth import PUBLIC, client_address, settings_of, timeouts
from trace_app.web.deps import open_session, render
from trace_app.web.errors import COMMON_RESPONSES, ErrorOut
from trace_app.web.failures import refusal_of
from trace_app.web.gate import SIGNED_IN, Access, gated_router, needs

router = gated_router(include_in_schema=False)
api_router = gated_router(prefix="/api", tags=["accounts"], responses=COMMON_RESPONSES)

LOGIN_FAILED = "Wrong name or password, or the account is switched off."


MAX_FIELD = 1024


def _safe_next(target: str) -> str:
    """Only a path on this server (no scheme, no host, no ``//``)."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def _login_page(
    request: Request, *, message: str = "", next_path: str = "/", status_code: int = 200
) -> Response:
    with open_session(request) as session:
        no_accounts = users.count_users(session) == 0
    demo_names = getattr(request.app.state, "demo_account_names", ())
    return render(
        request,
        "login.html",
        {
            "message": message,
            "next_path": next_path,
            "no_accounts": no_accounts,
            "demo_names": demo_names,
            "signed_out": request.query_params.get("signed_out") == "1",
        },
        status_code,
    )


@router.get("/login")
def login_page(request: Request, _: None = PUBLIC) -> Response:
    return _login_page(request, next_path=_safe_next(request.query_params.get("next", "/")))


@router.post("/login")
async def login(request: Request, _: None = PUBLIC) -> Response:
    form = await request.form()
    values = {k: form.get(k, "") for k in ("name", "password", "next")}
    name, password, target = (v if isinstance(v, str) else "" for v in values.values())
    return await run_in_threadpool(
        _login, request, name[:MAX_FIELD], password[:MAX_FIELD], _safe_next(target)
    )


def _login(request: Request, name: str, password: str, next_path: str) -> Response:
    throttle: LoginThrottle = request.app.state.login_throttle
    address = client_address(request)
    key = name.strip().casefold()[:80]
    wait = throttle.wait_s(key, address)
    if wait is not None:
        page = _login_page(
            request,
            message=f"Too many failed sign-ins. Try again in {wait} seconds.",
            next_path=next_path,
            status_code=429,
        )
        page.headers["Retry-After"] = str(wait)
        return page
    settings = settings_of(request)
    with open_session(request) as session:
        user = users.authenticate(session, name, password)
        if user is None:
            throttle.failed(key, address)
            shown = key if users.USER_NAME.fullmatch(key) else ""
            audit.record(
                session,
                Actor.anonymous(address),
                "login",
                object_type="user",
                object_id=shown,
                outcome="failed",
            )
            session.commit()
            return _login_page(request, message=LOGIN_FAILED, next_path=next_path, status_code=401)
        actor = Actor(kind="user", id=user.id, name=user.name, client=address)
        cookie = web_sessions.start(session, user.id, timeouts(settings))
        audit.record(session, actor, "login", object_type="user", object_id=user.id)
        session.commit()
    response = RedirectResponse(next_path, status_code=303)
    set_session_cookie(request, response, cookie)
    return response


def set_session_cookie(request: Request, response: Response, value: str) -> None:
    """HttpOnly, SameSite=Lax, Path=/; ``Secure`` when the request came over HTTPS (the
    ASGI scheme: TLS at uvicorn, or ``X-Forwarded-Proto`` from a trusted proxy), or always
    with ``TRACE_COOKIE_SECURE=always``."""
    secure = settings_of(request).cookie_secure == "always" or request.url.scheme == "https"
    response.set_cookie(
        web_sessions.COOKIE, value, httponly=True, samesite="lax", secure=secure, path="/"
    )


@router.post("/logout")
def logout(request: Request, access: Access = SIGNED_IN) -> Response:
    principal = access.principal
    cookie = request.cookies.get(web_sessions.COOKIE, "")
    with open_session(request) as session:
        web_sessions.end(session, cookie)
        audit.record(
            session, principal.actor, "logout", object_type="user", object_id=principal.user_id
        )
        session.commit()
    response = RedirectResponse("/login?signed_out=1", status_code=303)
    response.delete_cookie(web_sessions.COOKIE, path="/")
    return response


@router.get("/account")
def account_page(request: Request, access: Access = SIGNED_IN) -> Response:
    """Who you are, your memberships (incidents by name) and the password form."""
    ids = sorted(access.principal.incident_ids())
    with open_session(request) as session:
        rows = session.execute(select(Incident.id, Incident.name).where(Incident.id.in_(ids)))
        names = {row[0]: row[1] for row in rows}
    done = request.query_params.get("changed") == "1"
    return render(request, "account.html", {"done": done, "incident_names": names})


@router.post("/account/password")
async def change_password(request: Request, access: Access = SIGNED_IN) -> Response:
    form = await request.form()
    fields = {k: form.get(k, "") for k in ("current", "new", "again")}
    current, new, again = (v[:MAX_FIELD] if isinstance(v, str) else "" for v in fields.values())
    return await run_in_threadpool(_change_password, request, access.principal, current, new, again)


def _change_password(
    request: Request, principal: Principal, current: str, new: str, again: str
) -> Response:
    """The current password is checked like a sign-in: throttled per account and address
    (the login throttle's limits), and each wrong one is audited (``user.password``,
    outcome ``failed``)."""

    def refuse(message: str, status: int) -> Response:
        return render(request, "account.html", {"message": message}, status)

    if principal.token_id is not None:
        return refuse("A token cannot change a password.", 403)
    if new != again:
        return refuse("The two new passwords differ.", 422)
    throttle: LoginThrottle = request.app.state.login_throttle
    address = client_address(request)
    key = principal.user_name.casefold()
    wait = throttle.wait_s(key, address)
    if wait is not None:
        page = refuse(f"Too many wrong passwords. Try again in {wait} seconds.", 429)
        page.headers["Retry-After"] = str(wait)
        return page
    keep = web_sessions.id_hash(request.cookies.get(web_sessions.COOKIE, ""))
    with open_session(request) as session:
        user = users.authenticate(session, principal.user_name, current)
        if user is None or user.id != principal.user_id:
            throttle.failed(key, address)
            audit.record(
                session,
                principal.actor,
                "user.password",
                object_type="user",
                object_id=principal.user_id,
                outcome="failed",
                note="the current password was wrong",
            )
            session.commit()
            return refuse("The current password is wrong.", 422)
        _, refusal = refusal_of(
            lambda: users.set_password(session, principal.actor, user, new, keep_session=keep)
        )
        if refusal is not None:  # shown on the form; the session closes unsaved
            return refuse(str(refusal), refusal.http_status)
        session.commit()
    return RedirectResponse("/account?changed=1", status_code=303)


@api_router.get("/me", response_model=MeOut, responses={401: {"model": ErrorOut}})
def me(access: Access = SIGNED_IN) -> MeOut:
    """Who this request is made as: the user, their memberships, a token's scopes."""
    principal = access.principal
    return MeOut(
        user=principal.user_name,
        via="token" if principal.token_id else "session",
        description=principal.description,
        memberships=[
            {"scope": m.scope, "role": m.role.value, "organization": m.organization_name}
            for m in principal.memberships
        ],
        scopes=sorted(s.value for s in principal.scopes) if principal.scopes is not None else None,
    )


@router.get("/openapi.json")
def openapi_schema(request: Request, _: Access = needs(Permission.READ)) -> JSONResponse:
    """The API's OpenAPI description, for signed-in users and tokens only."""
    return JSONResponse(request.app.openapi())


@router.get("/docs")
def api_docs(request: Request, _: Access = needs(Permission.READ)) -> Response:
    """Swagger UI over /openapi.json, served from this server (the ``swagger-ui-bundle``
    package, ``/docs/assets/``): no CDN, no inline script, the app's own CSP."""
    return render(request, "api_docs.html", {})


@router.get("/healthz")
def health(_: None = PUBLIC) -> JSONResponse:
    """For load balancers: answers without a session and says nothing about the data."""
    return JSONResponse({"status": "ok"})
