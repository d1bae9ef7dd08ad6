"""One ASGI middleware for request safety: body size, cross-site requests, headers.

- **Body size**: a body larger than ``max_body_bytes`` (by Content-Length, or counted while
  reading a chunked body) is refused with 413 before the app sees it.
- **Cross-site requests** on POST/PUT/PATCH/DELETE:
  a browser's ``Sec-Fetch-Site: cross-site`` or an ``Origin`` other than the server's own
  is refused (403). ``/api/...`` accepts only ``application/json`` bodies (415 otherwise,
  answered by the route once its gate let the caller through, so that a stranger gets
  401 first; the app never sees such a body): a cross-site page cannot send JSON without
  a CORS preflight, which Trace never grants.
  The one exception is ``POST /api/incidents/{id}/pfif``, which takes ``application/xml``
  (also not sendable cross-site without a preflight) up to ``xml_body_bytes``.
  Every other unsafe request (HTML forms, htmx) must carry the form token in the
  ``csrf_token`` form field or the ``X-CSRF-Token`` header (403 otherwise). Signed in, the
  token is an HMAC of the session cookie (:func:`expected_token`): bound to the session,
  new at each sign-in, and a ``trace_csrf`` value planted before sign-in is worth nothing.
  Before sign-in (the login form) it is the ``trace_csrf`` cookie's random value. The
  Import page's upload (``POST /import``, multipart) is streamed, not buffered: its token
  is checked by the route (:func:`csrf_field_matches`).
- **Headers**: a strict Content-Security-Policy (scripts and styles from this server
  only), ``nosniff``, no framing, same-origin referrers, and ``Cache-Control: no-store``
  on everything but ``/static/`` (pages and API answers hold personal data).
- **Server faults**: an exception that escapes the app is logged with its traceback and a
  short error id, and answered here (so with the same headers) by a 500 whose page or
  JSON body shows only that id.

The token is available to templates as ``request.state.csrf_token``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import re
import secrets
from collections.abc import Iterable
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from trace_app.accounts import sessions as web_sessions

CSRF_COOKIE = "trace_csrf"
SESSION_COOKIE = web_sessions.COOKIE
CSRF_CONTEXT = b"trace form token v1"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Where a refusal that must wait for sign-in is left for the route (a wrong content type).
DEFERRED_REFUSAL = "deferred_refusal"

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "object-src 'none'"
)
STATIC_PREFIX = "/static/"
# The API operations whose body is XML (a PFIF document), and may be larger.
XML_API_PATH = re.compile(r"^/api/incidents/[^/]+/pfif$")
# The Import page's upload (multipart): streamed like the XML body, up to the same limit
# plus room for the form's other fields. Its CSRF token is a form field inside the body,
# so the route checks it (:func:`csrf_field_matches`) before it does anything.
UPLOAD_PAGE_PATH = re.compile(r"^/import$")
UPLOAD_FORM_OVERHEAD = 64 * 1024
# RFC 8058: a mail provider's one-click unsubscribe POST carries no form token and no
# Origin of ours; the link's own token is the credential, and the change is harmless and
# idempotent (trace_app.web.subscriptions.routes).
ONE_CLICK_PATH = re.compile(r"^/subscriptions/unsubscribe/[A-Za-z0-9_-]{1,200}$")

EXPIRED_FORM = "The form has expired or came from another site. Reload the page and try again."

log = logging.getLogger(__name__)


def expected_token(headers: Headers) -> str | None:
    """The form token this request must carry: an HMAC of its session cookie when it has
    one (the session's secret is the key: only its holder can compute it), else the
    ``trace_csrf`` cookie's random value, else None."""
    session = _cookie_value(headers, SESSION_COOKIE)
    if session:
        digest = hmac.new(session.encode(), CSRF_CONTEXT, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")
    return _cookie_value(headers, CSRF_COOKIE)


def csrf_field_matches(cookie_header: str | None, sent: str) -> bool:
    """For a route whose body the middleware streams (the Import page's upload): does the
    form's ``csrf_token`` field match the request's token?"""
    expected = expected_token(Headers({"cookie": cookie_header})) if cookie_header else None
    if not expected or not sent:
        return False
    return _same_token(sent, expected)


def _same_token(sent: str, expected: str) -> bool:
    """Constant-time comparison of bytes: a sent value with any character (a header is
    read as Latin-1, a form as UTF-8) is refused, never a TypeError."""
    return secrets.compare_digest(
        sent.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass")
    )


class _TooLarge(Exception):
    pass


def _cookie_value(headers: Headers, name: str) -> str | None:
    raw = headers.get("cookie")
    if not raw:
        return None
    cookie = SimpleCookie()
    try:
        cookie.load(raw)
    except Exception:
        return None
    morsel = cookie.get(name)
    if morsel is None or not morsel.value:
        return None
    return morsel.value


def _same_origin(scope: Scope, headers: Headers) -> bool:
    site = headers.get("sec-fetch-site")
    if site is not None and site not in {"same-origin", "none"}:
        return False
    origin = headers.get("origin")
    if origin is None:
        return True
    if origin == "null":
        return False
    host = headers.get("host", "")
    return urlsplit(origin).netloc == host


def _form_token(body: bytes) -> str | None:
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True)
    except UnicodeDecodeError:
        return None
    values = fields.get(CSRF_FIELD)
    return values[0] if values else None


class SecurityMiddleware:
    def __init__(self, app: ASGIApp, *, max_body_bytes: int, xml_body_bytes: int = 0) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.xml_body_bytes = max(xml_body_bytes, max_body_bytes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        path: str = scope.get("path", "")
        is_api = path.startswith("/api/")
        is_xml = is_api and XML_API_PATH.match(path) is not None
        is_upload = not is_api and UPLOAD_PAGE_PATH.match(path) is not None
        limit = self.xml_body_bytes if is_xml else self.max_body_bytes
        if is_upload:
            limit = self.xml_body_bytes + UPLOAD_FORM_OVERHEAD
        nonce = _cookie_value(headers, CSRF_COOKIE)
        new_nonce = None if nonce else secrets.token_urlsafe(32)
        cookie_token = expected_token(headers)
        scope.setdefault("state", {})["csrf_token"] = cookie_token or new_nonce
        https = scope.get("scheme") == "https"
        send = self._with_headers(send, path, new_nonce, https)

        declared = headers.get("content-length")
        if declared is not None:
            try:
                too_big = int(declared) > limit
            except ValueError:
                await _refuse(send, 400, "The Content-Length header is not a number.", is_api)
                return
            if too_big:
                await self._refuse_too_large(send, is_api, limit)
                return

        method = scope["method"].upper()
        has_body = method in UNSAFE_METHODS or declared is not None
        has_body = has_body or "transfer-encoding" in headers
        # An XML upload (a PFIF import) is not buffered here: its checks need only the
        # headers, and the route streams it to a temporary file; its size is counted as
        # it passes (413 past the limit).
        streamed = has_body and (is_xml or is_upload)
        body = b""
        if has_body and not streamed:
            try:
                body = await self._read_body(receive, limit)
            except _TooLarge:
                await self._refuse_too_large(send, is_api, limit)
                return

        if method in UNSAFE_METHODS and not ONE_CLICK_PATH.match(path):
            problem = self._cross_site_problem(
                scope, headers, body, is_api, cookie_token, is_xml, is_upload
            )
            if problem is not None and problem[0] == 415:
                # A wrong content type waits for the route's gate, so that a stranger
                # gets 401 first; the app sees no body (trace_app.web.gate.GatedRoute).
                scope["state"][DEFERRED_REFUSAL] = problem[1]
                body, streamed = b"", False
            elif problem is not None:
                status, message = problem
                await _refuse(send, status, message, is_api)
                return

        if streamed:
            receive = _counted(receive, limit)
        elif has_body:
            receive = _replay(body, receive)
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except _TooLarge:
            if not started:
                await self._refuse_too_large(send, is_api, limit)
        except Exception:
            error_id = secrets.token_hex(6)
            log.exception("server error %s on %s %s", error_id, method, path)
            if not started:
                await _server_error(send, error_id, is_api)

    def _cross_site_problem(
        self,
        scope: Scope,
        headers: Headers,
        body: bytes,
        is_api: bool,
        cookie_token: str | None,
        is_xml: bool = False,
        is_upload: bool = False,
    ) -> tuple[int, str] | None:
        if not _same_origin(scope, headers):
            return 403, "Cross-site requests are refused."
        if is_upload:
            # the token is in the streamed body: the route compares it with the cookie
            if cookie_token is None:
                return 403, EXPIRED_FORM
            return None
        if is_api:
            media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if is_xml:
                if media != "application/xml":
                    return 415, "Send the PFIF document as application/xml."
                return None
            if media != "application/json":
                return 415, "Send the request body as application/json."
            return None
        sent = headers.get(CSRF_HEADER)
        media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if sent is None and media == "application/x-www-form-urlencoded":
            sent = _form_token(body)
        if cookie_token is None or sent is None or not _same_token(sent, cookie_token):
            return 403, EXPIRED_FORM
        return None

    async def _read_body(self, receive: Receive, limit: int) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _TooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def _refuse_too_large(self, send: Send, is_api: bool, limit: int) -> None:
        await _refuse(
            send,
            413,
            f"The request is too large: the limit is {limit:,} bytes.",
            is_api,
        )

    def _with_headers(
        self, send: Send, path: str, new_token: str | None, https: bool = False
    ) -> Send:
        policy = CONTENT_SECURITY_POLICY

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                out.setdefault("content-security-policy", policy)
                out.setdefault("x-content-type-options", "nosniff")
                out.setdefault("x-frame-options", "DENY")
                out.setdefault("referrer-policy", "same-origin")
                if not path.startswith(STATIC_PREFIX):
                    out["cache-control"] = "no-store"
                if new_token is not None:
                    out.append(
                        "set-cookie",
                        f"{CSRF_COOKIE}={new_token}; Path=/; HttpOnly; SameSite=Strict"
                        + ("; Secure" if https else ""),
                    )
            await send(message)

        return send_with_headers


def _counted(original: Receive, limit: int) -> Receive:
    """Pass the body through, raising :class:`_TooLarge` once more than ``limit`` bytes came."""
    size = 0

    async def receive() -> Message:
        nonlocal size
        message = await original()
        if message["type"] == "http.request":
            size += len(message.get("body", b""))
            if size > limit:
                raise _TooLarge
        return message

    return receive


def _replay(body: bytes, original: Receive) -> Receive:
    """Hand the buffered body to the app once, then wait on the real connection."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await original()

    return receive


async def _refuse(send: Send, status: int, message: str, as_json: bool) -> None:
    if as_json:
        payload = json.dumps({"detail": message, "code": f"http_{status}"}).encode()
        content_type = b"application/json"
    else:
        payload = _html_error(status, message).encode()
        content_type = b"text/html; charset=utf-8"
    headers: Iterable[tuple[bytes, bytes]] = [
        (b"content-type", content_type),
        (b"content-length", str(len(payload)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": list(headers)})
    await send({"type": "http.response.body", "body": payload})


async def _server_error(send: Send, error_id: str, as_json: bool) -> None:
    message = (
        f"Something went wrong on the server; nothing more was done. The error id is "
        f"{error_id}: give it to the operator, whose log has the details."
    )
    if as_json:
        payload = json.dumps(
            {"detail": message, "code": "server_error", "error_id": error_id}
        ).encode()
        content_type = b"application/json"
    else:
        payload = _html_error(500, message, heading="Server error").encode()
        content_type = b"text/html; charset=utf-8"
    headers = [
        (b"content-type", content_type),
        (b"content-length", str(len(payload)).encode()),
    ]
    await send({"type": "http.response.start", "status": 500, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def _html_error(status: int, message: str, heading: str = "Request refused") -> str:
    # The message is ours (no user text), so no escaping is needed.
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{status} - Trace</title><link rel=stylesheet href=/static/trace.css></head>"
        f'<body><main class="page"><h1>{heading} ({status})</h1><p role=alert>{message}</p>'
        '<p><a href="/">Back to Trace</a></p></main></body></html>'
    )
