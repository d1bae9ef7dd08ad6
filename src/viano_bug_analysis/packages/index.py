"""The SQLite index of a package store: cases, packages and generations.

The generation files are the truth; the index is a cache of them that ``repair``
rebuilds (ADR 0020). It trades durability for speed (ADR 0044): write-ahead log, and
commits that do not wait for fsync (``synchronous=NORMAL``). A process crash loses
nothing; a power loss may lose the last commits, and the next ``open()`` repairs them
from the fsynced generation files. Readers never wait for a writer in WAL mode.

Connection and lock policy (the one place for both): while operations of the store run
(:meth:`StoreIndex.in_use`), connections are reused from any thread, one user at a time
(opening one costs more than a commit, and closing the last one checkpoints the WAL with
fsyncs); they are closed when the last operation ends, so an idle store holds none.
Writers of this process queue on a lock instead of in SQLite's busy handler, which
sleeps 1, 2, 5, 10 ... ms between tries (other processes still meet it).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

_SCHEMA = """
PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS cases (
    case_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS packages (
    case_id TEXT NOT NULL,
    package_id TEXT NOT NULL,
    current_generation INTEGER NOT NULL,
    analysis_revision INTEGER NOT NULL,
    phase TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (case_id, package_id)
);
CREATE TABLE IF NOT EXISTS generations (
    case_id TEXT NOT NULL,
    package_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    analysis_revision INTEGER NOT NULL,
    phase TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    published_at TEXT NOT NULL,
    PRIMARY KEY (case_id, package_id, generation)
);
"""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class StoreIndex:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._idle: list[sqlite3.Connection] = []
        self._users = 0  # running operations
        self._pool_lock = threading.Lock()
        self._write_lock = threading.Lock()

    def create(self) -> None:
        """Create the tables when missing (and set WAL mode)."""
        with self._connection() as db:
            db.executescript(_SCHEMA)

    @contextlib.contextmanager
    def in_use(self) -> Iterator[None]:
        """Keep connections open for reuse while an operation runs."""
        with self._pool_lock:
            self._users += 1
        try:
            yield
        finally:
            with self._pool_lock:
                self._users -= 1
                idle: list[sqlite3.Connection] = []
                if self._users == 0:
                    idle, self._idle = self._idle, []
            for conn in idle:
                conn.close()

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        with self._pool_lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = sqlite3.connect(
                self.path, timeout=30, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA synchronous=NORMAL")
        reusable = False
        try:
            yield conn
            reusable = not conn.in_transaction
        finally:
            with self._pool_lock:
                keep = reusable and self._users > 0
                if keep:
                    self._idle.append(conn)
            if not keep:
                conn.close()

    # -- reading ------------------------------------------------------------------------

    def current(self, case_id: str, package_id: str) -> tuple[int, tuple[str, int] | None] | None:
        """(current generation, its (sha256, size) when indexed) of a package, or None."""
        with self._connection() as db:
            row = db.execute(
                "SELECT p.current_generation, g.sha256, g.size FROM packages p "
                "LEFT JOIN generations g ON g.case_id = p.case_id "
                "AND g.package_id = p.package_id AND g.generation = p.current_generation "
                "WHERE p.case_id=? AND p.package_id=?",
                (case_id, package_id),
            ).fetchone()
        if row is None:
            return None
        return int(row[0]), None if row[1] is None else (str(row[1]), int(row[2]))

    def generation(self, case_id: str, package_id: str, generation: int) -> tuple[str, int] | None:
        """(sha256, size) of an indexed generation, or None."""
        with self._connection() as db:
            row = db.execute(
                "SELECT sha256, size FROM generations WHERE case_id=? AND package_id=? "
                "AND generation=?",
                (case_id, package_id, generation),
            ).fetchone()
        return None if row is None else (str(row[0]), int(row[1]))

    def packages(self) -> list[dict[str, object]]:
        """Rows of every package (case_id, package_id, generation, revision, phase)."""
        with self._connection() as db:
            rows = db.execute(
                "SELECT case_id, package_id, current_generation, analysis_revision, phase "
                "FROM packages ORDER BY case_id, package_id"
            ).fetchall()
        return [
            {
                "case_id": r[0],
                "package_id": r[1],
                "package_generation": r[2],
                "analysis_revision": r[3],
                "phase": r[4],
            }
            for r in rows
        ]

    def cases(self) -> list[str]:
        with self._connection() as db:
            return [str(r[0]) for r in db.execute("SELECT case_id FROM cases ORDER BY case_id")]

    # -- writing ------------------------------------------------------------------------

    def record(
        self,
        case_id: str,
        package_id: str,
        generation: int,
        analysis_revision: int,
        phase: str,
        sha256: str,
        size: int,
    ) -> None:
        """Index a published generation in one transaction; it becomes the package's
        current generation unless a later one is current already."""
        now = _now()
        row = (case_id, package_id, generation, analysis_revision, phase, sha256, size, now)
        with self._write_lock, self._connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "INSERT OR IGNORE INTO cases(case_id, created_at) VALUES (?, ?)",
                    (case_id, now),
                )
                db.execute(
                    "INSERT OR REPLACE INTO generations VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row
                )
                db.execute(
                    "INSERT INTO packages VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(case_id, package_id) DO UPDATE SET "
                    "current_generation=excluded.current_generation, "
                    "analysis_revision=excluded.analysis_revision, phase=excluded.phase, "
                    "sha256=excluded.sha256, size=excluded.size, updated_at=excluded.updated_at "
                    "WHERE excluded.current_generation >= packages.current_generation",
                    row,
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def forget(self, case_id: str, package_id: str) -> None:
        """Drop a package's row (its generation rows stay, as history)."""
        with self._write_lock, self._connection() as db:
            db.execute(
                "DELETE FROM packages WHERE case_id=? AND package_id=?", (case_id, package_id)
            )
