"""The one date rule (trace_app.domain.dates): aware values within the years 2-9998 in
UTC, one typed error (issue 38, hole 4: extreme offsets gave OverflowError)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trace_app.domain.dates import (
    DATE_OUT_OF_RANGE,
    EARLIEST_DATE,
    INVALID_DATE,
    LATEST_DATE,
    DateError,
    check_datetime,
    parse_datetime,
)
from trace_app.domain.errors import InvalidInputError, TraceError

EXTREMES = [
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "0001-01-01T00:00:00+23:59",
    "9999-12-31T23:59:59.999999-23:59",
    "0001-12-31T23:59:59Z",
    "9999-01-01",
]


@pytest.mark.parametrize("text", EXTREMES)
def test_extreme_offsets_are_out_of_range_not_an_overflow(text: str) -> None:
    with pytest.raises(DateError) as refused:
        parse_datetime(text, naive_zone=UTC)
    assert refused.value.code == DATE_OUT_OF_RANGE
    assert refused.value.http_status == 422
    assert str(refused.value) == (
        f"{text!r} is outside the dates Trace can store (the years 2 to 9998, in UTC)."
    )


@pytest.mark.parametrize(
    "text", ["15/07/2026", "", "   ", "2026-13-01T00:00:00Z", "yesterday", "2026-07-15T07:30+24:00"]
)
def test_text_that_is_no_date_is_invalid(text: str) -> None:
    with pytest.raises(DateError) as refused:
        parse_datetime(text, naive_zone=UTC)
    assert refused.value.code == INVALID_DATE
    assert "is not a date such as 2026-07-15T07:30:00Z" in str(refused.value)


def test_one_typed_error_that_callers_already_catch() -> None:
    error = DateError("x")
    assert isinstance(error, InvalidInputError) and isinstance(error, TraceError)
    assert isinstance(error, ValueError)  # PFIF and CSV readers catch ValueError
    assert (error.code, error.http_status) == (INVALID_DATE, 422)


def test_a_long_text_is_refused_before_parsing_and_quoted_short() -> None:
    with pytest.raises(DateError) as refused:
        parse_datetime("2026-07-15T07:30:00Z" + " " * 10 + "x" * 200)
    assert refused.value.code == INVALID_DATE and len(str(refused.value)) < 120


def test_values_come_back_aware_in_utc() -> None:
    assert parse_datetime("2026-07-15T13:15:00+05:45") == datetime(2026, 7, 15, 7, 30, tzinfo=UTC)
    assert parse_datetime("2026-07-15T07:30:00Z").tzinfo is UTC
    assert parse_datetime("2026-07-15", naive_zone=UTC) == datetime(2026, 7, 15, tzinfo=UTC)
    kathmandu = ZoneInfo("Asia/Kathmandu")
    assert parse_datetime("2015-04-25T11:56", naive_zone=kathmandu) == datetime(
        2015, 4, 25, 6, 11, tzinfo=UTC
    )


def test_a_naive_time_needs_a_zone() -> None:
    with pytest.raises(DateError) as refused:
        parse_datetime("2026-07-15T07:30:00")
    assert refused.value.code == INVALID_DATE and "no time zone" in str(refused.value)
    with pytest.raises(DateError):
        check_datetime(datetime(2026, 7, 15))


def test_the_bounds_themselves_are_accepted() -> None:
    assert check_datetime(EARLIEST_DATE) == EARLIEST_DATE
    assert check_datetime(LATEST_DATE) == LATEST_DATE
    assert parse_datetime("0002-01-01T00:00:00Z") == EARLIEST_DATE
    with pytest.raises(DateError):
        check_datetime(EARLIEST_DATE - timedelta(microseconds=1))
    with pytest.raises(DateError):
        check_datetime(LATEST_DATE + timedelta(microseconds=1))
    # a naive extreme in a zone far from UTC is out of range, not an overflow
    with pytest.raises(DateError) as refused:
        check_datetime(datetime(1, 1, 1), naive_zone=ZoneInfo("Pacific/Kiritimati"))
    assert refused.value.code == DATE_OUT_OF_RANGE


@settings(max_examples=300, deadline=None)
@given(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)),
    st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1),
)
def test_any_value_at_any_offset_is_checked_or_refused_never_overflows(
    wall: datetime, minutes: int
) -> None:
    text = wall.replace(tzinfo=timezone(timedelta(minutes=minutes))).isoformat()
    try:
        value = parse_datetime(text)
    except DateError as refused:
        assert refused.code == DATE_OUT_OF_RANGE
        return
    assert value.tzinfo is UTC and EARLIEST_DATE <= value <= LATEST_DATE
    # what later code does with a checked value cannot overflow either
    for zone in (timezone(timedelta(hours=14)), timezone(timedelta(hours=-14))):
        value.astimezone(zone)
    assert value + timedelta(days=30) > value > value - timedelta(days=30)
