"""The trigram index over people's search keys, on both databases.

``people.search_key`` holds the transliterated key of a person's name and alternate names,
one per line (:func:`trace_app.domain.search.people_search_key`). This module keeps a
trigram index over it and turns a key into SQL that the index serves:

- PostgreSQL: the ``pg_trgm`` extension and a GIN index (``gin_trgm_ops``) on
  ``people.search_key``. PostgreSQL keeps the index in step with the table itself.
- SQLite: an FTS5 table with the ``trigram`` tokenizer whose content is ``people``
  (``content='people'``, the row id of ``people``), kept in step by three triggers on
  ``people``: the index changes in the same transaction as the person, and a rollback
  takes back both.

Every object created here is invisible to the models (:func:`is_index_object` tells
Alembic's comparison to leave them alone). A migration that rebuilds ``people`` on SQLite
(``batch_alter_table``) drops the triggers with the old table: it must call
:func:`drop_index` before and :func:`create_index` after (which rebuilds the FTS table
from ``people``). The FTS5 rows follow ``people``'s implicit row ids, which SQLite's
``VACUUM`` may renumber in a table without an INTEGER PRIMARY KEY: Trace never runs
``VACUUM``; whoever does must call :func:`rebuild` after it.

Queries (``key`` is always a search key: ``[0-9a-z ]`` only):

- :func:`containing`: keys that hold ``key`` as a substring (3 characters or more);
- :func:`starting_with`: keys whose first line starts with ``key`` (any length; a range
  scan of the ``(incident_id, search_key)`` index);
- :func:`neighbours`: keys that share trigrams with ``key``, most similar first, or (a
  search's typo neighbours) the keys :func:`one_typo_patterns` match.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    and_,
    column,
    false,
    func,
    literal,
    literal_column,
    or_,
    table,
    text,
)
from sqlalchemy.exc import DBAPIError

from trace_app.store.models import Person
from trace_app.store.sql import driving_join, fts5_any, fts5_query
from trace_app.store.word_index import is_word_index_object

FTS_TABLE = "people_search_fts"
GIN_INDEX = "ix_people_search_key_trgm"
# The range scan of short queries: (incident_id, search_key) on SQLite; on PostgreSQL over
# the key's first 200 characters in byte order (COLLATE "C", whatever the database's
# collation), as a B-tree refuses entries over 2,704 bytes, which ten long alternate
# names reach
PREFIX_INDEX = "ix_people_incident_search_key"
_TRIGGERS = ("people_search_fts_ai", "people_search_fts_ad", "people_search_fts_au")
# How similar (pg_trgm word similarity, 0-1) a key must be to be a neighbour: low, so that
# every name the ranking would keep (rapidfuzz 85 of 100) is among them.
WORD_SIMILARITY_THRESHOLD = 0.3
TRIGRAM = 3
# A one-word key this long finds its typo neighbours by pieces, a shorter one through the
# incident's words (trace_app.domain.search.candidates)
LONG_QUERY = 10
# A key this long can be cut into the pieces of one_typo_patterns, each pattern with a run
# of 3 characters or more for the index to look up
PIECES_FROM = 6
_PREFIX_CHARS = 200

_fts = table(FTS_TABLE, column("rowid"), column("rank"))


class TrigramExtensionRefused(RuntimeError):
    """PostgreSQL refused ``CREATE EXTENSION pg_trgm``: people search needs it."""


def is_index_object(name: str | None) -> bool:
    """Whether a table, index or trigger of that name belongs to the trigram index or the
    word index (:mod:`trace_app.store.word_index`)."""
    trigram = bool(name) and (str(name).startswith(FTS_TABLE) or name in (GIN_INDEX, PREFIX_INDEX))
    return trigram or is_word_index_object(name)


def include_object(
    _object: object, name: str | None, _type: str, reflected: bool, _compare_to: object
) -> bool:
    """For Alembic's model comparison: leave the trigram index alone (the models do not
    describe it)."""
    return not (reflected and is_index_object(name))


def create_index(connection: Connection) -> None:
    """Create the trigram index (and on PostgreSQL the ``pg_trgm`` extension) for the
    people already stored. Raises :class:`TrigramExtensionRefused` with what to do when
    PostgreSQL refuses the extension."""
    if connection.dialect.name == "postgresql":
        _ensure_pg_trgm(connection)
        connection.execute(
            text(
                f"CREATE INDEX IF NOT EXISTS {GIN_INDEX} ON people "
                "USING gin (search_key gin_trgm_ops)"
            )
        )
        connection.execute(
            text(
                f"CREATE INDEX IF NOT EXISTS {PREFIX_INDEX} ON people "
                f'(incident_id, (substr(search_key, 1, {_PREFIX_CHARS}) COLLATE "C"))'
            )
        )
        return
    connection.execute(
        text(f"CREATE INDEX IF NOT EXISTS {PREFIX_INDEX} ON people (incident_id, search_key)")
    )
    connection.execute(
        text(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
            "search_key, content='people', tokenize='trigram')"
        )
    )
    # every name in these statements is a constant of this module, no input
    insert_new = f"INSERT INTO {FTS_TABLE}(rowid, search_key) VALUES (new.rowid, new.search_key);"  # noqa: S608
    delete_old = (
        f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, search_key) "  # noqa: S608
        "VALUES ('delete', old.rowid, old.search_key);"
    )
    ins, dele, upd = _TRIGGERS
    connection.execute(
        text(f"CREATE TRIGGER IF NOT EXISTS {ins} AFTER INSERT ON people BEGIN {insert_new} END")
    )
    connection.execute(
        text(f"CREATE TRIGGER IF NOT EXISTS {dele} AFTER DELETE ON people BEGIN {delete_old} END")
    )
    connection.execute(
        text(
            f"CREATE TRIGGER IF NOT EXISTS {upd} AFTER UPDATE OF search_key ON people "
            f"BEGIN {delete_old} {insert_new} END"
        )
    )
    rebuild(connection)


def rebuild(connection: Connection) -> None:
    """Refill SQLite's FTS5 table from ``people`` (after a ``VACUUM``); nothing to do on
    PostgreSQL."""
    if connection.dialect.name == "sqlite":
        connection.execute(text(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')"))  # noqa: S608


def drop_index(connection: Connection) -> None:
    """Drop what :func:`create_index` made (the ``pg_trgm`` extension stays: other
    schemas of the database may use it)."""
    if connection.dialect.name == "postgresql":
        connection.execute(text(f"DROP INDEX IF EXISTS {GIN_INDEX}"))
        connection.execute(text(f"DROP INDEX IF EXISTS {PREFIX_INDEX}"))
        return
    for trigger in _TRIGGERS:
        connection.execute(text(f"DROP TRIGGER IF EXISTS {trigger}"))
    connection.execute(text(f"DROP TABLE IF EXISTS {FTS_TABLE}"))
    connection.execute(text(f"DROP INDEX IF EXISTS {PREFIX_INDEX}"))


def _ensure_pg_trgm(connection: Connection) -> None:
    visible = connection.execute(
        text(
            "SELECT 1 FROM pg_opclass WHERE opcname = 'gin_trgm_ops' AND pg_opclass_is_visible(oid)"
        )
    ).first()
    if visible:
        return
    installed = connection.execute(
        text(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
            "WHERE e.extname = 'pg_trgm'"
        )
    ).scalar()
    if installed is not None:
        raise TrigramExtensionRefused(
            f"The pg_trgm extension is installed in schema {installed!r}, which is not on "
            "this connection's search_path: add it to search_path (for example "
            f"'options=-csearch_path=<your schema>,{installed}' in DATABASE_URL)."
        )
    try:
        with connection.begin_nested():
            connection.execute(text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
    except DBAPIError as exc:
        reason = str(exc.orig).splitlines()[0] if exc.orig else str(exc)
        raise TrigramExtensionRefused(
            "People search needs PostgreSQL's pg_trgm extension, and this database user may "
            f"not create it ({reason}). Ask the database owner to run "
            "'CREATE EXTENSION pg_trgm;' in this database (it ships with PostgreSQL), "
            "then start Trace again."
        ) from exc


# ---- queries -----------------------------------------------------------------------


def containing(query: Select[str, str, str], dialect: str, key: str) -> Select[str, str, str]:
    """``query`` (over ``people``) narrowed to keys holding ``key`` (3 characters or
    more) as a substring; index-served on both databases."""
    if dialect == "postgresql":
        holding = _value("%" + _like_literal(key) + "%")
        return query.where(Person.search_key.like(holding, escape=LIKE_ESCAPE))
    return _matching(query, fts5_query([[key]]))


def _matching(query: Select[str, str, str], fts_query: str | None) -> Select[str, str, str]:
    """``query`` (over ``people``, SQLite) narrowed to the rows the FTS5 table finds for
    ``fts_query`` (built by :func:`trace_app.store.sql.fts5_query`, never from raw text);
    no rows when there is no query to ask (a key with no trigram)."""
    if fts_query is None:
        return query.where(false())
    # the FTS5 table first: the people it finds are looked up by row id, and the
    # statement stops at its LIMIT (sql.driving_join)
    people = driving_join(_fts, Person.__table__, _fts.c.rowid == literal_column("people.rowid"))
    return query.select_from(people).where(
        literal_column(FTS_TABLE).op("MATCH")(literal(fts_query))
    )


def without_key(query: Select[str, str, str], dialect: str) -> Select[str, str, str]:
    """``query`` narrowed to people whose names have no Latin reading (an empty key), by
    the :data:`PREFIX_INDEX` B-tree."""
    if dialect == "postgresql":
        return query.where(func.substr(Person.search_key, 1, _PREFIX_CHARS).collate("C") == "")
    return query.where(Person.search_key == "")


def with_key(
    query: Select[str, str, str], dialect: str, key: str, *, newest_first: bool = False
) -> Select[str, str, str]:
    """``query`` narrowed to the people whose whole stored key is ``key`` (one name, or
    names that all read the same): an equality on the :data:`PREFIX_INDEX` B-tree, read in
    its order, so that a ``LIMIT`` ends it. ``newest_first``: on SQLite the records
    stored last first (the index holds them in row id order, read backwards); on
    PostgreSQL the index's order, which is unspecified."""
    if dialect == "postgresql":
        prefix = func.substr(Person.search_key, 1, _PREFIX_CHARS).collate("C")
        # the whole key compared in "C": an equality in the database's collation is one
        # the trigram index also answers, and the planner joined both indexes, reading
        # every holder of a common name from the trigram index (35 ms at 17,555 holders)
        whole = Person.search_key.collate("C") == _value(key)
        return query.where(prefix == _value(key[:_PREFIX_CHARS]), whole)
    same = query.where(Person.search_key == key)
    return same.order_by(literal_column("people.rowid").desc()) if newest_first else same


