"""Dates, times and numbers in a language's conventions (Babel / CLDR), in a time zone.

English keeps Trace's own friendly form (``2 Dec, 14:05 (Kathmandu)``, made by
:mod:`trace_app.domain.time_zones`); the other languages take CLDR's day and clock
patterns for the same parts (``2 dic, 14:05 (Kathmandu)``, ``डिसेम्बर 2, 14:05 ...``).
The zone is named by its city, as the English form does: a place name is data.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from babel.core import Locale
from babel.dates import DateTimePattern, match_skeleton, parse_pattern
from babel.numbers import format_decimal


@lru_cache(maxsize=64)
def _zone(name: str | None) -> tzinfo:
    if not name or name == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return UTC


@lru_cache(maxsize=64)
def _locale(lang: str) -> Locale:
    return Locale.parse(lang)


@lru_cache(maxsize=64)
def _skeleton(lang: str, skeleton: str) -> DateTimePattern:
    """CLDR's pattern for ``skeleton`` in ``lang``, parsed once (Babel's format_skeleton
    matches and parses it on every call: ten times the cost of a page's other words)."""
    locale = _locale(lang)
    key = match_skeleton(skeleton, locale.datetime_skeletons) or skeleton
    return parse_pattern(locale.datetime_skeletons[key])


def _format(value: date | datetime, lang: str, skeleton: str) -> str:
    return _skeleton(lang, skeleton).apply(value, _locale(lang))


def zone_city(name: str | None) -> str:
    """``Asia/Kathmandu`` -> ``Kathmandu``; none -> ``UTC``."""
    if not name or name == "UTC":
        return "UTC"
    return name.rsplit("/", 1)[-1].replace("_", " ")


def format_date(
    value: date | datetime, lang: str, tz: str | None = None, *, now: datetime | None = None
) -> str:
    """The day in ``lang``: ``2 dic``; a year other than this one is named."""
    from trace_app.i18n import supported

    locale = supported(lang) or "en"
    zone = _zone(tz)
    if isinstance(value, datetime):
        local = value.astimezone(zone)
        this_year = (now or datetime.now(UTC)).astimezone(zone).year
        return _format(local, locale, "MMMd" if local.year == this_year else "yMMMd")
    return _format(value, locale, "yMMMd")


def format_datetime(
    value: datetime, lang: str, tz: str | None = None, *, now: datetime | None = None
) -> str:
    """``value`` as a reader of ``lang`` says it, in the zone ``tz``: the day, the clock
    (24 hours) and the zone's city, through the catalogue's ``{date}, {clock} ({zone})``."""
    from trace_app.i18n import supported, translate_in

    locale = supported(lang) or "en"
    zone = _zone(tz)
    pattern = translate_in(locale, "{date}, {clock} ({zone})")
    return pattern.format(
        date=format_date(value, locale, tz, now=now),
        clock=_format(value.astimezone(zone), locale, "Hm"),
        zone=zone_city(tz),
    )


def format_number(value: int | float, lang: str) -> str:
    """``12345`` -> ``12,345`` (en), ``12.345`` (es)."""
    from trace_app.i18n import supported

    return format_decimal(value, locale=supported(lang) or "en")
