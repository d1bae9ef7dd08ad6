"""The trigram index and the word index over people's search keys stay exact through
publish, PFIF import, new alternate names and rollback, on SQLite (FTS5 tables kept by
triggers) and PostgreSQL (GIN index, word tables kept by a trigger): every line of every
stored key is found through the index, nothing else is, each person holds exactly the
words of its key, and on SQLite FTS5's own checks compare its tables with their content."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from sqlalchemy import Connection, Row, select, text

from trace_app.domain.identity import add_alternate_names, match_or_create_person
from trace_app.domain.search import search_people
from trace_app.store import name_index, word_index
from trace_app.store.db import Database
from trace_app.store.models import Person

from .conftest import export, import_doc, new_incident, publish, publish_story


def assert_index_exact(database: Database, incident_id: str) -> None:
    with database.sessions() as s:
        connection = s.connection()
        if connection.dialect.name == "sqlite":
            # compares every indexed row with the content table (raises on a difference)
            connection.execute(
                text(
                    f"INSERT INTO {name_index.FTS_TABLE}({name_index.FTS_TABLE}, rank) "
                    "VALUES ('integrity-check', 1)"
                )
            )
        people = s.execute(
            select(Person.id, Person.search_key).where(Person.incident_id == incident_id)
        ).all()
        base = select(Person.id, Person.name, Person.search_key).where(
            Person.incident_id == incident_id
        )
        assert_words_exact(connection, incident_id, people)
        for pid, key in people:
            for line in key.split("\n"):
                if len(line) < name_index.TRIGRAM:
                    continue
                found = connection.execute(
                    name_index.containing(base, connection.dialect.name, line)
                ).all()
                holders = {p for p, k in people if line in k}
                assert {row[0] for row in found} == holders, (pid, line)


def assert_words_exact(
    connection: Connection, incident_id: str, people: Sequence[Row[tuple[str, str]]]
) -> None:
    """The word index holds each word of each stored key once, for its person, nothing
    else; every such word is in the incident's vocabulary, and on SQLite FTS5's own check
    compares the vocabulary's trigram table with it."""
    held = connection.execute(
        select(word_index.person_words.c.person_id, word_index.person_words.c.word).where(
            word_index.person_words.c.incident_id == incident_id
        )
    ).all()
    expected = sorted((pid, word) for pid, key in people for word in word_index.words_of(key))
    assert sorted((row[0], row[1]) for row in held) == expected
    vocabulary = connection.execute(
        select(word_index.name_words.c.word).where(
            word_index.name_words.c.incident_id == incident_id
        )
    ).scalars()
    assert {word for _, word in expected} <= set(vocabulary)
    if connection.dialect.name == "sqlite":
        fts = word_index.NAME_WORDS_FTS
        connection.execute(text(f"INSERT INTO {fts}({fts}, rank) VALUES ('integrity-check', 1)"))


def test_index_follows_publish_import_new_names_and_rollback(database: Database) -> None:
    incident = new_incident(database)
    publish_story(database, incident)
    assert_index_exact(database, incident)

    # a new alternate name changes the stored key: found by it at once
    publish(database, incident, "Maya Gurung", "seen", age=34, alternate_names=("Mayalu",))
    assert_index_exact(database, incident)
    with database.sessions() as s:
        assert [m.name for m in search_people(s, incident, q="mayalu")] == ["Maya Gurung"]

    # an import creates people through the same path
    copy = new_incident(database, "Flood copy")
    import_doc(database, copy, export(database, incident))
    assert_index_exact(database, copy)
    with database.sessions() as s:
        assert [m.name for m in search_people(s, copy, q="sunitta")] == ["सुनिता राई"]
        assert [m.name for m in search_people(s, copy, q="mayalu")] == ["Maya Gurung"]

    # a rolled-back publish and a rolled-back rename leave no trace in the index
    with pytest.raises(RuntimeError), database.session() as s:
        match_or_create_person(s, incident, "Bishnu Khadka", 40)
        maya = s.scalars(select(Person).where(Person.incident_id == incident)).first()
        assert maya is not None
        add_alternate_names(maya, ["Zzyzx Quorra"])
        s.flush()
        assert [m.name for m in search_people(s, incident, q="bishnu khadka")] == ["Bishnu Khadka"]
        raise RuntimeError("roll back")
    assert_index_exact(database, incident)
    with database.sessions() as s:
        assert search_people(s, incident, q="bishnu khadka") == []
        assert search_people(s, incident, q="zzyzx quorra") == []
