"""Shared pieces of the web layer: the session dependency and the template renderer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from importlib import resources
from typing import Any

from fastapi import Depends, Request
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, pass_context, select_autoescape
from jinja2.runtime import Context
from markupsafe import Markup
from sqlalchemy.orm import Session
from starlette.responses import Response

from trace_app import glossary, i18n
from trace_app.domain.audit import require_audit
from trace_app.domain.time_zones import format_day, format_exact, format_friendly, zone_label
from trace_app.store.db import Database
from trace_app.store.models import Report
from trace_app.web import language as web_language
from trace_app.web.evidence_view import (
    check_outcome,
    cue_segments,
    is_decided,
    result_headline,
    result_summary,
)

ReportContextProvider = Callable[[Session, Report], dict[str, Any]]
"""Adds names to the report view's template context (e.g. the investigation's saved
result for ``investigation/panel.html``). Must not call a model or write anything."""

TEMPLATES_DIR = resources.files("trace_app.web").joinpath("templates")


def make_templates() -> Jinja2Templates:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
    )
    # _(), gettext, ngettext, pgettext and {% trans %} translate into the request's
    # language (trace_app.i18n's context variable, set by web.language); "newstyle":
    # named placeholders, _("%(n)s people", n=3), escaped like any other value
    env.policies["ext.i18n.trimmed"] = True
    env.install_gettext_callables(  # type: ignore[attr-defined]
        i18n.gettext, i18n.ngettext, newstyle=True, pgettext=i18n.pgettext
    )
    env.filters["number"] = format_number_filter
    # words that arrive as values (a table's sentence, a reason): translated when the
    # catalogue has them, escaped like any value (never _(), which marks its result safe)
    env.globals["tr"] = i18n.gettext
    env.globals["current_language"] = i18n.current_language
    env.globals["text_direction"] = i18n.direction
    env.globals["back_arrow"] = back_arrow
    env.globals["next_arrow"] = next_arrow
    env.filters["when"] = format_when
    env.filters["day"] = format_day_filter
    env.filters["status_badge"] = status_badge
    env.globals["cue_segments"] = cue_segments
    env.globals["result_headline"] = result_headline
    env.globals["result_summary"] = result_summary
    env.globals["is_decided"] = is_decided
    env.globals["check_outcome"] = check_outcome
    env.globals["words"] = glossary
    env.globals["who_can"] = glossary.who_can
    env.globals["zone_label"] = zone_label
    return Jinja2Templates(env=env)


def back_arrow() -> str:
    """ "Back" points to where a line starts: left, and right in Arabic (the arrows are not
    mirrored by the bidi algorithm, unlike brackets)."""
    return "→" if i18n.direction(i18n.current_language()) == "rtl" else "←"


def next_arrow() -> str:
    return "←" if i18n.direction(i18n.current_language()) == "rtl" else "→"


def page_time_zone(context: Context) -> str | None:
    """The zone a page shows its times in: ``time_zone`` when the page names one, else its
    incident's, else none (UTC)."""
    named = context.get("time_zone")
    if isinstance(named, str):
        return named
    incident = context.get("incident")
    zone = getattr(incident, "time_zone", None)
    return zone if isinstance(zone, str) else None


@pass_context
def format_when(
    context: Context, value: datetime | str, zone: str | None = None, seconds: bool = False
) -> Markup:
    """The one way pages show a time: as a reader says it, in the page's incident's zone
    (``2 Dec, 14:05 (Kathmandu)``), with the exact time (to the second, with its offset
    and in UTC) in ``title`` for a mouse, in ``datetime`` for programs, and in a
    ``when-exact`` part that "Show exact times" unfolds on any screen, touch included
    (``static/words.css``; ADR 0130). A filter, cheaper than a macro on long lists;
    ``zone`` overrides the page's. ``seconds`` is kept for callers: the exact part always
    has them."""
    del seconds
    if isinstance(value, str):  # a saved citation's ISO time
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return Markup("{}").format(value)
    zone = zone if zone is not None else page_time_zone(context)
    exact = format_exact(value, zone)
    lang = i18n.current_language()
    friendly = (
        format_friendly(value, zone)
        if lang == i18n.DEFAULT_LANGUAGE
        else i18n.format_datetime(value, lang, zone)
    )
    return Markup(
        '<time class="when" datetime="{}" title="{}">{}<span class="when-exact"> ({})</span></time>'
    ).format(value.isoformat(), exact, friendly, exact)


