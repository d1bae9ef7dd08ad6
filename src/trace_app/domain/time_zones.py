"""An incident's time zone: the one place that checks a zone name and turns times
between UTC (what Trace stores and the API returns) and the incident's local time (what
its pages show and what its publish form takes).

A zone is an IANA name (``Asia/Kathmandu``, ``UTC``) that :mod:`zoneinfo` knows; an
incident without one is in ``UTC``. A local time is shown with its offset
(``2015-04-25 14:30 +05:45``), so that a reader never has to know the zone's rules; a
time shown in UTC says ``UTC``.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from trace_app import glossary
from trace_app.domain.errors import InvalidInputError

DEFAULT_TIME_ZONE = "UTC"
MAX_TIME_ZONE_CHARACTERS = 64
TIME_ZONE_EXAMPLE = "Asia/Kathmandu"


@lru_cache(maxsize=256)
def _zone(name: str) -> tzinfo:
    return UTC if name == DEFAULT_TIME_ZONE else ZoneInfo(name)


def check_time_zone(name: str) -> str:
    """``name`` stripped, when it is an IANA zone :mod:`zoneinfo` knows; an empty name is
    ``UTC``. Raises :class:`InvalidInputError` (naming an example) otherwise."""
    text = name.strip() or DEFAULT_TIME_ZONE
    message = (
        f"{text[:80]!r} is not a time zone Trace knows. Use an IANA name such as "
        f"{TIME_ZONE_EXAMPLE!r} or 'UTC'."
    )
    # zoneinfo reads a file named by the key: refuse paths and odd characters first
    if (
        len(text) > MAX_TIME_ZONE_CHARACTERS
        or text.startswith(("/", "."))
        or ".." in text
        or not all(ch.isascii() and (ch.isalnum() or ch in "/_-+") for ch in text)
    ):
        raise InvalidInputError(message)
    try:
        _zone(text)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise InvalidInputError(message) from exc
    return text


def zone_of(name: str | None) -> tzinfo:
    """The zone of a stored name (``UTC`` for none, or a name no longer known)."""
    try:
        return _zone(name or DEFAULT_TIME_ZONE)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return UTC


def _clock(seconds: bool) -> str:
    return "%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M"


def format_local(value: datetime, zone_name: str | None, *, seconds: bool = False) -> str:
    """``value`` (aware) in the zone, with its offset: ``2015-04-25 14:30 +05:45``; in
    UTC: ``2015-04-25 08:45 UTC``."""
    if not zone_name or zone_name == DEFAULT_TIME_ZONE:
        return format_utc(value, seconds=seconds)
    local = value.astimezone(zone_of(zone_name))
    offset = local.strftime("%z")  # +0545
    return f"{local.strftime(_clock(seconds))} {offset[:3]}:{offset[3:]}"


def format_utc(value: datetime, *, seconds: bool = False) -> str:
    return value.astimezone(UTC).strftime(_clock(seconds)) + " UTC"


def local_to_utc(value: datetime, zone_name: str | None) -> datetime:
    """A time typed in the zone (naive: a wall-clock reading) as UTC; an aware time is
    only converted. A wall-clock time the zone skips or repeats takes the first reading
    (``fold=0``), as :mod:`zoneinfo` does. :class:`OverflowError` for a time that falls
    outside the years 1-9999 once in UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=zone_of(zone_name))
    return value.astimezone(UTC)


def utc_to_local_input(value: datetime, zone_name: str | None) -> str:
    """``value`` as a ``datetime-local`` input's value in the zone (``2015-04-25T14:30``)."""
    return value.astimezone(zone_of(zone_name)).strftime("%Y-%m-%dT%H:%M")


def zone_label(zone_name: str | None) -> str:
    """The zone as a reader names it: its city (``Asia/Kathmandu`` -> ``Kathmandu``,
    ``America/Argentina/Buenos_Aires`` -> ``Buenos Aires``), or ``UTC``."""
    if not zone_name or zone_name == DEFAULT_TIME_ZONE:
        return DEFAULT_TIME_ZONE
    return zone_name.rsplit("/", 1)[-1].replace("_", " ")


def _day_parts(local: datetime) -> dict[str, str]:
    return {
        "day": str(local.day),
        "month": glossary.MONTHS[local.month - 1],
        "year": str(local.year),
    }


def format_friendly(value: datetime, zone_name: str | None, *, now: datetime | None = None) -> str:
    """``value`` as a reader says it, in the zone: ``2 Dec, 14:05 (Kathmandu)``; a year
    other than the current one is named (``25 Apr 2015, 14:30 (Kathmandu)``). The exact
    time, with its offset and in UTC, is :func:`format_exact`."""
    zone = zone_of(zone_name)
    local = value.astimezone(zone)
    this_year = (now or datetime.now(UTC)).astimezone(zone).year
    pattern = glossary.WHEN_THIS_YEAR if local.year == this_year else glossary.WHEN_OTHER_YEAR
    return pattern.format(
        **_day_parts(local), clock=local.strftime("%H:%M"), zone=zone_label(zone_name)
    )


def format_day(value: datetime, zone_name: str | None, *, now: datetime | None = None) -> str:
    """The day alone, in the zone: ``2 Dec`` (``25 Apr 2015`` in another year)."""
    zone = zone_of(zone_name)
    local = value.astimezone(zone)
    this_year = (now or datetime.now(UTC)).astimezone(zone).year
    pattern = glossary.DAY_THIS_YEAR if local.year == this_year else glossary.DAY_OTHER_YEAR
    return pattern.format(**_day_parts(local))


def format_exact(value: datetime, zone_name: str | None) -> str:
    """The exact time, to the second, with its offset and in UTC:
    ``2015-04-25 14:30:00 +05:45 · 2015-04-25 08:45:00 UTC`` (UTC once for UTC)."""
    local = format_local(value, zone_name, seconds=True)
    utc = format_utc(value, seconds=True)
    return local if local == utc else glossary.WHEN_EXACT.format(local=local, utc=utc)