def starting_with(query: Select[str, str, str], dialect: str, key: str) -> Select[str, str, str]:
    """``query`` narrowed to keys whose first line starts with ``key`` (any length), in
    key order: a range of the :data:`PREFIX_INDEX` B-tree."""
    upper = key[:-1] + chr(ord(key[-1]) + 1)
    if dialect == "postgresql":
        prefix = func.substr(Person.search_key, 1, _PREFIX_CHARS).collate("C")
        condition: ColumnElement[bool] = and_(prefix >= _value(key), prefix < _value(upper))
        return query.where(condition).order_by(prefix)
    condition = and_(Person.search_key >= key, Person.search_key < upper)
    return query.where(condition).order_by(Person.search_key)


def around_in_key_order(
    query: Select[str, str, str], dialect: str, key: str
) -> tuple[Select[str, str, str], Select[str, str, str]]:
    """``query`` narrowed to the keys whose first line begins with the first three
    quarters of ``key`` (:data:`PIECES_FROM` characters or more): those from ``key`` on,
    in key order, and those before it, nearest first. Two ranges of the
    :data:`PREFIX_INDEX` B-tree, read from ``key`` outwards, so that a ``LIMIT`` ends
    them: the keys sharing the longest beginning with ``key`` come first.

    Every such key matches one of :func:`one_typo_patterns` (it holds the first three of
    the four pieces), so these are typo neighbours a search may take when they alone fill
    its bound: a common name followed by a number ("maya gurung 42") or with a typo at
    its end ("maya gurng"), whose patterns' runs thousands of keys hold."""
    head = key[: 3 * len(key) // 4]
    upper = head[:-1] + chr(ord(head[-1]) + 1)
    if dialect == "postgresql":
        line: ColumnElement[str] = func.substr(Person.search_key, 1, _PREFIX_CHARS).collate("C")
    else:
        line = Person.search_key.expression
    after = query.where(line >= _value(key), line < _value(upper)).order_by(line)
    before = query.where(line >= _value(head), line < _value(key)).order_by(line.desc())
    return before, after


def _value(value: str) -> ColumnElement[str]:
    """``value`` written into the statement when it runs, not bound as a parameter.

    psycopg prepares a statement run five times on one connection, and PostgreSQL then
    plans it once for any parameters (a generic plan): counting the keys that begin with
    a common name went from 2 ms to 76 ms a search on a server's long-lived connection
    (300,000 people). With the key in its text a statement is planned for that key."""
    return literal(value, literal_execute=True)


LIKE_ESCAPE = "\\"


def _like_literal(value: str) -> str:
    """``value`` matched literally by ``LIKE ... ESCAPE '\\'``."""
    return "".join(LIKE_ESCAPE + ch if ch in "%_\\" else ch for ch in value)


def _regex_literal(value: str) -> str:
    """``value`` matched literally by a PostgreSQL regular expression: every character
    but letters, digits and spaces behind a backslash (an escaped non-alphanumeric
    character is itself)."""
    return "".join(ch if ch.isalnum() or ch == " " else "\\" + ch for ch in value)


@dataclass(frozen=True, slots=True)
class Pattern:
    """Keys holding ``head``, then ``fewest`` to ``most`` characters of any kind, then
    ``tail`` (a whole string when ``most`` is 0 and ``tail`` is empty)."""

    head: str
    fewest: int = 0
    most: int = 0
    tail: str = ""

    def likes(self) -> list[str]:
        """The pattern as ``LIKE`` patterns (escape character :data:`LIKE_ESCAPE`), one
        per gap width (``_``: any one character)."""
        head, tail = _like_literal(self.head), _like_literal(self.tail)
        return [f"%{head}{'_' * w}{tail}%" for w in range(self.fewest, self.most + 1)]

    def regex(self) -> str:
        """The pattern as a regular expression that finds it anywhere in a key (a search
        key holds no character special to a regular expression; any other character is
        escaped all the same)."""
        gap = f".{{{self.fewest},{self.most}}}" if self.most else ""
        return _regex_literal(self.head) + gap + _regex_literal(self.tail)

    def runs(self) -> tuple[str, ...]:
        """The runs of 3 characters or more that every key it matches holds."""
        return tuple(run for run in (self.head, self.tail) if len(run) >= TRIGRAM)


def one_typo_patterns(key: str) -> list[Pattern]:
    """Patterns that, together, match every key with a line holding ``key``
    (:data:`PIECES_FROM` characters or more) or holding it with one typo (a letter left
    out, added, replaced, or two neighbours swapped), and few other keys.

    ``key`` is cut into four pieces of about a quarter each. One typo inside a piece
    leaves the other three whole: the last three (typo in the first), the first three
    (typo in the last), or the pieces before and after the second or third, with as many
    characters between them as that piece has, one fewer or one more. A swap across a
    cut is one string. Every pattern holds a run of 3 characters or more, most of them
    half the key or longer, for the index to look up."""
    half = len(key) // 2
    # the first piece at least a trigram long where the second keeps two characters: on
    # PostgreSQL a run of two letters gives the index little to look up (10, 11 characters)
    first = max(len(key) // 4, min(TRIGRAM, half - 2))
    cuts = [0, first, half, 3 * len(key) // 4, len(key)]
    wholes = [key[cuts[1] :], key[: cuts[3]]]
    wholes += [key[: cut - 1] + key[cut] + key[cut - 1] + key[cut + 1 :] for cut in cuts[1:4]]
    patterns = [Pattern(whole) for whole in dict.fromkeys(wholes)]
    for piece in (1, 2):
        size = cuts[piece + 1] - cuts[piece]
        patterns.append(Pattern(key[: cuts[piece]], size - 1, size + 1, key[cuts[piece + 1] :]))
    if not all(pattern.runs() for pattern in patterns):
        raise ValueError(f"a key of {len(key)} characters is too short to be cut into pieces")
    return patterns


def neighbours(
    query: Select[str, str, str],
    connection: Connection,
    key: str,
    limit: int,
    *,
    one_typo: bool = False,
) -> Select[str, str, str]:
    """``query`` narrowed to the ``limit`` keys most like ``key`` (3 characters or more),
    most similar first.

    By default: ``pg_trgm`` word similarity (at least :data:`WORD_SIMILARITY_THRESHOLD`)
    on PostgreSQL; on SQLite the keys sharing a trigram, ranked by FTS5's ``bm25``. Both
    rank every key sharing a trigram or two, which grows with the incident.

    ``one_typo`` (search) with a key of :data:`PIECES_FROM` characters or more: the keys
    one of :func:`one_typo_patterns` matches, by person id: every name one typo away and
    few others (the index finds the keys holding a pattern's runs, the patterns are
    tested on those keys alone)."""
    postgres = connection.dialect.name == "postgresql"
    if one_typo and len(key) >= PIECES_FROM:
        patterns = one_typo_patterns(key)
        if postgres:
            # one regular expression: one scan of the GIN index (a LIKE per pattern
            # would scan it for each, the same runs again for each gap width)
            alternatives = "|".join(pattern.regex() for pattern in patterns)
            found = query.where(Person.search_key.regexp_match(_value(f"({alternatives})")))
        else:
            # the FTS5 index finds the keys holding a pattern's runs, the LIKEs test those
            runs = fts5_query(pattern.runs() for pattern in patterns)
            likes = [
                Person.search_key.like(like, escape=LIKE_ESCAPE)
                for p in patterns
                for like in p.likes()
            ]
            found = _matching(query, runs).where(or_(*likes))
        # few keys pass, nearly all of them one typo away: no ranking (FTS5's bm25 costs
        # more than the search). Read in the index's order (FTS5: row ids; PostgreSQL:
        # the bitmap's), so that the statement stops at the bound: where a pattern's
        # run is a common name ("maya gurun" of "maya gurung 42") its thousands of
        # holders all pass, and ordering them by person id read and sorted every one
        # (63 ms at 300,000 people on SQLite; on PostgreSQL the planner walked the
        # primary key testing the expression on each row)
        return found.limit(limit)
    if postgres:
        connection.execute(
            text("SELECT set_config('pg_trgm.word_similarity_threshold', :t, true)"),
            {"t": str(WORD_SIMILARITY_THRESHOLD)},
        )
        return (
            query.where(Person.search_key.op("%>")(key))
            .order_by(func.word_similarity(key, Person.search_key).desc(), Person.id)
            .limit(limit)
        )
    grams = fts5_any(key[i : i + TRIGRAM] for i in range(len(key) - TRIGRAM + 1))
    if grams is None:
        return query.where(false()).limit(limit)
    return _matching(query, grams).order_by(_fts.c.rank).limit(limit)
