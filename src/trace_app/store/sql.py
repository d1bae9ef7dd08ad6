"""SQL expressions shared by the domain's batch readers."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from sqlalchemy import (
    BindParameter,
    Boolean,
    ColumnElement,
    Connection,
    Executable,
    bindparam,
    text,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import FromClause, Join
from sqlalchemy.sql.visitors import InternalTraversal


def in_values(column: Any, values: Iterable[str]) -> ColumnElement[bool]:
    """``column IN (...)`` for a long list of values (hundreds of record ids or words),
    without one bound parameter per value.

    On PostgreSQL the values are written into the statement as quoted constants (quoted
    by the column type's rules, as for any literal). For a batch's long lists read while
    an import is writing the same rows: PostgreSQL has no statistics for rows a
    transaction has just written, so it may read a whole index range of the incident and
    test each row against the list; it hashes the list for that test only when the list
    is made of constants (PostgreSQL 14 and later), and compares with every value
    otherwise, which made each read of a 10,000-person import slower than the last (7 s
    in all).

    On SQLite they go in as one JSON array parameter, read back by ``json_each``, and
    SQLite still looks each one up in the column's index: writing out the 800 strings
    of a name's one-letter changes was a sixth of a duplicates check's Python time
    under a profiler (about 0.6 ms of its 18 ms at a million people).
    """
    return _InValues(column, sorted(set(values)))


class _InValues(ColumnElement[bool]):
    """``column IN`` a list of strings, written out per database (:func:`in_values`)."""

    inherit_cache = True
    _is_implicitly_boolean = True
    type = Boolean()

    def __init__(self, column: Any, values: list[str]) -> None:
        self.column = column
        self.constants: BindParameter[list[str]] = bindparam(
            None, values, expanding=True, literal_execute=True
        )
        self.array: BindParameter[str] = bindparam(None, json.dumps(values))

    # both parameters belong to the statement's cache key, so a cached statement takes
    # each new list's values; each database's form renders one of them
    _traverse_internals = [  # noqa: RUF012 (SQLAlchemy's own declaration)
        ("column", InternalTraversal.dp_clauseelement),
        ("constants", InternalTraversal.dp_clauseelement),
        ("array", InternalTraversal.dp_clauseelement),
    ]


@compiles(_InValues)
def _in_values_default(element: _InValues, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(element.column.in_(element.constants), **kw)


@compiles(_InValues, "sqlite")
def _in_values_sqlite(element: _InValues, compiler: SQLCompiler, **kw: Any) -> str:
    column = compiler.process(element.column, **kw)
    array = compiler.process(element.array, **kw)
    # both pieces are compiled SQL (a column, a bound parameter), no values
    return f"{column} IN (SELECT value FROM json_each({array}))"  # noqa: S608


class _Rare(ColumnElement[bool]):
    """A condition few rows meet, said so to SQLite's planner (:func:`rare`)."""

    inherit_cache = True
    _is_implicitly_boolean = True
    type = Boolean()

    def __init__(self, condition: ColumnElement[bool]) -> None:
        self.condition = condition

    _traverse_internals = [  # noqa: RUF012 (SQLAlchemy's own declaration)
        ("condition", InternalTraversal.dp_clauseelement)
    ]


@compiles(_Rare)
def _rare_default(element: _Rare, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(element.condition, **kw)


@compiles(_Rare, "sqlite")
def _rare_sqlite(element: _Rare, compiler: SQLCompiler, **kw: Any) -> str:
    return f"likelihood({compiler.process(element.condition, **kw)}, 0.0001)"


def rare(condition: ColumnElement[bool]) -> ColumnElement[bool]:
    """``condition``, which SQLite's planner is told few rows meet (``likelihood``);
    unchanged on PostgreSQL, whose statistics know null columns.

    For a lookup on a column that is null in nearly every row (``people.group_id``):
    after ``ANALYZE`` SQLite reads all those nulls as one value shared by every row, takes
    ``group_id IN (...)`` to match most of the table and scans it instead of using the
    index (7 ms at 10,000 people and growing, on every People page)."""
    return _Rare(condition)


# ---- FTS5 full-text queries ----------------------------------------------------------
# The trigram tables (``people_search_fts``, ``name_words_fts``) are asked with a
# full-text query, a small language of its own: an empty query, a bare word with a quote
# or a parenthesis, or ``AND`` written by a user is a syntax error (HTTP 500 on a person
# page for a name like "Li Li", whose only word is shorter than a trigram, issue 38).
# Every query sent to them is built here, from strings quoted as FTS5 strings, and a
# query that would hold nothing is never built.

FTS5_TRIGRAM = 3  # a trigram table finds no string shorter than this


def fts5_string(value: str) -> str:
    """``value`` as one FTS5 string (a phrase): in double quotes, each double quote
    doubled. Whatever ``value`` holds, it is never read as FTS5 syntax."""
    return '"' + value.replace('"', '""') + '"'


def fts5_query(groups: Iterable[Iterable[str]]) -> str | None:
    """An FTS5 query for the rows holding every string of at least one of ``groups``
    (``("a" AND "b") OR ("c")``), or ``None`` when no group holds a string a trigram
    table can look up: the caller then asks nothing (an empty query is a syntax error).

    Strings shorter than :data:`FTS5_TRIGRAM` are left out of their group (a trigram
    table matches no row with them); a group left empty is left out, so the query may
    match fewer rows than the groups say, never more: callers test what it returns
    (``LIKE``) or promise no more than the index finds."""
    alternatives: list[str] = []
    for group in groups:
        strings = [fts5_string(s) for s in dict.fromkeys(group) if len(s) >= FTS5_TRIGRAM]
        if strings:
            alternatives.append("(" + " AND ".join(strings) + ")")
    return " OR ".join(dict.fromkeys(alternatives)) or None


def fts5_any(strings: Iterable[str]) -> str | None:
    """An FTS5 query for the rows holding any of ``strings`` (:func:`fts5_query`)."""
    return fts5_query([s] for s in strings)


# ---- join order ----------------------------------------------------------------------


class _DrivingJoin(Join):
    """A join whose left side SQLite reads first (:func:`driving_join`)."""

    inherit_cache = True


@compiles(_DrivingJoin, "sqlite")
def _driving_join_sqlite(element: _DrivingJoin, compiler: SQLCompiler, **kw: Any) -> str:
    # SQLAlchemy's own join (it tells the statement's linter what is joined), its
    # keyword changed: "left JOIN right ON ..." with left a table's name
    left = compiler.process(
        element.left, asfrom=True, **{k: v for k, v in kw.items() if k != "asfrom"}
    )
    joined: str = compiler.visit_join(element, **kw)  # type: ignore[no-untyped-call]
    if not joined.startswith(left + " JOIN "):
        raise ValueError(f"cannot make {joined!r} a CROSS JOIN")
    return f"{left} CROSS JOIN {joined[len(left) + len(' JOIN ') :]}"


def driving_join(left: FromClause, right: FromClause, onclause: Any) -> Join:
    """``left JOIN right ON onclause``, with ``left`` read first on SQLite (``CROSS
    JOIN``, an order SQLite's planner never changes); a plain join elsewhere.

    For an FTS5 table joined to ``people`` (issue 43): without statistics (Trace never
    runs ``ANALYZE``) SQLite read the incident's people through its index and asked the
    FTS5 table once per person, 3.3 s for one search at 10,000 people; read from the
    FTS5 table, the statement stops at its ``LIMIT``."""
    return _DrivingJoin(left, right, onclause)


def rows_without_plans(
    connection: Connection, plans: Iterable[str], statement: Executable
) -> list[Any]:
    """The rows of ``statement``, read on PostgreSQL with the planner's ``plans``
    (``enable_seqscan``, ``enable_indexscan``, ...) off for this one statement, the
    settings put back as they were afterwards; elsewhere simply its rows.

    For a trigram lookup whose matches the planner cannot estimate (a regular expression
    over ``people.search_key``): it guessed that many rows pass and read the table, or
    walked the primary key, testing every row until the ``LIMIT`` (19 ms at 300,000
    people when a common name's holders pass; the whole table when nothing does)."""
    if connection.dialect.name != "postgresql":
        return list(connection.execute(statement))
    names = sorted(set(plans))
    # one round trip each way: the settings read and switched off, then put back
    reads = ", ".join(
        f"current_setting(:p{at}), set_config(:p{at}, 'off', true)" for at in range(len(names))
    )
    keys = {f"p{at}": plan for at, plan in enumerate(names)}
    row = connection.execute(text(f"SELECT {reads}"), keys).one()
    was = [row[2 * at] or "on" for at in range(len(names))]
    try:
        return list(connection.execute(statement))
    finally:
        puts = ", ".join(f"set_config(:p{at}, :v{at}, true)" for at in range(len(names)))
        values = {f"v{at}": value for at, value in enumerate(was)}
        connection.execute(text(f"SELECT {puts}"), {**keys, **values})
