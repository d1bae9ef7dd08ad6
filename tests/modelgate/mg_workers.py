"""Child-process workers for ledger tests (importable by ``multiprocessing`` spawn)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from multiprocessing.synchronize import Barrier, Event
from pathlib import Path
from typing import Any

from mg_helpers import Label, make_request

from modelgate.errors import ModelGateError
from modelgate.gateway import Gateway
from modelgate.ledger import JsonFileLedger, Ledger
from modelgate.ledger_sql import SqlLedger
from modelgate.providers import ProviderConfig, build_provider

SLOW_S = 0.5


@dataclass(frozen=True)
class LedgerSpec:
    """How to open the same ledger from any process."""

    kind: str  # "json" | "sql"
    location: str  # file path or SQLAlchemy URL
    name: str = "test"

    def open(self, cap: int = 200, **kwargs: Any) -> Ledger:
        if self.kind == "json":
            return JsonFileLedger(Path(self.location), cap=cap, **kwargs)
        from sqlalchemy import create_engine

        return SqlLedger(create_engine(self.location), name=self.name, cap=cap, **kwargs)


def slow_down_critical_section() -> None:
    """Make the reserve critical section last ``SLOW_S`` so two callers surely overlap."""
    original_write = JsonFileLedger._write

    def slow_write(self: JsonFileLedger, counts: dict[str, int]) -> None:
        time.sleep(SLOW_S)
        original_write(self, counts)

    original_row = SqlLedger._locked_row

    def slow_row(self: SqlLedger, conn: Any, *, nowait: bool) -> Any:
        row = original_row(self, conn, nowait=nowait)
        time.sleep(SLOW_S)
        return row

    JsonFileLedger._write = slow_write  # type: ignore[method-assign]
    SqlLedger._locked_row = slow_row  # type: ignore[method-assign]


def racing_reserve(spec: LedgerSpec, barrier: Barrier, results: Any) -> None:
    slow_down_critical_section()
    ledger = spec.open()
    barrier.wait()
    try:
        ledger.reserve(estimated_tokens=10)
        results.put("reserved")
    except ModelGateError as error:
        results.put(error.code)


def hold_exclusive(spec: LedgerSpec, ready: Event, release: Event) -> None:
    ledger = spec.open()
    with ledger.exclusive():
        ready.set()
        release.wait(timeout=30)


def reserve_then_wait_for_answer(spec: LedgerSpec, base_url: str) -> None:
    """Reserve and send a request to a server that answers too late: killed meanwhile."""
    provider = build_provider(
        ProviderConfig(name="slow", base_url=base_url, model="m", timeout_s=60)
    )
    gateway = Gateway([provider], ledger=spec.open())
    asyncio.run(gateway.attempt(make_request(), Label))
