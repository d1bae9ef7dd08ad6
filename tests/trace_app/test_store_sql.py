"""``store.sql.in_values``: a long list as constants (PostgreSQL) or one JSON parameter
(SQLite), read again with other values from SQLAlchemy's statement cache."""

from __future__ import annotations

from sqlalchemy import select

from trace_app.store.db import Database
from trace_app.store.models import Incident
from trace_app.store.sql import in_values
from trace_app.store.types import new_id


def names_in(database: Database, wanted: list[str]) -> set[str]:
    with database.sessions() as s:
        return set(s.scalars(select(Incident.name).where(in_values(Incident.name, wanted))))


def test_each_list_reads_its_own_rows_through_the_cached_statement(database: Database) -> None:
    names = [f"Flood {n}" for n in range(600)] + ['Quote "and" \\ back', "Ünïcode 名前"]
    with database.session() as s:
        s.add_all(Incident(id=new_id("inc"), name=name) for name in names)
        s.commit()
    # the same statement three times (one cache entry), each with its own values
    assert names_in(database, [*names[:300], "Nowhere"]) == set(names[:300])
    assert names_in(database, names[300:]) == set(names[300:])
    assert names_in(database, [names[-2], names[-1], "Flood 7"]) == {
        names[-2],
        names[-1],
        "Flood 7",
    }
    assert names_in(database, []) == set()
