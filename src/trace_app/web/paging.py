"""The one rule for a page number typed into a page's address (``?page=``), and the
message for a page cursor (``?after=``) Trace did not write."""

from __future__ import annotations

from fastapi import Request

from trace_app.domain.errors import InvalidInputError
from trace_app.i18n import gettext
from trace_app.web.failures import failing_as


class BadPageError(InvalidInputError):
    """A page number out of range, or a page cursor Trace did not write (422)."""

    code = "bad_page"


MAX_PAGE_NUMBER = 1_000_000
BAD_PAGE_MESSAGE = f"Page must be a whole number from 1 to {MAX_PAGE_NUMBER:,}."
# a page's ``after`` cursor that Trace did not write (ADR 0086)
BAD_CURSOR_MESSAGE = (
    "This page link is not valid (its after cursor was cut short or changed): "
    "go back to the first page and use its Next link."
)


def page_number(raw: str) -> int | None:
    """The page asked for (blank is the first), or None when it is not a whole number from
    1 to ``MAX_PAGE_NUMBER``: the caller answers 422 with ``BAD_PAGE_MESSAGE``."""
    try:
        number = int(raw.strip() or "1")
    except ValueError:
        return None
    return number if 1 <= number <= MAX_PAGE_NUMBER else None


def page_number_or_refuse(raw: str) -> int:
    """:func:`page_number`, raising :class:`BadPageError` for a bad one."""
    number = page_number(raw)
    if number is None:
        raise BadPageError(BAD_PAGE_MESSAGE)
    return number


def requested_page(request: Request) -> int:
    """The page a page's address asks for (``?page=``); a bad one is answered 422 on an
    error page headed "No such page"."""
    failing_as(request, gettext("No such page"))
    return page_number_or_refuse(request.query_params.get("page", "1"))
