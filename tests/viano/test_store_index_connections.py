"""The store index (ADR 0044): WAL, connections reused while operations run and closed
when the last one ends."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from viano_helpers import intake_package

from viano_bug_analysis.case import CaseBuilder
from viano_bug_analysis.packages import PackageStore


def _journal_mode(root: Path) -> str:
    conn = sqlite3.connect(root / "index.sqlite")
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        conn.close()


def test_index_is_in_wal_mode_and_an_idle_store_holds_no_connection(tmp_path: Path) -> None:
    store = PackageStore.init(tmp_path / "s")
    store.add(intake_package(tmp_path / "in.zip"))
    CaseBuilder(store).build("demo-case", "supplied")
    # every operation has ended: the last connection closed, which checkpoints the WAL
    # and removes it (a connection left open would keep index.sqlite-wal on disk)
    assert not (store.root / "index.sqlite-wal").exists()
    assert _journal_mode(store.root) == "wal"
    assert store.current("demo-case", "supplied").generation == 2


def test_connections_are_shared_across_threads_during_an_operation(tmp_path: Path) -> None:
    store = PackageStore.init(tmp_path / "s")
    store.add(intake_package(tmp_path / "in.zip"))
    seen: list[int] = []
    errors: list[BaseException] = []

    def query() -> None:
        try:
            for _ in range(20):
                seen.append(store.current("demo-case", "supplied").generation)
        except BaseException as exc:  # a connection used from another thread would raise
            errors.append(exc)

    with store.lock("demo-case", "supplied"):
        query()  # leaves an idle connection created by this thread
        threads = [threading.Thread(target=query) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert (store.root / "index.sqlite-wal").exists()  # connections kept open meanwhile
    assert errors == []
    assert seen == [1] * 100
    assert not (store.root / "index.sqlite-wal").exists()
