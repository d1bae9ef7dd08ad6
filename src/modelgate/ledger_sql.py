"""The ledger in a SQL database (SQLite or PostgreSQL), one row per ledger name.

Same contract as ``JsonFileLedger`` (see ``modelgate.ledger``), so that a cap can hold
across several app replicas sharing one PostgreSQL server.

What is locked, and for how long:

- PostgreSQL: ``reserve`` runs one short transaction that takes the ledger row with
  ``SELECT ... FOR UPDATE NOWAIT``; a row already locked makes it abstain
  (``LedgerBusy``) at once. ``settle`` waits for the row up to ``settle_wait_s``
  (``SET LOCAL lock_timeout``).
- SQLite: ``reserve`` opens ``BEGIN IMMEDIATE`` with ``busy_timeout`` 0, so a second
  writer abstains at once; ``settle`` uses a ``busy_timeout`` of ``settle_wait_s``.
- ``exclusive()``: a lease in the row itself (``holder``, ``held_until``), taken and
  released in short transactions. While it is held, every other ``reserve`` or
  ``exclusive`` abstains; reserves inside the block (same context) pass. The lease
  expires after ``hold_ttl_s`` so that a crashed holder cannot block the ledger for
  ever; expiry is judged by the clocks of the app servers.

Each transaction commits before ``reserve`` returns, so a request is durable in the
database before it is sent, and a process killed afterwards leaves it counted.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import sqlite3
import time
import uuid
from collections.abc import Iterator
from typing import Any

from sqlalchemy import BigInteger, Column, Float, MetaData, String, Table, insert, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError

from modelgate.errors import BudgetExhausted, LedgerBusy, LedgerUnavailable
from modelgate.ledger import COUNTERS, LedgerSnapshot, Reservation, clamp_cap, in_process_turn
from modelgate.types import Usage

log = logging.getLogger(__name__)

TABLE_NAME = "modelgate_ledger"
_metadata = MetaData()
ledger_table = Table(
    TABLE_NAME,
    _metadata,
    Column("name", String(200), primary_key=True),
    Column("requests", BigInteger, nullable=False),
    Column("prompt_tokens", BigInteger, nullable=False),
    Column("completion_tokens", BigInteger, nullable=False),
    Column("estimated_tokens", BigInteger, nullable=False),
    Column("holder", String(64), nullable=True),
    Column("held_until", Float, nullable=True),
    Column("updated_at", Float, nullable=True),
)

_SQLITE_BUSY_CODES = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED
_PG_LOCK_NOT_AVAILABLE = "55P03"

# ledger key -> lease token held by ``exclusive()`` in this context
_HELD: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "modelgate_sql_ledger_held", default=None
)


def _is_busy(error: BaseException) -> bool:
    orig = getattr(error, "orig", None)
    if isinstance(orig, sqlite3.OperationalError):
        return getattr(orig, "sqlite_errorcode", None) in _SQLITE_BUSY_CODES
    return getattr(orig, "sqlstate", None) == _PG_LOCK_NOT_AVAILABLE


class SqlLedger:
    """``SqlLedger(engine, name="trace", cap=200)``; the table is created when missing."""

    def __init__(
        self,
        engine: Engine,
        *,
        name: str = "default",
        cap: int = 200,
        settle_wait_s: float = 2.0,
        hold_ttl_s: float = 300.0,
        create_table: bool = True,
    ) -> None:
        if engine.dialect.name not in ("sqlite", "postgresql"):
            raise ValueError(f"SqlLedger supports SQLite and PostgreSQL, not {engine.dialect.name}")
        self.engine = engine
        self.name = name
        self.cap = clamp_cap(cap)
        self.settle_wait_s = settle_wait_s
        self.hold_ttl_s = hold_ttl_s
        self._key = f"{engine.url.render_as_string(hide_password=True)}#{name}"
        if create_table:
            try:
                _metadata.create_all(engine, checkfirst=True)
            except SQLAlchemyError as exc:
                raise LedgerUnavailable(f"ledger table: {type(exc).__name__}") from None

    def __repr__(self) -> str:
        url = self.engine.url.render_as_string(hide_password=True)
        return f"SqlLedger({url!r}, name={self.name!r}, cap={self.cap})"

    # --- transactions ------------------------------------------------------------

    @contextlib.contextmanager
    def _transaction(self, *, wait_s: float) -> Iterator[Connection]:
        with in_process_turn(self._key, wait_s), self._database_transaction(wait_s) as conn:
            yield conn

    @contextlib.contextmanager
    def _database_transaction(self, wait_s: float) -> Iterator[Connection]:
        try:
            with self.engine.connect() as conn:
                if self.engine.dialect.name == "sqlite":
                    with self._sqlite_immediate(conn, wait_s) as locked:
                        yield locked
                else:
                    with conn.begin():
                        timeout_ms = max(1, int(wait_s * 1000)) if wait_s > 0 else 1
                        conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{timeout_ms}ms'")
                        yield conn
        except (LedgerUnavailable, BudgetExhausted):
            raise
        except IntegrityError:
            raise LedgerBusy(f"ledger {self.name!r} was created concurrently; abstaining") from None
        except DBAPIError as exc:
            if _is_busy(exc):
                raise LedgerBusy(f"ledger {self.name!r} is locked; abstaining") from None
            raise LedgerUnavailable(f"ledger {self.name!r}: {type(exc.orig).__name__}") from None
        except SQLAlchemyError as exc:
            raise LedgerUnavailable(f"ledger {self.name!r}: {type(exc).__name__}") from None

    @contextlib.contextmanager
    def _sqlite_immediate(self, conn: Connection, wait_s: float) -> Iterator[Connection]:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        previous = conn.exec_driver_sql("PRAGMA busy_timeout").scalar() or 0
        conn.exec_driver_sql(f"PRAGMA busy_timeout = {int(wait_s * 1000)}")
        try:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.exec_driver_sql("ROLLBACK")
                raise
            conn.exec_driver_sql("COMMIT")
        finally:
            conn.exec_driver_sql(f"PRAGMA busy_timeout = {int(previous)}")

    def _locked_row(self, conn: Connection, *, nowait: bool) -> dict[str, Any] | None:
        query = select(ledger_table).where(ledger_table.c.name == self.name)
        if conn.dialect.name == "postgresql":
            query = query.with_for_update(nowait=nowait)
        row = conn.execute(query).mappings().first()
        if row is None:
            return None
        data = dict(row)
        for key in COUNTERS:
            value = data.get(key)
            if not isinstance(value, int) or value < 0:
                raise LedgerUnavailable(f"ledger {self.name!r}: {key} is invalid ({value!r})")
        return data

    def _create_row(self, conn: Connection, **values: Any) -> None:
        row = dict.fromkeys(COUNTERS, 0) | {"name": self.name, "updated_at": time.time()}
        conn.execute(insert(ledger_table).values(**(row | values)))

    def _held_by_other(self, row: dict[str, Any], now: float) -> bool:
        holder = row.get("holder")
        if not holder or (row.get("held_until") or 0.0) <= now:
            return False
        mine = (_HELD.get() or {}).get(self._key)
        return bool(holder != mine)

    # --- contract ----------------------------------------------------------------

    def reserve(self, *, estimated_tokens: int) -> Reservation:
        if estimated_tokens < 0:
            raise ValueError("estimated_tokens must be >= 0")
        with self._transaction(wait_s=0.0) as conn:
            now = time.time()
            row = self._locked_row(conn, nowait=True)
            if row is None:
                self._create_row(conn, requests=1, estimated_tokens=estimated_tokens)
                number = 1
            else:
                if self._held_by_other(row, now):
                    raise LedgerBusy(f"ledger {self.name!r} is held by another check; abstaining")
                if row["requests"] >= self.cap:
                    raise BudgetExhausted(
                        f"request cap {self.cap} reached ({row['requests']} requests)",
                        cap=self.cap,
                        requests=row["requests"],
                    )
                number = row["requests"] + 1
                conn.execute(
                    update(ledger_table)
                    .where(ledger_table.c.name == self.name)
                    .values(
                        requests=number,
                        estimated_tokens=row["estimated_tokens"] + estimated_tokens,
                        updated_at=now,
                    )
                )
        return Reservation(
            ledger=self._key, number=number, estimated_tokens=estimated_tokens, reserved_at=now
        )

    def settle(self, reservation: Reservation, usage: Usage) -> None:
        if usage.source != "provider" or usage.total_tokens == 0:
            return
        with self._transaction(wait_s=self.settle_wait_s) as conn:
            row = self._locked_row(conn, nowait=False)
            if row is None:
                raise LedgerUnavailable(f"ledger {self.name!r} vanished after a reservation")
            conn.execute(
                update(ledger_table)
                .where(ledger_table.c.name == self.name)
                .values(
                    prompt_tokens=row["prompt_tokens"] + usage.prompt_tokens,
                    completion_tokens=row["completion_tokens"] + usage.completion_tokens,
                    updated_at=time.time(),
                )
            )

    def snapshot(self) -> LedgerSnapshot:
        try:
            with self.engine.connect() as conn:
                row = (
                    conn.execute(select(ledger_table).where(ledger_table.c.name == self.name))
                    .mappings()
                    .first()
                )
        except SQLAlchemyError as exc:
            raise LedgerUnavailable(f"ledger {self.name!r}: {type(exc).__name__}") from None
        if row is None:
            return LedgerSnapshot(cap=self.cap, **dict.fromkeys(COUNTERS, 0))
        counts: dict[str, int] = {}
        for key in COUNTERS:
            value = row[key]
            if not isinstance(value, int) or value < 0:
                raise LedgerUnavailable(f"ledger {self.name!r}: {key} is invalid ({value!r})")
            counts[key] = value
        return LedgerSnapshot(cap=self.cap, **counts)

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        held = _HELD.get() or {}
        if self._key in held:
            yield
            return
        token = uuid.uuid4().hex
        with self._transaction(wait_s=0.0) as conn:
            now = time.time()
            row = self._locked_row(conn, nowait=True)
            if row is None:
                self._create_row(conn, holder=token, held_until=now + self.hold_ttl_s)
            else:
                if self._held_by_other(row, now):
                    raise LedgerBusy(f"ledger {self.name!r} is held by another check; abstaining")
                conn.execute(
                    update(ledger_table)
                    .where(ledger_table.c.name == self.name)
                    .values(holder=token, held_until=now + self.hold_ttl_s)
                )
        context_token = _HELD.set({**held, self._key: token})
        try:
            yield
        finally:
            _HELD.reset(context_token)
            try:
                with self._transaction(wait_s=self.settle_wait_s) as conn:
                    conn.execute(
                        update(ledger_table)
                        .where(ledger_table.c.name == self.name, ledger_table.c.holder == token)
                        .values(holder=None, held_until=None)
                    )
            except (LedgerUnavailable, BudgetExhausted) as error:
                # never mask the block's own outcome; the lease expires by itself
                log.warning("ledger %r: lease not released (%s)", self.name, error.code)
