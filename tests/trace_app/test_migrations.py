"""The shipped migrations build exactly the schema the models describe, on both backends."""

from __future__ import annotations

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from trace_app.store import word_index
from trace_app.store.db import Database, alembic_config, make_engine, migrate
from trace_app.store.models import Base
from trace_app.store.name_index import (
    FTS_TABLE,
    GIN_INDEX,
    PREFIX_INDEX,
    TrigramExtensionRefused,
    include_object,
    is_index_object,
)

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
            assert not [t for t in inspect(conn).get_table_names() if is_index_object(t)]
        migrate(engine)
        with engine.connect() as conn:
            assert set(inspect(conn).get_table_names()) >= TABLES
            indexes = {i["name"] for i in inspect(conn).get_indexes("people")}
            if conn.dialect.name == "sqlite":
                assert FTS_TABLE in inspect(conn).get_table_names()
                assert PREFIX_INDEX in indexes
            else:
                assert {GIN_INDEX, PREFIX_INDEX} <= indexes
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


def test_0010_fills_linked_groups_from_the_newest_decisions(db_url: str) -> None:
    from sqlalchemy import text

    engine = make_engine(db_url)
    try:
        config = alembic_config()
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.upgrade(config, "0009")
            conn.execute(
                text(
                    "INSERT INTO incidents (id, name, description, created_at) "
                    "VALUES ('inc_1', 'Old', '', '2026-07-15 08:00:00')"
                )
            )
            for pid in ("per_a", "per_b", "per_c", "per_d"):
                conn.execute(
                    text(
                        "INSERT INTO people (id, incident_id, name, name_key, search_key) "
                        "VALUES (:p, 'inc_1', :n, :k, :s)"
                    ),
                    {"p": pid, "n": pid, "k": pid, "s": pid},
                )
            # a-b same; b-c same; c-d same, then undone (different)
            for n, (a, b, decision, seq) in enumerate(
                [
                    ("per_a", "per_b", "same", 1),
                    ("per_b", "per_c", "same", 1),
                    ("per_c", "per_d", "same", 1),
                    ("per_c", "per_d", "different", 2),
                ]
            ):
                conn.execute(
                    text(
                        "INSERT INTO person_links (id, incident_id, person_a_id, person_b_id, "
                        "decided_on_person_id, decision, note, decided_at, sequence, decided_by) "
                        "VALUES (:id, 'inc_1', :a, :b, :on, :d, 'n', '2026-07-15 08:00:00', :s, '')"
                    ),
                    {"id": f"lnk_{n}", "a": a, "b": b, "on": a, "d": decision, "s": seq},
                )
        migrate(engine)
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT id, group_id FROM people ORDER BY id")).all()
        assert [tuple(r) for r in rows] == [
            ("per_a", "per_a"),
            ("per_b", "per_a"),
            ("per_c", "per_a"),
            ("per_d", None),
        ]
    finally:
        engine.dispose()


def test_0016_fills_the_word_index_from_the_people_stored(db_url: str) -> None:
    """People stored before 0016 are in the word index after it, and a person written
    after it is kept there by the triggers; the downgrade removes both tables."""
    from sqlalchemy import text

    engine = make_engine(db_url)
    try:
        config = alembic_config()
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.upgrade(config, "0015")
            conn.execute(
                text(
                    "INSERT INTO incidents (id, name, description, created_at, time_zone) "
                    "VALUES ('inc_1', 'Old', '', '2026-07-15 08:00:00', 'UTC')"
                )
            )
            for pid, key in (("per_a", "sunita rai\nsunu"), ("per_b", "maya rai"), ("per_c", "")):
                conn.execute(
                    text(
                        "INSERT INTO people (id, incident_id, name, name_key, search_key) "
                        "VALUES (:p, 'inc_1', :p, :p, :s)"
                    ),
                    {"p": pid, "s": key},
                )
        migrate(engine)
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO people (id, incident_id, name, name_key, search_key) "
                    "VALUES ('per_d', 'inc_1', 'd', 'd', 'ram  rai')"
                )
            )
            held = conn.execute(
                text(f"SELECT person_id, word FROM {word_index.PERSON_WORDS} ORDER BY 1, 2")
            ).all()
            vocabulary = conn.execute(
                text(f"SELECT word FROM {word_index.NAME_WORDS} ORDER BY 1")
            ).all()
        assert [tuple(r) for r in held] == [
            ("per_a", "rai"),
            ("per_a", "sunita"),
            ("per_a", "sunu"),
            ("per_b", "maya"),
            ("per_b", "rai"),
            ("per_d", "rai"),
            ("per_d", "ram"),
        ]
        assert [r[0] for r in vocabulary] == ["maya", "rai", "ram", "sunita", "sunu"]
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "0015")
        with engine.connect() as conn:
            names = set(inspect(conn).get_table_names())
        assert not {word_index.PERSON_WORDS, word_index.NAME_WORDS} & names
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_refused_trigram_extension_is_a_clear_error(pg_server_url: str) -> None:
    """A database user who may not create pg_trgm gets what to do, not a stack of SQL."""
    import uuid

    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"trace_noext_{uuid.uuid4().hex[:10]}"
    admin = create_engine(pg_server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE ROLE "{name}" LOGIN'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    owner = create_engine(make_url(pg_server_url).set(database=name), isolation_level="AUTOCOMMIT")
    with owner.connect() as conn:  # its own schema, and no CREATE on the database
        conn.execute(text(f'CREATE SCHEMA app AUTHORIZATION "{name}"'))
    owner.dispose()
    user_url = make_url(pg_server_url).set(database=name, username=name, password=None)
    engine = make_engine(
        user_url.update_query_dict({"options": "-csearch_path=app"}).render_as_string(
            hide_password=False
        )
    )
    try:
        with pytest.raises(TrigramExtensionRefused, match="CREATE EXTENSION pg_trgm"):
            migrate(engine)
    finally:
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
            conn.execute(text(f'DROP ROLE "{name}"'))
        admin.dispose()
