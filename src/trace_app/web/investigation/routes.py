"""Web and JSON routes of the investigation, plus the report view's panel context.

- ``POST /api/reports/{report_id}/investigate`` ``{"passphrase": "..."}`` runs the six
  steps. The JSON body is required (``{}`` without a passphrase); the passphrase may be
  omitted or empty: a saved run for this content is returned as CACHED or REPLAYED, and a
  refused check (UNAVAILABLE, BUDGET_LIMIT) carries the report's most recent saved run in
  ``latest_saved_run``.
- ``GET /api/reports/{report_id}/investigation`` shows the saved result, or 404. It never
  calls a model.
- Both answers carry ``review``: the person's current decision on the report's result
  (``trace_app.web.reviews``; who, when, its code and plain words), or null, and
  ``headline``: the card's first words ("Needs review", "Reviewed: relay confirmed").
- ``GET /api/ledger`` shows the ledger's counts and cap (no secrets).
- ``POST /reports/{report_id}/investigate`` is the panel's form. With htmx it answers with
  the result card. Without JavaScript it answers 303 (Post/Redirect/Get) to
  ``/reports/{report_id}?check=<token>``, whose page shows that check's result, so a
  reload sends nothing. The results behind the tokens are kept in this process for 15
  minutes (at most 512); on another replica, or later, the page shows the saved result.

The panel says what each press did, in words beside the button and to screen readers
(``#check-outcome``, :func:`trace_app.web.evidence_view.check_outcome`): a new check, a
saved result shown again with nothing sent, a wrong passphrase (also on a report whose
saved result is shown), a refusal. Only members who may run a check see the form; others
read one line saying who can. A refused htmx check is answered with that line (200, so
htmx shows it) and audited like any refusal.

The passphrase is read from the request body, compared in constant time inside the
service, and never stored, logged or rendered: the panel's field is always empty.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from markupsafe import Markup
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from modelgate.errors import LedgerUnavailable
from trace_app import glossary
from trace_app.accounts.permissions import Permission
from trace_app.domain import audit, report_queries
from trace_app.domain.errors import InvalidInputError, NotFoundError, RefusedError
from trace_app.domain.time_zones import format_day
from trace_app.i18n import gettext
from trace_app.investigation import evidence_store
from trace_app.investigation.model_settings import MAX_OUTPUT_TOKENS, ModelSettings
from trace_app.investigation.outcome import InvestigationResult
from trace_app.investigation.service import InvestigationService, build_service
from trace_app.investigation.vocabulary import MODE_MEANINGS, STATUS_MEANINGS
from trace_app.store.models import Report
from trace_app.web.auth import authorize
from trace_app.web.deps import open_session, render
from trace_app.web.errors import COMMON_RESPONSES, ErrorOut, validation_body
from trace_app.web.evidence_view import check_outcome, result_headline, result_summary
from trace_app.web.failures import failing_as, refusal_of
from trace_app.web.gate import Access, gated_router, needs, on_record
from trace_app.web.params import ReportId
from trace_app.web.reviews.cards import current_review, review_card_context, review_json
from trace_app.web.reviews.schemas import ReviewOut
from trace_app.web.throttle import PassphraseThrottle, Refusal

router = gated_router(tags=["investigation"])

NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "No such report (or no saved run)"}
}

MAX_PASSPHRASE_CHARACTERS = 512


class InvestigateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    passphrase: str | None = Field(default=None, max_length=MAX_PASSPHRASE_CHARACTERS)


def service(request: Request) -> InvestigationService:
    svc = request.app.state.investigation
    assert isinstance(svc, InvestigationService)
    return svc


@router.post(
    "/api/reports/{report_id}/investigate",
    responses={
        **COMMON_RESPONSES,
        **NOT_FOUND,
        403: {"model": ErrorOut},
        429: {"model": ErrorOut, "description": "Too many wrong passphrases; see Retry-After"},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": InvestigateIn.model_json_schema()}},
        }
    },
)
async def investigate_api(
    request: Request,
    report_id: ReportId,
    access: Access = on_record(Permission.READ, Report, "report_id"),
) -> JSONResponse:
    """Without a passphrase: the saved result (any member may see it). With one: a live
    check, which needs ``checks:run`` (a reviewer) in the report's incident; the passphrase
    stays the second gate. The body is required JSON (``{}`` when there is no passphrase):
    like every API POST it must be ``application/json``, and an empty or invalid body is a
    422, never a silent default. The body is validated here so that a 422 never echoes what
    was sent (it may hold the passphrase)."""
    try:
        body = InvestigateIn.model_validate_json(await request.body())
    except ValidationError as exc:
        errors = [
            {**error, "loc": ("body", *error["loc"])}
            for error in exc.errors(include_url=False, include_input=False)
        ]
        return JSONResponse(validation_body(errors), status_code=422)
    if not body.passphrase:  # a saved result or a refusal: one thread hop, no model
        answer = await run_in_threadpool(_without_passphrase, request, report_id)
        return JSONResponse(_with_review(*answer))
    _may_check(access, body.passphrase)
    refusal = _throttled(request, body.passphrase)
    if refusal is not None:
        return JSONResponse(
            {"detail": refusal.message, "code": "too_many_attempts"},
            status_code=429,
            headers={"Retry-After": str(refusal.retry_after_s)},
        )
    result = await service(request).investigate(report_id, body.passphrase)
    await run_in_threadpool(_audit_check, request, access, report_id, body.passphrase, result)
    review = await run_in_threadpool(review_json, request, report_id)
    return JSONResponse(_with_review(result, review))


@router.get("/api/reports/{report_id}/investigation", responses={**COMMON_RESPONSES, **NOT_FOUND})
def saved_investigation_api(
    request: Request,
    report_id: ReportId,
    _: Access = on_record(Permission.READ, Report, "report_id"),
) -> JSONResponse:
    result = service(request).saved_result(report_id)
    if result is None:
        raise NotFoundError(f"No saved investigation for report {report_id!r}.")
    return JSONResponse(_with_review(result, review_json(request, report_id)))


@router.get(
    "/api/ledger",
    responses={
        **COMMON_RESPONSES,
        503: {"model": ErrorOut, "description": "The ledger cannot be read"},
    },
)
def ledger_api(request: Request, _: Access = needs(Permission.READ)) -> JSONResponse:
    svc = service(request)
    try:
        snapshot = svc.ledger_snapshot()
    except LedgerUnavailable:
        return JSONResponse(
            {
                "detail": "The request ledger is empty, unreadable or invalid; live checks "
                "are refused until an operator looks at it.",
                "code": "ledger_unavailable",
            },
            status_code=503,
        )
    return JSONResponse(
        {
            **snapshot.as_dict(),
            "remaining": snapshot.remaining,
            "model": svc.model.model,
            "max_output_tokens": MAX_OUTPUT_TOKENS,
            "live_enabled": svc.model.live_enabled,
        }
    )


@router.post("/reports/{report_id}/investigate", include_in_schema=False)
async def investigate_form(
    request: Request,
    report_id: str,
    passphrase: str = Form(default=""),
    access: Access = on_record(Permission.READ, Report, "report_id"),
) -> Response:
    failing_as(request, gettext("Invalid request"))
    if len(passphrase) > MAX_PASSPHRASE_CHARACTERS:  # checked here: a 422 never echoes it
        raise InvalidInputError(
            f"The passphrase is longer than {MAX_PASSPHRASE_CHARACTERS} characters."
        )
    htmx = request.headers.get("hx-request") == "true"
    _, refused = refusal_of(lambda: _may_check(access, passphrase))
    if isinstance(refused, RefusedError):  # shown beside the button it came from (ADR 0120)
        if not htmx:
            raise refused
        return await run_in_threadpool(_refused_fragment, request, refused)
    refusal = _throttled(request, passphrase)
    if refusal is not None:
        headers = {"Retry-After": str(refusal.retry_after_s)}
        if htmx:
            fragment = Markup('<p class="error" role="alert" id="throttled">{}</p>')
            return HTMLResponse(fragment.format(refusal.message), 429, headers=headers)
        page = render(
            request,
            "error.html",
            {"title": gettext("Try again later"), "message": refusal.message},
            429,
        )
        page.headers.update(headers)
        return page
    result = await service(request).investigate(report_id, passphrase or None)
    await run_in_threadpool(_audit_check, request, access, report_id, passphrase, result)
    svc = service(request)
    done = CheckDone(
        result,
        typed=bool(passphrase),
        passphrase_ok=bool(passphrase) and svc.model.passphrase_matches(passphrase),
    )
    if htmx:
        reviewed = await run_in_threadpool(_review_names, request, report_id)
        reviewed["may_review"] = access.principal.can(Permission.REVIEWS_WRITE, access.incident)
        card = render(request, "investigation/result.html", {**card_context(result), **reviewed})
        cleared = render(request, "investigation/passphrase_input.html", {"oob": True})
        said = _outcome_fragment(outcome_words(request, done, reviewed["time_zone"]), oob=True)
        return HTMLResponse(
            bytes(card.body) + bytes(cleared.body) + str(said).encode(), headers=_no_store()
        )
    token = recent_checks(request).put(report_id, done)
    return RedirectResponse(
        f"/reports/{quote(report_id)}?check={token}#investigate-heading", status_code=303
    )


class RecentChecks:
    """Results of no-JS checks, for the page the form redirects to (Post/Redirect/Get).

    In memory, per process, bounded in number and age; a token is random and names one
    report's result. Nothing secret is kept (a result never holds the passphrase).
    """

    def __init__(self, size: int = 512, ttl_s: float = 900.0) -> None:
        self.size = size
        self.ttl_s = ttl_s
        self._items: OrderedDict[str, tuple[str, CheckDone, float]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, report_id: str, result: CheckDone) -> str:
        token = secrets.token_urlsafe(16)
        with self._lock:
            self._items[token] = (report_id, result, time.monotonic() + self.ttl_s)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return token

    def get(self, token: str, report_id: str) -> CheckDone | None:
        with self._lock:
            found = self._items.get(token)
        if found is None or found[0] != report_id or found[2] < time.monotonic():
            return None
        return found[1]


def recent_checks(request: Request) -> RecentChecks:
    checks = request.app.state.recent_checks
    assert isinstance(checks, RecentChecks)
    return checks


def _checked_now(request: Request, report: Report) -> dict[str, Any]:
    """The report view after a no-JS check: that check's result, read from memory."""
    token = request.query_params.get("check", "")
    done = recent_checks(request).get(token, report.id) if token else None
    may = {
        "may_check": _may(request, report, Permission.CHECKS_RUN),
        "may_review": _may(request, report, Permission.REVIEWS_WRITE),
    }
    if done is None:
        return may
    said = outcome_words(request, done, report.incident.time_zone)
    return {**card_context(done.result), "check_outcome_words": said, **may}


