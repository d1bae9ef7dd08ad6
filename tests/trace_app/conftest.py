"""Fixtures for Trace's store, domain and web tests.

``db_url`` runs a test on SQLite and on PostgreSQL (127.0.0.1:5432, database ``test``):
each PostgreSQL test gets its own schema, dropped afterwards, so parallel runs never
collide. PostgreSQL tests skip with a reason when the server is not reachable.

A test's SQLite database (``database``, ``sqlite_settings``) starts as a copy of one made
by ``migrate`` once per worker (``migrated_sqlite``): migrating an empty file takes about
0.15 s, copying it a few milliseconds, and the copy is the same database. ``migrate`` still
runs on the copy (it finds it at the newest revision); the migration tests migrate their
own empty files.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import Session

from pg_trigram import trigram_schema
from trace_app.demo import seed
from trace_app.settings import TraceSettings, sqlite_path
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import Incident

PG_BASE_URL = os.environ.get(
    "TRACE_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def _pg_available() -> str | None:
    try:
        engine = create_engine(PG_BASE_URL, connect_args={"connect_timeout": 3})
        with engine.connect() as conn:
            conn.execute(text("select 1"))
        engine.dispose()
    except Exception as exc:
        return f"PostgreSQL not reachable at {PG_BASE_URL}: {type(exc).__name__}"
    return None


@pytest.fixture(scope="session")
def pg_unavailable_reason() -> str | None:
    return _pg_available()


@pytest.fixture
def pg_server_url(pg_unavailable_reason: str | None) -> str:
    """The test server's URL (database ``test``), for tests that make their own database
    or role; skips when the server is not reachable."""
    if pg_unavailable_reason:
        pytest.skip(pg_unavailable_reason)
    return PG_BASE_URL


@pytest.fixture
def pg_schema_url(pg_unavailable_reason: str | None) -> Iterator[str]:
    """A URL whose search_path is a fresh schema, dropped after the test."""
    if pg_unavailable_reason:
        pytest.skip(pg_unavailable_reason)
    schema = f"trace_t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_BASE_URL)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        trigrams = trigram_schema(conn)
    try:
        yield f"{PG_BASE_URL}?options=-csearch_path%3D{schema},{trigrams}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ]
)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'trace.db'}"
    url: str = request.getfixturevalue("pg_schema_url")
    return url


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty SQLite database at the newest migration, made once per worker."""
    path = tmp_path_factory.mktemp("migrated") / "trace.db"
    engine = make_engine(f"sqlite:///{path}")
    migrate(engine)
    engine.dispose()
    return path


def copy_sqlite(template: Path, path: Path) -> None:
    """A new SQLite file at ``path`` holding what ``template`` holds (SQLite's backup)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    source, copy = sqlite3.connect(template), sqlite3.connect(path)
    try:
        source.backup(copy)
    finally:
        source.close()
        copy.close()


@pytest.fixture
def database(db_url: str, migrated_sqlite: Path) -> Iterator[Database]:
    path = sqlite_path(db_url)
    if path is not None:
        copy_sqlite(migrated_sqlite, path)
    db = Database(make_engine(db_url))
    migrate(db.engine)
    yield db
    db.dispose()


@pytest.fixture
def seeded(database: Database) -> str:
    """Seed the demo; return the incident id."""
    with database.session() as session:
        incident: Incident = seed.reset_demo(session)
        return incident.id


@pytest.fixture
def session(database: Database) -> Iterator[Session]:
    with database.sessions() as s:
        yield s


class StatementCounter:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.statements: list[str] = []

    def __enter__(self) -> StatementCounter:
        event.listen(self.engine, "before_cursor_execute", self._record)
        return self

    def __exit__(self, *exc: object) -> None:
        event.remove(self.engine, "before_cursor_execute", self._record)

    def _record(self, _conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        self.statements.append(statement)

    @property
    def count(self) -> int:
        return len(self.statements)


@pytest.fixture
def count_statements(database: Database) -> type[StatementCounter]:
    return StatementCounter


@pytest.fixture
def sqlite_settings(tmp_path: Path, migrated_sqlite: Path) -> TraceSettings:
    """A demo server's settings (seeded, with Reset demo), SQLite in a temp folder, and no
    recorded runs to replay (a test that wants them names its own file)."""
    home = tmp_path / "home"
    copy_sqlite(migrated_sqlite, home / "trace.db")
    return TraceSettings(
        home=home,
        database_url=f"sqlite:///{home / 'trace.db'}",
        demo=True,
        recorded_investigations=tmp_path / "no-recorded-runs.json",
    )


@pytest.fixture
def web(sqlite_settings: TraceSettings) -> Iterator[Any]:
    """A TestClient on a fresh app with the seeded demo (SQLite in a temp folder), signed in
    as an admin of every incident (a real account, a real session)."""
    from accounts_helpers import signed_in

    from trace_app.web.app import create_app

    with signed_in(create_app(sqlite_settings)) as client:
        yield client


@pytest.fixture
def incident_id(web: Any) -> str:
    items = web.get("/api/incidents").json()["items"]
    found: str = next(i["id"] for i in items if i["name"] == "Flood Relief Demo")
    return found
