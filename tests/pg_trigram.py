"""The schema of PostgreSQL's ``pg_trgm`` extension, for the fixtures that give each test a
schema of its own (see ``trace_app.store.name_index``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

_FIND = text(
    "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
    "WHERE e.extname = 'pg_trgm'"
)


def trigram_schema(conn: Any) -> str:
    """The schema holding ``pg_trgm``, which a database holds once for all its schemas.
    Created in a schema of its own when missing, so that dropping one test's schema never
    drops it under another test; the tests put that schema on their ``search_path``.
    ``conn`` is an AUTOCOMMIT connection (several tests may create it at once)."""
    found = conn.execute(_FIND).scalar()
    if found is None:
        try:
            conn.execute(text("CREATE SCHEMA IF NOT EXISTS trace_pg_trgm"))
            conn.execute(text("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA trace_pg_trgm"))
        except DBAPIError:
            pass  # another test created it at the same moment
        found = conn.execute(_FIND).scalar_one()
    return str(found)
