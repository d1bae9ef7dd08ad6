"""The one check for a date and time that comes from outside: a form, the API, a PFIF
document, a shelter list (CSV) or the command line.

A checked value is **timezone-aware** and lies between :data:`EARLIEST_DATE` and
:data:`LATEST_DATE` in UTC. Python's own dates run from the year 1 to 9999; the checked
range keeps a year inside each end, so that converting a checked value to any offset
(at most a day) and the few minutes or days Trace's rules add to a time (the clock skew
a report may have, a demo's offsets) can never overflow. A text such as
``0001-01-01T00:00:00+14:00`` or ``9999-12-31T23:59:59-14:00`` is a valid ISO 8601 time
whose UTC conversion falls outside Python's range (:class:`OverflowError`); here it is a
:class:`DateError` with ``code = "date_out_of_range"``, never an ``OverflowError``.

Every refusal raises :class:`DateError` (an :class:`~trace_app.domain.errors.
InvalidInputError`, so also a :class:`ValueError`), whose ``code`` says which:
``invalid_date`` (not a date, or no time zone where one is needed) or
``date_out_of_range``; ``http_status`` is 422 for both. ``str(error)`` is one sentence
fit for a user, quoting at most 40 characters of what was given.

Callers with stricter rules keep them on top of this one (a report's time lies between
1900 and a few minutes from now: :class:`trace_app.domain.publish.ReportContent`).
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo

from trace_app.domain.errors import InvalidInputError

EARLIEST_DATE = datetime(2, 1, 1, tzinfo=UTC)
LATEST_DATE = datetime(9998, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
DATE_EXAMPLE = "2026-07-15T07:30:00Z"
# ISO 8601 times are short; a longer text is not one (and is never parsed).
MAX_DATE_CHARACTERS = 64
INVALID_DATE = "invalid_date"
DATE_OUT_OF_RANGE = "date_out_of_range"


class DateError(InvalidInputError):
    """A date and time Trace refuses: ``code`` is ``invalid_date`` or
    ``date_out_of_range``; ``http_status`` 422."""

    code = INVALID_DATE
    http_status = 422

    def __init__(self, message: str, *, code: str = INVALID_DATE) -> None:
        super().__init__(message)
        self.code = code


def _shown(given: str | datetime) -> str:
    text = given if isinstance(given, str) else given.isoformat()
    return repr(text.strip()[:40])


def _out_of_range(given: str | datetime) -> DateError:
    return DateError(
        f"{_shown(given)} is outside the dates Trace can store "
        f"(the years {EARLIEST_DATE.year} to {LATEST_DATE.year}, in UTC).",
        code=DATE_OUT_OF_RANGE,
    )


def check_datetime(
    value: datetime, *, naive_zone: tzinfo | None = None, given: str = ""
) -> datetime:
    """``value`` as an aware UTC datetime within :data:`EARLIEST_DATE` ..
    :data:`LATEST_DATE`.

    A naive value (no offset) is read in ``naive_zone`` (PFIF: UTC; the publish form:
    the incident's zone, :func:`trace_app.domain.time_zones.zone_of`; a wall-clock time
    the zone skips or repeats takes ``fold=0``); without one it is refused. ``given`` is
    the text the value was read from, quoted in the message. Raises :class:`DateError`.
    """
    shown = given or value
    if value.utcoffset() is None:
        if naive_zone is None:
            raise DateError(
                f"{_shown(shown)} has no time zone: add Z (UTC) or an offset such as +05:45."
            )
        value = value.replace(tzinfo=naive_zone)
    try:
        in_utc = value.astimezone(UTC)
    except (OverflowError, ValueError):
        raise _out_of_range(shown) from None
    if not EARLIEST_DATE <= in_utc <= LATEST_DATE:
        raise _out_of_range(shown)
    return in_utc


def parse_datetime(text: str, *, naive_zone: tzinfo | None = None) -> datetime:
    """An ISO 8601 date and time (``2026-07-15T07:30:00Z``, ``2026-07-15T13:15+05:45``;
    a date alone is its midnight) as an aware UTC datetime checked by
    :func:`check_datetime` (``naive_zone`` as there). Raises :class:`DateError`."""
    stripped = text.strip()
    if not stripped or len(stripped) > MAX_DATE_CHARACTERS:
        raise DateError(f"{_shown(text)} is not a date such as {DATE_EXAMPLE}.")
    try:
        value = datetime.fromisoformat(stripped)
    except ValueError:
        raise DateError(f"{_shown(text)} is not a date such as {DATE_EXAMPLE}.") from None
    return check_datetime(value, naive_zone=naive_zone, given=stripped)
