"""The word index over people's search keys: who holds a word, and the words near a query.

``people.search_key`` holds a person's names as search keys, one per line, words of
``[0-9a-z]`` separated by single spaces. Two tables, kept by triggers on ``people`` in the
same transaction as the person (publish, import, new alternate names, rollback, and any
later path that writes a person), never by domain code:

- ``person_words (incident_id, word, person_id)``: one row per distinct word of each
  person's key, replaced when the key changes, deleted with the person. Its primary key
  is a B-tree in that order: the people holding a word are a range of it.
- ``name_words (incident_id, word)``: the incident's vocabulary, every word any of its
  people's keys ever held (words are only added; one nobody holds any more is looked up
  and finds no one), with a trigram index: GIN ``gin_trgm_ops`` on PostgreSQL, an FTS5
  ``trigram`` table with ``name_words`` as content on SQLite. Deleted with the incident.

Why (ADR 0087): the typo neighbours of a one-word search ranked every person's key that
shares trigrams with the query, which grows with the incident (a tenth of a million
generated people for "sunitta"); the incident's distinct words grow far slower (75,489 for
a million generated people), and the people holding the near words are index ranges.

Every object here is invisible to the models (:func:`is_word_index_object`).
:func:`create_word_index` builds the tables for the people already stored (migration 0016);
a migration that rebuilds ``people`` on SQLite must call :func:`drop_triggers` before and
:func:`create_word_index` after, as for the trigram index.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sqlalchemy import (
    Connection,
    Select,
    Text,
    any_,
    bindparam,
    case,
    column,
    exists,
    func,
    literal,
    literal_column,
    select,
    table,
    text,
    union_all,
)
from sqlalchemy.dialects.postgresql import ARRAY

from trace_app.store.models import Person
from trace_app.store.sql import driving_join, fts5_any, in_values

PERSON_WORDS = "person_words"
NAME_WORDS = "name_words"
NAME_WORDS_FTS = "name_words_fts"
NAME_WORDS_GIN = "ix_name_words_word_trgm"
PERSON_WORDS_BY_PERSON = "ix_person_words_person"
_SQLITE_TRIGGERS = (
    "people_words_ai",
    "people_words_ad",
    "people_words_au",
    "name_words_fts_ai",
    "incident_words_ad",
)
_TRIGRAM = 3

person_words = table(PERSON_WORDS, column("incident_id"), column("word"), column("person_id"))
name_words = table(NAME_WORDS, column("rowid"), column("incident_id"), column("word"))
_name_words_fts = table(NAME_WORDS_FTS, column("rowid"), column("rank"))


def is_word_index_object(name: str | None) -> bool:
    """Whether a table, index or trigger of that name belongs to the word index."""
    return bool(name) and (
        str(name).startswith((PERSON_WORDS, NAME_WORDS))
        or name in (NAME_WORDS_GIN, PERSON_WORDS_BY_PERSON)
    )


def words_of(key: str) -> list[str]:
    """The distinct words of a stored search key, in order (what the triggers store)."""
    return list(dict.fromkeys(key.split()))


# ---- schema ------------------------------------------------------------------------
# Plain SQL with the names written out (the constants above name the same objects).

_POSTGRES_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS person_words (incident_id varchar(40) NOT NULL, "
    "word text NOT NULL, person_id varchar(40) NOT NULL, "
    "PRIMARY KEY (incident_id, word, person_id))",
    "CREATE INDEX IF NOT EXISTS ix_person_words_person ON person_words (person_id)",
    "CREATE TABLE IF NOT EXISTS name_words (incident_id varchar(40) NOT NULL, "
    "word text NOT NULL, PRIMARY KEY (incident_id, word))",
    # fastupdate off: new words go straight into the index, not into a pending list that
    # every search scans until the next vacuum (18 ms instead of 3 after a bulk load)
    "CREATE INDEX IF NOT EXISTS ix_name_words_word_trgm ON name_words "
    "USING gin (word gin_trgm_ops) WITH (fastupdate = off)",
    # the words of a key: split at its spaces and newlines
    """CREATE OR REPLACE FUNCTION people_words_sync() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP <> 'INSERT' THEN
            DELETE FROM person_words WHERE person_id = OLD.id;
        END IF;
        IF TG_OP <> 'DELETE' THEN
            INSERT INTO person_words (incident_id, word, person_id)
                SELECT DISTINCT NEW.incident_id, w, NEW.id
                FROM regexp_split_to_table(NEW.search_key, '\\s+') AS w WHERE w <> ''
                ON CONFLICT DO NOTHING;
            INSERT INTO name_words (incident_id, word)
                SELECT DISTINCT NEW.incident_id, w
                FROM regexp_split_to_table(NEW.search_key, '\\s+') AS w WHERE w <> ''
                ON CONFLICT DO NOTHING;
        END IF;
        RETURN NULL;
    END $$""",
    """CREATE OR REPLACE FUNCTION incident_words_drop() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM name_words WHERE incident_id = OLD.id;
        RETURN NULL;
    END $$""",
    "DROP TRIGGER IF EXISTS people_words_sync ON people",
    "CREATE TRIGGER people_words_sync AFTER INSERT OR DELETE OR UPDATE OF search_key, "
    "incident_id ON people FOR EACH ROW EXECUTE FUNCTION people_words_sync()",
    "DROP TRIGGER IF EXISTS incident_words_drop ON incidents",
    "CREATE TRIGGER incident_words_drop AFTER DELETE ON incidents "
    "FOR EACH ROW EXECUTE FUNCTION incident_words_drop()",
    # the people already stored
    "INSERT INTO person_words (incident_id, word, person_id) "
    "SELECT DISTINCT p.incident_id, w, p.id "
    "FROM people p, regexp_split_to_table(p.search_key, '\\s+') AS w WHERE w <> '' "
    "ON CONFLICT DO NOTHING",
    "INSERT INTO name_words (incident_id, word) "
    "SELECT DISTINCT incident_id, word FROM person_words ON CONFLICT DO NOTHING",
)

# The words of a row's key on SQLite: a JSON array made by turning its separators into
# '","' (a key holds only [0-9a-z], spaces and newlines: nothing to escape), one row per
# word from json_each; {row} is new, or p for the people already stored.
_SQLITE_WORDS = (
    "json_each('[\"' || replace(replace({row}.search_key, ' ', '\",\"'), char(10), "
    "'\",\"') || '\"]')"
)
_SQLITE_ADD = (
    "INSERT OR IGNORE INTO person_words (incident_id, word, person_id) "  # noqa: S608 (constants)
    f"SELECT new.incident_id, value, new.id FROM {_SQLITE_WORDS.format(row='new')} "
    "WHERE value <> ''; "
    "INSERT OR IGNORE INTO name_words (incident_id, word) "
    f"SELECT new.incident_id, value FROM {_SQLITE_WORDS.format(row='new')} "
    "WHERE value <> '';"
)
_SQLITE_REMOVE = "DELETE FROM person_words WHERE person_id = old.id;"
_SQLITE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS person_words (incident_id TEXT NOT NULL, "
    "word TEXT NOT NULL, person_id TEXT NOT NULL, "
    "PRIMARY KEY (incident_id, word, person_id)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS ix_person_words_person ON person_words (person_id)",
    # a rowid table: the FTS5 table's content, by row id
    "CREATE TABLE IF NOT EXISTS name_words (incident_id TEXT NOT NULL, "
    "word TEXT NOT NULL, UNIQUE (incident_id, word))",
    "CREATE VIRTUAL TABLE IF NOT EXISTS name_words_fts USING fts5("
    "word, content='name_words', tokenize='trigram')",
    f"CREATE TRIGGER IF NOT EXISTS people_words_ai AFTER INSERT ON people BEGIN {_SQLITE_ADD} END",
    "CREATE TRIGGER IF NOT EXISTS people_words_ad AFTER DELETE ON people "
    f"BEGIN {_SQLITE_REMOVE} END",
    "CREATE TRIGGER IF NOT EXISTS people_words_au AFTER UPDATE OF search_key, incident_id "
    f"ON people BEGIN {_SQLITE_REMOVE} {_SQLITE_ADD} END",
    "CREATE TRIGGER IF NOT EXISTS name_words_fts_ai AFTER INSERT ON name_words BEGIN "
    "INSERT INTO name_words_fts(rowid, word) VALUES (new.rowid, new.word); END",
    "CREATE TRIGGER IF NOT EXISTS incident_words_ad AFTER DELETE ON incidents BEGIN "
    "INSERT INTO name_words_fts(name_words_fts, rowid, word) "
    "SELECT 'delete', rowid, word FROM name_words WHERE incident_id = old.id; "
    "DELETE FROM name_words WHERE incident_id = old.id; END",
    # the people already stored
    "INSERT OR IGNORE INTO person_words (incident_id, word, person_id) "  # noqa: S608 (constants)
    f"SELECT p.incident_id, value, p.id FROM people p, {_SQLITE_WORDS.format(row='p')} "
    "WHERE value <> ''",
    "INSERT OR IGNORE INTO name_words (incident_id, word) "
    "SELECT DISTINCT incident_id, word FROM person_words",
)


def create_word_index(connection: Connection) -> None:
    """Create both tables, their indexes and triggers, and fill them from the people already
    stored (the trigram index's ``pg_trgm`` extension must exist on PostgreSQL)."""
    postgres = connection.dialect.name == "postgresql"
    for statement in _POSTGRES_SCHEMA if postgres else _SQLITE_SCHEMA:
        connection.execute(text(statement))


def drop_word_index(connection: Connection) -> None:
    """Drop everything :func:`create_word_index` made."""
    drop_triggers(connection)
    if connection.dialect.name == "postgresql":
        connection.execute(text("DROP FUNCTION IF EXISTS people_words_sync()"))
        connection.execute(text("DROP FUNCTION IF EXISTS incident_words_drop()"))
    else:
        connection.execute(text("DROP TABLE IF EXISTS name_words_fts"))
    connection.execute(text("DROP TABLE IF EXISTS person_words"))
    connection.execute(text("DROP TABLE IF EXISTS name_words"))


def drop_triggers(connection: Connection) -> None:
    """Drop the triggers on ``people`` and ``incidents`` (before SQLite rebuilds a table;
    :func:`create_word_index` makes them again and adds what is missing)."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("DROP TRIGGER IF EXISTS people_words_sync ON people"))
        connection.execute(text("DROP TRIGGER IF EXISTS incident_words_drop ON incidents"))
        return
    for trigger in _SQLITE_TRIGGERS:
        connection.execute(text(f"DROP TRIGGER IF EXISTS {trigger}"))


# ---- queries -----------------------------------------------------------------------

# How similar (pg_trgm word similarity, 0-1) a word must be to a query to be near it: the
# trigram index's threshold for whole keys (name_index.WORD_SIMILARITY_THRESHOLD).
NEAR_WORD_THRESHOLD = 0.3


def near_words(connection: Connection, incident_id: str, query: str, limit: int) -> list[str]:
    """At most ``limit`` words of the incident's vocabulary most like the one-word search
    key ``query`` (3 characters or more), most similar first: ``pg_trgm`` word similarity
    (at least :data:`NEAR_WORD_THRESHOLD`) on PostgreSQL; on SQLite the words sharing a
    trigram with it, ranked by FTS5's ``bm25``. A query shorter than a trigram has no
    near words, on both databases (callers ask for its words by prefix,
    :func:`words_starting`)."""
    grams = fts5_any(query[i : i + _TRIGRAM] for i in range(len(query) - _TRIGRAM + 1))
    if grams is None:
        return []
    if connection.dialect.name == "postgresql":
        near = (
            select(name_words.c.word)
            .where(name_words.c.incident_id == incident_id)
            .where(name_words.c.word.op("%>")(query))
            .order_by(func.word_similarity(query, name_words.c.word).desc(), name_words.c.word)
            .limit(limit)
        )
        # The planner takes the vocabulary for small and reads all of it, computing the
        # word similarity of every word (160 ms for 75,000 words); through the GIN index
        # it computes it for the words sharing trigrams only (3 ms).
        connection.execute(
            text("SELECT set_config('pg_trgm.word_similarity_threshold', :t, true)"),
            {"t": str(NEAR_WORD_THRESHOLD)},
        )
        return _words_without(connection, ("enable_seqscan",), near)
    else:
        # the FTS5 table first, each word it finds looked up by row id (sql.driving_join)
        vocabulary = driving_join(
            _name_words_fts, name_words, _name_words_fts.c.rowid == name_words.c.rowid
        )
        near = (
            select(name_words.c.word)
            .select_from(vocabulary)
            .where(literal_column(NAME_WORDS_FTS).op("MATCH")(literal(grams)))
            .where(name_words.c.incident_id == incident_id)
            .order_by(_name_words_fts.c.rank, name_words.c.word)
            .limit(limit)
        )
    return [row[0] for row in connection.execute(near)]


# The characters of a search key's words
WORD_LETTERS = "0123456789abcdefghijklmnopqrstuvwxyz"


def one_change_variants(word: str) -> list[str]:
    """Every string one character left out of ``word`` or added to it (over
    :data:`WORD_LETTERS`): the single changes of the ``rapidfuzz`` ratio, in which a
    replaced character or two swapped ones are two changes (about 37 per letter)."""
    cuts = [(word[:at], word[at:]) for at in range(len(word) + 1)]
    variants = [a + b[1:] for a, b in cuts if b]
    variants += [a + c + b for a, b in cuts for c in WORD_LETTERS]
    return [v for v in dict.fromkeys(variants) if v and v != word]


def one_edit_variants(word: str) -> list[str]:
    """Every string one edit away from ``word``: :func:`one_change_variants`, and a
    character replaced or two neighbours swapped (about 70 per letter)."""
    cuts = [(word[:at], word[at:]) for at in range(len(word) + 1)]
    variants = one_change_variants(word)
    variants += [a + b[1] + b[0] + b[2:] for a, b in cuts if len(b) > 1]
    variants += [a + c + b[1:] for a, b in cuts if b for c in WORD_LETTERS if c != b[0]]
    return [v for v in dict.fromkeys(variants) if v != word]


def existing_words(connection: Connection, incident_id: str, strings: Iterable[str]) -> set[str]:
    """Those of ``strings`` that are words of the incident: one statement of exact lookups
    in ``name_words``' primary key (for :func:`one_change_variants` and
    :func:`one_edit_variants`, which no trigram measure finds reliably: a swap in a
    short word leaves it few trigrams in common)."""
    wanted = {string for string in strings if string}
    if not wanted:
        return set()
    if connection.dialect.name == "postgresql":
        # one array parameter: a thousand constants cost more to write into the statement
        # than the lookups take. PostgreSQL would look them up in the trigram index or
        # read the whole vocabulary (12 ms for the 400 strings of a six-letter word among
        # a million people's words) rather than in the primary key.
        listed = bindparam("wanted", sorted(wanted), type_=ARRAY(Text()))
        found = select(name_words.c.word).where(
            name_words.c.incident_id == incident_id, name_words.c.word == any_(listed)
        )
        return set(_words_without(connection, ("enable_seqscan", "enable_bitmapscan"), found))
    found = (
        select(name_words.c.word)
        .where(name_words.c.incident_id == incident_id)
        .where(in_values(name_words.c.word, wanted))
    )
    return {row[0] for row in connection.execute(found)}


def _words_without(connection: Connection, plans: Sequence[str], words: Select[str]) -> list[str]:
    """The rows of ``words`` (one column) read on PostgreSQL with the planner's ``plans``
    (``enable_seqscan``, ``enable_bitmapscan``) off for this one statement; the settings
    go back as they were."""
    was = {
        plan: connection.execute(text("SELECT current_setting(:p)"), {"p": plan}).scalar()
        for plan in plans
    }
    for plan in plans:
        connection.execute(text("SELECT set_config(:p, 'off', true)"), {"p": plan})
    try:
        return [row[0] for row in connection.execute(words)]
    finally:
        for plan, value in was.items():
            connection.execute(
                text("SELECT set_config(:p, :v, true)"), {"p": plan, "v": value or "on"}
            )


def words_starting(connection: Connection, incident_id: str, prefix: str, limit: int) -> list[str]:
    """At most ``limit`` of the incident's words that begin with ``prefix``, in word
    order: a range of ``name_words``' primary key read from ``prefix`` on. No upper
    bound goes into the SQL (where the range ends depends on the database's collation:
    "r{" sorts after every word of "r" in C, not in en_US); the words are kept while they
    begin with ``prefix``, which holds them together in any collation, as words are
    ``[0-9a-z]``."""
    rows = connection.execute(
        select(name_words.c.word)
        .where(name_words.c.incident_id == incident_id, name_words.c.word >= prefix)
        .order_by(name_words.c.word)
        .limit(limit)
    )
    words: list[str] = []
    for (word,) in rows:
        if not word.startswith(prefix):
            break
        words.append(word)
    return words


def holding(
    query: Select[str, str, str], incident_id: str, words: Sequence[str], limit: int
) -> Select[str, str, str]:
    """At most ``limit`` rows of ``query`` (over ``people`` of ``incident_id``) whose key
    holds one of ``words`` as a word, those holding the first word first, then by person
    id: ranges of ``person_words``' primary key (one word: read in order, no sort). A
    person holding two of the words comes twice."""
    held = query.join(person_words, person_words.c.person_id == Person.id).where(
        person_words.c.incident_id == incident_id
    )
    if len(words) == 1:
        held = held.where(person_words.c.word == words[0])
    else:
        order = case({word: at for at, word in enumerate(words)}, value=person_words.c.word)
        held = held.where(person_words.c.word.in_(list(words))).order_by(order)
    return held.order_by(person_words.c.person_id).limit(limit)


def people_holding_groups(
    connection: Connection,
    incident_id: str,
    groups: Sequence[Mapping[str, int]],
    at_least: int,
    limit: int,
) -> list[str]:
    """The ids of at most ``limit`` people of the incident whose score is at least
    ``at_least`` (and above 0), highest first, then by id. Each group maps words to what
    holding them is worth; a person scores, for each group, the most that a word of the
    group they hold is worth (one word may serve several groups). One ``person_words``
    range per word, each read whole."""
    served = [
        select(person_words.c.person_id, literal(at).label("grp"), literal(worth).label("worth"))
        .where(person_words.c.incident_id == incident_id)
        .where(in_values(person_words.c.word, [w for w, v in group.items() if v == worth]))
        for at, group in enumerate(groups)
        for worth in sorted(set(group.values()))
    ]
    if not served:
        return []
    held = union_all(*served).subquery()
    # the best of each group, one column each, then their sum: one aggregation
    score = sum(
        (
            func.coalesce(func.max(case((held.c.grp == at, held.c.worth))), 0)
            for at in range(len(groups))
        ),
        literal(0),
    )
    rows = connection.execute(
        select(held.c.person_id)
        .group_by(held.c.person_id)
        .having(score >= max(1, at_least))
        .order_by(score.desc(), held.c.person_id)
        .limit(limit)
    )
    return [row[0] for row in rows]


def holding_all(
    connection: Connection, incident_id: str, words: Sequence[str], limit: int, probe: int
) -> list[str]:
    """The ids of at most ``limit`` people of the incident holding every one of
    ``words``: the holders of the rarest word (each word's holders counted up to
    ``probe``), each looked up in ``person_words``' primary key for the other words. Read
    in the rarest word's range order, so that the ``LIMIT`` ends it; it reads no more than
    the rarest word's holders."""
    distinct = list(dict.fromkeys(words))
    if not distinct:
        return []

    def held(word: str) -> int:
        rows = (
            select(literal(1))
            .select_from(person_words)
            .where(person_words.c.incident_id == incident_id, person_words.c.word == word)
            .limit(probe)
            .subquery()
        )
        return int(connection.execute(select(func.count()).select_from(rows)).scalar() or 0)

    rarest = min(distinct, key=held)
    other = person_words.alias("other")
    # the words written into the statement: planned for them, never once for any words
    # (a generic plan joined every holder of the other words: 10 ms instead of 1)
    query = select(person_words.c.person_id).where(
        person_words.c.incident_id == incident_id,
        person_words.c.word == literal(rarest, literal_execute=True),
    )
    for word in distinct:
        if word != rarest:
            query = query.where(
                exists().where(
                    other.c.incident_id == incident_id,
                    other.c.word == literal(word, literal_execute=True),
                    other.c.person_id == person_words.c.person_id,
                )
            )
    return [
        row[0] for row in connection.execute(query.order_by(person_words.c.person_id).limit(limit))
    ]
