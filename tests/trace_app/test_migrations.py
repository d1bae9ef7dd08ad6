"""The shipped migrations build exactly the schema the models describe, on both backends."""

from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from trace_app.store.db import Database, alembic_config, make_engine, migrate
from trace_app.store.models import Base
from trace_app.store.name_index import include_object

TABLES = {
    "incidents",
    "organizations",
    "people",
    "reports",
    "claims",
    "alerts",
    "investigation_runs",
    "person_alternate_names",
    "person_links",
    "review_decisions",
    "interchange_records",
}


def test_upgrade_head_matches_models(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        migrate(engine)
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "include_object": include_object}
            )
            diff = compare_metadata(context, Base.metadata)
            tables = set(inspect(conn).get_table_names())
        assert diff == []
        assert tables >= TABLES | {"alembic_version"}
    finally:
        engine.dispose()


def test_migrate_is_idempotent_and_downgrades(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        migrate(engine)
        migrate(engine)  # a second start changes nothing
        config = alembic_config()
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "base")
        with engine.connect() as conn:
            assert set(inspect(conn).get_table_names()) & TABLES == set()
        migrate(engine)
        with engine.connect() as conn:
            assert set(inspect(conn).get_table_names()) >= TABLES
    finally:
        engine.dispose()


def test_single_head_shipped_as_package_data() -> None:
    script = ScriptDirectory.from_config(alembic_config())
    assert len(script.get_heads()) == 1


def test_investigation_run_fingerprint_unique_per_incident(database: Database) -> None:
    with database.engine.connect() as conn:
        uniques = inspect(conn).get_unique_constraints("investigation_runs")
    assert any(sorted(u["column_names"]) == ["fingerprint", "incident_id"] for u in uniques)


def test_search_key_filled_for_people_stored_before_0005(db_url: str) -> None:
    from sqlalchemy import text

    engine = make_engine(db_url)
    try:
        config = alembic_config()
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.upgrade(config, "0004")
            conn.execute(
                text(
                    "INSERT INTO incidents (id, name, description, created_at) "
                    "VALUES ('inc_1', 'Old', '', '2026-07-15 08:00:00')"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO people (id, incident_id, name, name_key) "
                    "VALUES ('per_1', 'inc_1', 'सुनिता राई', 'सुनिता राई')"
                )
            )
        migrate(engine)
        with engine.connect() as conn:
            key = conn.execute(text("SELECT search_key FROM people WHERE id = 'per_1'"))
            assert key.scalar_one() == "sunita rai"
    finally:
        engine.dispose()


def test_0006_keeps_people_and_allows_two_with_one_name(db_url: str) -> None:
    from sqlalchemy import text

    engine = make_engine(db_url)
    try:
        config = alembic_config()
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.upgrade(config, "0005")
            conn.execute(
                text(
                    "INSERT INTO incidents (id, name, description, created_at) "
                    "VALUES ('inc_1', 'Old', '', '2026-07-15 08:00:00')"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO people (id, incident_id, name, name_key, search_key, age) "
                    "VALUES ('per_1', 'inc_1', 'Ram Thapa', 'ram thapa', 'ram thapa', 8)"
                )
            )
        migrate(engine)
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO people (id, incident_id, name, name_key, search_key, age) "
                    "VALUES ('per_2', 'inc_1', 'Ram Thapa', 'ram thapa', 'ram thapa', 71)"
                )
            )
            rows = conn.execute(text("SELECT id, search_key FROM people ORDER BY id")).all()
        assert [tuple(r) for r in rows] == [("per_1", "ram thapa"), ("per_2", "ram thapa")]
        with engine.connect() as conn:
            assert not any(
                u["name"] == "uq_people_incident_name"
                for u in inspect(conn).get_unique_constraints("people")
            )
    finally:
        engine.dispose()
