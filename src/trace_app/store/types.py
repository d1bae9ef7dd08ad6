"""Column types shared by the models: opaque ids and UTC timestamps."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

ID_LENGTH = 40


def new_id(prefix: str) -> str:
    """An opaque id such as ``rep_3f2a...``: a short prefix and a random uuid4 in hex.

    Ids carry no meaning and never enter a content fingerprint.
    """
    return f"{prefix}_{uuid.uuid4().hex}"


def utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def as_utc(value: datetime) -> datetime:
    """Aware UTC datetime; a naive value is taken to be UTC already."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Stores naive UTC on every backend and returns aware UTC datetimes.

    SQLite keeps no time zone, so storing naive UTC everywhere gives the same value (and
    the same content fingerprint) on SQLite and PostgreSQL.
    """

    impl = DateTime(timezone=False)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return as_utc(value).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC)
