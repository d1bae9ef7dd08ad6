"""Engine, sessions and migrations.

:class:`Database` owns one engine and one session factory. :func:`migrate` applies the
Alembic migrations shipped in ``trace_app/migrations`` (``upgrade head``) on the given
engine; the app and the CLI call it at startup, so a fresh database needs no manual step.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from trace_app.settings import TraceSettings

# Execution option of a transaction that reads and then writes what it read (publishing a
# report: find-or-create a person, the next position). On SQLite such a transaction
# starts with BEGIN IMMEDIATE, so it holds the write lock from its first read and two of
# them run one after the other instead of both reading the same state. (PostgreSQL
# callers lock a row instead.) Other transactions keep the driver's default.
WRITE_TRANSACTION = {"trace_write_transaction": True}
# How long SQLite waits for another writer's lock before "database is locked".
SQLITE_BUSY_TIMEOUT_MS = 5000


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine for ``url``; SQLite gets foreign keys, WAL, a busy timeout, and
    BEGIN IMMEDIATE for transactions opened with :data:`WRITE_TRANSACTION`."""
    if url.startswith("sqlite"):
        connect_args = dict(kwargs.pop("connect_args", {}))
        connect_args.setdefault("check_same_thread", False)
        engine = create_engine(url, connect_args=connect_args, **kwargs)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    return create_engine(url, **kwargs)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_MS)}")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()


def _sqlite_begin(connection: Connection) -> None:
    if connection.get_execution_options().get("trace_write_transaction"):
        # the driver sees the transaction open and issues no BEGIN of its own
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def alembic_config() -> Config:
    """Alembic configuration pointing at the migrations shipped as package data."""
    config = Config()
    location = resources.files("trace_app").joinpath("migrations")
    config.set_main_option("script_location", str(location))
    return config


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to ``revision`` (default: the newest)."""
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


class Database:
    """One engine and its session factory."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.sessions = sessionmaker(bind=engine, expire_on_commit=False)

    @classmethod
    def from_settings(cls, settings: TraceSettings, *, run_migrations: bool = True) -> Database:
        settings.ensure_home()
        db = cls(make_engine(settings.database_url))
        if run_migrations:
            migrate(db.engine)
        return db

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session whose work is committed on success and rolled back on error."""
        with self.sessions() as session:
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise

    def dispose(self) -> None:
        self.engine.dispose()
