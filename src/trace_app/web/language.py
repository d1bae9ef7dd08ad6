"""The language of a request (issue 42, ADR 0170).

:class:`LanguageMiddleware` (pure ASGI) picks it before a route runs, by
:func:`trace_app.i18n.negotiate`: ``?lang=xx`` on any page, then the ``trace_lang``
cookie, then ``Accept-Language``, else English, and makes it the current language
(a context variable, so pages, flash messages and the API's error messages follow it).
``?lang=xx`` also sets the cookie (a year), and, once signed in, the account's preference
(``users.language``, with its audit row ``account.language``). A signed-in request with no
cookie and no ``?lang`` takes the account's preference (:func:`account_language`, read by
:func:`trace_app.web.deps.render`), and the page sets the cookie from it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from trace_app import i18n
from trace_app.domain import audit
from trace_app.store.account_models import User

COOKIE_MAX_AGE = 365 * 24 * 3600
STATE_LANGUAGE = "language"
STATE_FROM = "language_from"  # "query", "cookie", "header" or "default"


def cookie_header(lang: str, secure: bool) -> str:
    parts = [f"{i18n.COOKIE}={lang}", "Path=/", f"Max-Age={COOKIE_MAX_AGE}"]
    parts += ["HttpOnly", "SameSite=Lax"]  # no script reads it
    if secure:
        parts.append("Secure")
    return "; ".join(parts)


def _source(query: str | None, cookie: str | None, header: str | None) -> str:
    if i18n.supported(query):
        return "query"
    if i18n.supported(cookie):
        return "cookie"
    if any(i18n.supported(name) for name in i18n.parse_accept_language(header)):
        return "header"
    return "default"


class LanguageMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        query = request.query_params.get(i18n.QUERY)
        cookie = request.cookies.get(i18n.COOKIE)
        header = request.headers.get("accept-language")
        lang = i18n.negotiate(header, cookie, None, query)
        source = _source(query, cookie, header)
        state = scope.setdefault("state", {})
        state[STATE_LANGUAGE] = lang
        state[STATE_FROM] = source
        chosen = lang if source == "query" and lang != i18n.supported(cookie) else None
        secure = request.url.scheme == "https"

        async def send_with_cookie(message: Message) -> None:
            if chosen and message["type"] == "http.response.start":
                MutableHeaders(scope=message).append("set-cookie", cookie_header(chosen, secure))
            await send(message)

        i18n.set_language(lang)
        await self.app(scope, receive, send_with_cookie if chosen else send)
        if source == "query":
            principal = state.get("principal")
            if principal is not None and principal.actor.kind == "user":
                await run_in_threadpool(save_preference, scope["app"], principal, lang)


def save_preference(app: Any, principal: Any, lang: str) -> None:
    """The signed-in account's language becomes ``lang`` (an audit row when it changes)."""
    with app.state.db.sessions() as session:
        user = session.get(User, principal.user_id)
        if user is None or user.language == lang:
            return
        before = user.language
        user.language = lang
        audit.record(
            session,
            principal.actor,
            "account.language",
            object_type="user",
            object_id=user.id,
            before={"language": before},
            after={"language": lang},
        )
        session.commit()


def prefer_language(request: Request, lang: str | None) -> None:
    """A page for someone Trace knows the language of (an enquirer's link from a mail):
    ``lang`` becomes the page's language unless the visitor chose one (``?lang``, the
    cookie)."""
    if getattr(request.state, STATE_FROM, None) in ("query", "cookie"):
        return
    chosen = i18n.supported(lang)
    if chosen:
        i18n.set_language(chosen)


def account_language(request: Request) -> str | None:
    """For a signed-in request that named no language itself (no ``?lang``, no cookie):
    the account's preference, or None."""
    if getattr(request.state, STATE_FROM, None) in ("query", "cookie"):
        return None
    principal = getattr(request.state, "principal", None)
    if principal is None or principal.actor.kind != "user":
        return None
    with request.app.state.db.sessions() as session:
        user = session.get(User, principal.user_id)
        return i18n.supported(user.language) if user is not None else None


def language_links(request: Request) -> list[dict[str, str]]:
    """The language menu: each language by its own name, linking to this page in it."""
    params = [(k, v) for k, v in request.query_params.multi_items() if k != i18n.QUERY]
    links = []
    for code, name in i18n.LANGUAGES.items():
        query = urlencode([*params, (i18n.QUERY, code)])
        links.append({"code": code, "name": name, "href": f"{request.url.path}?{query}"})
    return links
