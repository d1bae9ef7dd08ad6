"""Alembic environment for Trace.

The app calls :func:`trace_app.store.db.migrate`, which hands over an open connection in
``config.attributes["connection"]``. Run from the ``alembic`` command line, the URL
comes from ``DATABASE_URL`` (or the default SQLite file) via :class:`TraceSettings`.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from trace_app.settings import TraceSettings
from trace_app.store.db import make_engine
from trace_app.store.models import Base
from trace_app.store.name_index import include_object

target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        include_object=include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    settings = TraceSettings.from_env()
    settings.ensure_home()
    engine = make_engine(settings.database_url)
    with engine.begin() as conn:
        _run(conn)
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("Trace's migrations run online only (see trace_app.store.db.migrate).")
run_migrations_online()