def _may(request: Request, report: Report, permission: Permission) -> bool:
    """Whether the signed-in member may do this on the report (run a new check, decide on
    its result): the panel shows the control only then, and otherwise who can."""
    principal = getattr(request.state, "principal", None)
    return bool(principal is not None and principal.can(permission, report.incident_id))


def _with_review(result: InvestigationResult, review: dict[str, Any] | None) -> dict[str, Any]:
    """The result's JSON with the person's current decision on the report's saved result,
    also inside ``latest_saved_run`` (which is exactly what the saved-result GET shows)."""
    data = result.as_json()
    data["review"] = review
    data["headline"] = _headline(result, review)
    data["summary"] = _summary(result, review)
    if data["latest_saved_run"] is not None and result.latest_saved is not None:
        data["latest_saved_run"]["review"] = review
        data["latest_saved_run"]["headline"] = _headline(result.latest_saved, review)
        data["latest_saved_run"]["summary"] = _summary(result.latest_saved, review)
    return data


def _headline(result: InvestigationResult, review: dict[str, Any] | None) -> str:
    """The card's headline in the API: "Needs review", or "Reviewed: relay confirmed"."""
    shown = ReviewOut.model_validate(review) if review is not None else None
    return result_headline(result, shown)


def _summary(result: InvestigationResult, review: dict[str, Any] | None) -> str:
    """The result in plain words for people (the one reason that applies, or decided)."""
    shown = ReviewOut.model_validate(review) if review is not None else None
    return result_summary(result, shown)


