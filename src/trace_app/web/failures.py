"""The one exception handler for the domain's error tree (ADR 0120).

A route does not catch Trace's errors: each carries its ``code`` and ``http_status``
(:mod:`trace_app.domain.errors`), and this handler answers them, as ``{"detail",
"code"}`` on the API and as the error page elsewhere. The unit of work
(:func:`trace_app.web.deps.unit_of_work`) has rolled back by then.

- 401 (not signed in): the API adds ``WWW-Authenticate``; a page GET goes to ``/login``.
- 403 (refused): also written to the audit trail as ``access.refused``, at most
  ``TRACE_REFUSAL_AUDIT_LIMIT`` rows per principal (default 10 a minute), so a client
  that keeps trying cannot fill the trail (OWASP ASVS 5.0, 16.3.2).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import Request
from fastapi.responses import JSONResponse
from limits import parse
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app.domain import audit
from trace_app.domain.errors import NotSignedInError, RefusedError, TraceError
from trace_app.i18n import N_, gettext
from trace_app.settings import TraceSettings
from trace_app.web.auth import not_signed_in_response, refused_response, wants_json
from trace_app.web.deps import database, render

log = logging.getLogger(__name__)
E = TypeVar("E", bound=TraceError)

PAGE_TITLES = {
    404: N_("Not found"),
    409: N_("Cannot be done now"),
    413: N_("Too large"),
    415: N_("Not a kind of file Trace takes"),
    422: N_("Not done"),
    429: N_("Try again later"),
}
REQUEST_REFUSED = N_("Request refused")


FAILURE_TITLE = "failure_title"
T = TypeVar("T")


def refusal_of(action: Callable[[], T]) -> tuple[T | None, TraceError | None]:
    """Run ``action`` for a page that shows a refusal beside the form it came from (the
    publish form, the password form, an upload): its result, or the domain's refusal.
    The one place in ``web/`` that catches a domain error; every other refusal goes to
    :func:`trace_error_handler`. The caller's session is left to its unit of work (a
    ``with`` block or ``UNIT_OF_WORK``), which rolls back what the action began."""
    try:
        return action(), None
    except TraceError as exc:
        return None, exc


# More for the API's answer of some errors than ``detail`` and ``code`` (a refused
# import's summary): registered by the feature that knows the shape (:func:`answers_with`).
_DETAILS: dict[type[TraceError], Callable[[Any], dict[str, Any]]] = {}


def answers_with(kind: type[E], details: Callable[[E], dict[str, Any]]) -> None:
    """The API's answer to ``kind`` carries ``details(exc)`` beside detail and code."""
    _DETAILS[kind] = details


def _details(exc: TraceError) -> dict[str, Any]:
    for kind in type(exc).__mro__:
        found = _DETAILS.get(kind)
        if found is not None:
            return found(exc)
    return {}


def failing_as(request: Request, title: str) -> None:
    """The heading of the error page if this page's action is refused ("Alert not
    closed"); a 404 keeps "Not found"."""
    setattr(request.state, FAILURE_TITLE, title)


class RefusalAudit:
    """Writes refused authorisations to the audit trail, rate-limited per principal."""

    def __init__(self, settings: TraceSettings) -> None:
        self.limit = parse(settings.refusal_audit_limit)
        self.limiter = MovingWindowRateLimiter(storage_from_string(settings.rate_limit_storage))

    def record(self, request: Request, exc: RefusedError) -> None:
        principal = getattr(request.state, "principal", None)
        if principal is None:
            return
        if not self.limiter.hit(self.limit, "trace-refused", principal.actor.id):
            return
        try:
            with database(request).sessions() as session:
                audit.record(
                    session,
                    principal.actor,
                    "access.refused",
                    object_type="route",
                    object_id=f"{request.method} {request.url.path}",
                    incident_id=exc.incident_id,
                    outcome="refused",
                    note=exc.permission,
                )
                session.commit()
        except Exception:  # the refusal stands even when its trail row cannot be written
            log.exception("could not write the audit row of a refused request")


async def trace_error_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, TraceError)
    if isinstance(exc, NotSignedInError):
        return not_signed_in_response(request)
    if isinstance(exc, RefusedError):
        refusals: RefusalAudit = request.app.state.refusal_audit
        await run_in_threadpool(refusals.record, request, exc)
        return refused_response(request, exc)
    if wants_json(request):
        # the message in the request's language when the catalogue has it (issue 42);
        # the code stays English
        body = {"detail": gettext(str(exc)), "code": exc.code, **_details(exc)}
        return JSONResponse(body, status_code=exc.http_status)
    title = gettext(PAGE_TITLES.get(exc.http_status, REQUEST_REFUSED))
    if exc.http_status != 404:
        title = getattr(request.state, FAILURE_TITLE, None) or title
    title = getattr(exc, "page_title", None) or title
    return render(request, "error.html", {"title": title, "message": str(exc)}, exc.http_status)
