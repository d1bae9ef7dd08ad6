"""SQL expressions shared by the domain's batch readers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import BindParameter, ColumnElement, bindparam


def in_values(column: Any, values: Iterable[str]) -> ColumnElement[bool]:
    """``column IN (...)`` with the values written into the statement as quoted
    constants instead of one bound parameter each.

    For a batch's long lists (hundreds of record ids or names) read while an import is
    writing the same rows. PostgreSQL has no statistics for rows a transaction has just
    written, so it may read a whole index range of the incident and test each row
    against the list; it hashes the list for that test only when the list is made of
    constants (PostgreSQL 14 and later), and compares with every value otherwise, which
    made each read of a 10,000-person import slower than the last (7 s in all).
    SQLAlchemy quotes every value by the column type's rules, as for any literal.
    """
    constants: BindParameter[list[str]] = bindparam(
        None, sorted(set(values)), expanding=True, literal_execute=True
    )
    condition: ColumnElement[bool] = column.in_(constants)
    return condition