def _review_names(request: Request, report_id: str) -> dict[str, Any]:
    """The card's names for the person's decision, and the incident's time zone."""
    with open_session(request) as session:
        report = report_queries.get_report(session, report_id)
        return {**review_card_context(session, report), "time_zone": report.incident.time_zone}


@dataclass(frozen=True, slots=True)
class CheckDone:
    """One press of Investigate: its result, whether a passphrase was typed and whether it
    matched (never the passphrase itself)."""

    result: InvestigationResult
    typed: bool = False
    passphrase_ok: bool = False
    allowed: bool = True


def outcome_words(request: Request, done: CheckDone, zone: str | None) -> str:
    """What the press did, in one sentence for the panel (``#check-outcome``)."""
    shown = done.result.latest_saved or done.result
    day = format_day(shown.run_at, zone) if shown.run_at is not None else ""
    return check_outcome(
        done.result,
        typed=done.typed,
        passphrase_ok=done.passphrase_ok,
        live_enabled=service(request).model.live_enabled,
        allowed=done.allowed,
        day=day,
    )


def _outcome_fragment(words: str, *, oob: bool) -> Markup:
    """The panel's live region with ``words``; out of band (its content only, so that
    screen readers announce the change) after an htmx check."""
    if oob:
        return Markup(
            '<p id="check-outcome" class="check-outcome" aria-live="polite" '
            'hx-swap-oob="innerHTML">{}</p>'
        ).format(words)
    return Markup('<p id="check-outcome" class="check-outcome" aria-live="polite">{}</p>').format(
        words
    )