@pass_context  # never folded into the compiled template: the language is the request's
def format_number_filter(_context: Context, value: int | float) -> str:
    """A number in the page's language: ``20,000`` (en), ``20.000`` (es)."""
    return i18n.format_number(value, i18n.current_language())


@pass_context
def format_day_filter(context: Context, value: datetime, zone: str | None = None) -> str:
    """The day alone in the page's zone: ``2 Dec``."""
    zone = zone if zone is not None else page_time_zone(context)
    lang = i18n.current_language()
    if lang == i18n.DEFAULT_LANGUAGE:
        return format_day(value, zone)
    return i18n.format_date(value, lang, zone)


# A shape beside each claim or alert status word, so that badges differ by more than colour.
STATUS_BADGE_ICONS = {
    "missing": "!",
    "seen": "◉",
    "admitted": "+",
    "safe": "✓",
    "deceased": "†",
    "closed": "×",
    "open": "!",  # an open alert
}


@pass_context  # never folded into the compiled template: the words are the request's language
def status_badge(_context: Context, status: str) -> Markup:
    """A claim status or an alert state in plain words (the glossary's phrase), with its
    shape; the code stays in the class and in ``data-code``."""
    icon = STATUS_BADGE_ICONS.get(status, "•")
    table = "alert_state" if status in glossary.ALERT_STATE else "claim_status"
    return Markup(
        '<span class="status status-{0}" data-code="{0}"><span class="badge-icon" '
        'aria-hidden="true">{1}</span>{2}</span>'
    ).format(status, icon, glossary.phrase(table, status))


DEMO_ONLY_MESSAGE = i18n.N_(
    "Reset demo is switched off: this server is not a demo server. "
    "Start one with `trace demo` or `trace serve --demo`."
)


def is_demo(request: Request) -> bool:
    """A demo server seeds the demo and offers Reset demo; a deployment does neither."""
    return bool(getattr(request.app.state.settings, "demo", False))


def database(request: Request) -> Database:
    db = request.app.state.db
    assert isinstance(db, Database)
    return db


def _unit_of_work(request: Request) -> Iterator[Session]:
    """The request's session, its unit of work: committed when the route returns, rolled
    back on any error (before the error handler answers). Like every session a route opens
    (:func:`open_session`), it refuses to commit a change without its audit row
    (:func:`trace_app.domain.audit.require_audit`). A domain function that commits itself
    (``publish_and_commit``) leaves it nothing to do."""
    with open_session(request) as session:  # an error leaves the block: closed, rolled back
        yield session
        session.commit()


# ``session: Session = UNIT_OF_WORK`` in a route's signature. Scoped to the route function,
# so the commit happens before the response is sent (a failed commit is the answer).
UNIT_OF_WORK: Any = Depends(_unit_of_work, scope="function")


def open_session(request: Request) -> Session:
    """A new session for a route's own use (``with open_session(request) as session``),
    marked so that a change cannot be committed without its audit row."""
    return require_audit(database(request).sessions())


def render(
    request: Request, template: str, context: dict[str, Any], status_code: int = 200
) -> Response:
    templates: Jinja2Templates = request.app.state.templates
    remembered = web_language.account_language(request)
    if remembered is not None:
        i18n.set_language(remembered)
    lang = i18n.current_language()
    base = {
        "lang": lang,
        "dir": i18n.direction(lang),
        "language_links": web_language.language_links(request),
        "csrf_token": getattr(request.state, "csrf_token", ""),
        "demo_mode": is_demo(request),
        # the signed-in principal (trace_app.web.auth), for the "signed in as" line and nav
        "principal": getattr(request.state, "principal", None),
    }
    base.update(context)
    response = templates.TemplateResponse(request, template, base, status_code=status_code)
    if remembered is not None:  # the account's choice, kept by this browser from now on
        response.headers.append(
            "set-cookie", web_language.cookie_header(remembered, request.url.scheme == "https")
        )
    return response