def _refused_fragment(request: Request, exc: RefusedError) -> Response:
    """A refused htmx check, said beside the button in words (and audited, as the one
    error handler would): answered 200 so that htmx shows it."""
    request.app.state.refusal_audit.record(request, exc)
    words = glossary.CHECK_OUTCOME["not_allowed"]
    body = _outcome_fragment(words, oob=True) + Markup(
        '<p class="error" role="alert" id="check-refused">{}</p>'
    ).format(words)
    return HTMLResponse(str(body), headers=_no_store())


def _may_check(access: Access, passphrase: str | None) -> None:
    """Reading a saved result needs ``read`` in the report's incident (the route's gate); a
    typed passphrase (a live check) also needs ``checks:run`` there."""
    if passphrase:
        authorize(access.principal, Permission.CHECKS_RUN, access.incident)


def _without_passphrase(
    request: Request, report_id: str
) -> tuple[InvestigationResult, dict[str, Any] | None]:
    """No passphrase: the saved result (or the refusal carrying it) and the person's
    decision, read in one go. Nothing is audited: it is a read."""
    with open_session(request) as session:
        result = service(request).before_any_call(report_id, None, session=session)
        assert isinstance(result, InvestigationResult)  # no passphrase never reaches a model
        review = current_review(session, report_id)
    return result, review.model_dump(mode="json") if review is not None else None


def _audit_check(
    request: Request,
    access: Access,
    report_id: str,
    passphrase: str | None,
    result: InvestigationResult,
) -> None:
    """A live check (a typed passphrase) is audited with its outcome (never the passphrase);
    showing a saved result is a read and is not."""
    if not passphrase:
        return
    with open_session(request) as session:
        audit.record(
            session,
            access.actor,
            "investigation.check",
            object_type="report",
            object_id=report_id,
            incident_id=access.incident,
            after={"status": result.status.value, "mode": getattr(result.mode, "value", None)},
        )
        session.commit()


def _no_store() -> dict[str, str]:
    return {"Cache-Control": "no-store"}


def _throttled(request: Request, passphrase: str | None) -> Refusal | None:
    """A refusal when wrong passphrases from this client (or overall) ran out; counts a
    typed passphrase that does not match. Nothing typed, or live checks off: never."""
    svc = service(request)
    if not passphrase or not svc.model.live_enabled:
        return None
    throttle: PassphraseThrottle = request.app.state.passphrase_throttle
    address = request.client.host if request.client is not None else "unknown"
    refusal = throttle.refusal(address)
    if refusal is None and not svc.model.passphrase_matches(passphrase):
        throttle.wrong(address)
    return refusal


def card_context(result: InvestigationResult | None) -> dict[str, Any]:
    return {
        "investigation": result,
        "status_meanings": STATUS_MEANINGS,
        "mode_meanings": MODE_MEANINGS,
    }


def panel_context(session: Session, report: Report) -> dict[str, Any]:
    """The report view's panel: the saved result, if any. Reads only; never calls a model."""
    run = evidence_store.latest_run_for_report(session, report.id)
    saved = evidence_store.result_from_run(run) if run is not None else None
    return {
        **card_context(saved),
        **review_card_context(session, report),
        "investigation_report_id": report.id,
    }


def setup(app: FastAPI, model: ModelSettings | None = None) -> None:
    """Called by the app factory: build the service with ``model`` (default: read from the
    environment) and register the panel context."""
    health = app.state.model_health
    app.state.investigation = build_service(
        app.state.db, app.state.settings, model=model, model_health=health
    )

    def panel_with_model_state(session: Session, report: Report) -> dict[str, Any]:
        notice = health() if health is not None else None
        return {**panel_context(session, report), "model_notice": notice}

    app.state.report_context_providers.append(panel_with_model_state)
    app.state.recent_checks = RecentChecks()
    app.state.report_request_providers.append(_checked_now)
