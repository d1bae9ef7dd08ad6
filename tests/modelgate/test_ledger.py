"""The ledger contract, run on every backend: JSON file, SQLite and PostgreSQL."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from mg_helpers import GOOD_ANSWER, Label, make_request
from mg_workers import LedgerSpec, hold_exclusive, racing_reserve, reserve_then_wait_for_answer
from sqlalchemy import create_engine, text

from modelgate.errors import (
    AllProvidersFailed,
    AttemptTimeout,
    BudgetExhausted,
    LedgerBusy,
    LedgerUnavailable,
    MalformedAnswer,
    TransportError,
)
from modelgate.gateway import Gateway
from modelgate.ledger import CAP_MAX, JsonFileLedger, Ledger, cap_from_env
from modelgate.providers import Provider, ScriptedProvider, ScriptedReply
from modelgate.testing import StubChatServer, StubResponse
from modelgate.types import ModelRequest, ProviderResponse, Usage

SPAWN = multiprocessing.get_context("spawn")


@pytest.fixture(params=["json", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> LedgerSpec:
    if request.param == "json":
        return LedgerSpec("json", str(tmp_path / "usage" / "model-usage.json"))
    if request.param == "sqlite":
        return LedgerSpec("sql", f"sqlite:///{tmp_path / 'ledger.db'}")
    url: str = request.getfixturevalue("pg_url")
    return LedgerSpec("sql", url)


# --- reserve before the call, never refund -------------------------------------------


class _LedgerPeekingProvider(Provider):
    """A provider that looks at the ledger while its request is in flight."""

    name = "peek"
    model = "peek-model"
    timeout_s = 5.0

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.seen_requests: list[int] = []

    async def complete(self, request: ModelRequest) -> ProviderResponse:
        self.seen_requests.append(self.ledger.snapshot().requests)
        return ProviderResponse(text=GOOD_ANSWER, model=self.model, usage=Usage(40, 5, "provider"))


async def test_reserve_is_written_before_the_request_is_sent(spec: LedgerSpec) -> None:
    ledger = spec.open()
    provider = _LedgerPeekingProvider(spec.open())
    gateway = Gateway([provider], ledger=ledger)
    await gateway.attempt(make_request(), Label)
    await gateway.attempt(make_request(), Label)
    assert provider.seen_requests == [1, 2]
    snapshot = ledger.snapshot()
    assert (snapshot.requests, snapshot.prompt_tokens, snapshot.completion_tokens) == (2, 80, 10)
    estimate = make_request().input_characters() // 4 + 150 + 16
    assert snapshot.estimated_tokens == 2 * estimate


async def test_failures_and_timeouts_stay_counted(spec: LedgerSpec) -> None:
    ledger = spec.open()
    provider = ScriptedProvider(
        [
            TransportError("reset"),
            ScriptedReply(text=GOOD_ANSWER, delay_s=5.0),  # overruns the clock
            '{"colour": "BLUE", "note": "x"}',  # outside the set
            "not json",
        ],
        timeout_s=0.2,
    )
    gateway = Gateway([provider], ledger=ledger)
    for expected in (TransportError, AttemptTimeout):
        with pytest.raises(AllProvidersFailed) as caught:
            await gateway.attempt(make_request(), Label)
        assert isinstance(caught.value.errors[0], expected)
    for _ in range(2):
        with pytest.raises(MalformedAnswer.__mro__[1]):  # BadAnswer
            await gateway.attempt(make_request(), Label)
    snapshot = ledger.snapshot()
    assert snapshot.requests == 4
    assert snapshot.prompt_tokens == 0  # nothing provider-reported came back


async def test_cap_reached_refuses_without_sending(spec: LedgerSpec) -> None:
    ledger = spec.open(cap=2)
    provider = ScriptedProvider([GOOD_ANSWER] * 3)
    gateway = Gateway([provider], ledger=ledger)
    await gateway.attempt(make_request(), Label)
    await gateway.attempt(make_request(), Label)
    with pytest.raises(BudgetExhausted) as caught:
        await gateway.attempt(make_request(), Label)
    assert (caught.value.cap, caught.value.requests) == (2, 2)
    assert len(provider.requests) == 2
    assert provider.pending == 1
    assert ledger.snapshot().requests == 2
    # a larger cap later (a new deploy setting) lets calls go again
    assert spec.open(cap=3).reserve(estimated_tokens=1).number == 3


def test_settle_adds_provider_tokens_and_estimates_add_nothing(spec: LedgerSpec) -> None:
    ledger = spec.open()
    first = ledger.reserve(estimated_tokens=100)
    ledger.settle(first, Usage(30, 7, "provider"))
    second = ledger.reserve(estimated_tokens=50)
    ledger.settle(second, Usage(999, 999, "estimate"))
    assert (first.number, second.number) == (1, 2)
    assert ledger.snapshot().as_dict() == {
        "requests": 2,
        "prompt_tokens": 30,
        "completion_tokens": 7,
        "estimated_tokens": 150,
        "cap": 200,
    }


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, 200),
        ("", 200),
        ("37", 37),
        (" 42 ", 42),
        ("0", 1),
        ("-5", 1),
        ("5000", CAP_MAX),
        ("1000", 1000),
        ("abc", 200),
        ("12.5", 200),
    ],
)
def test_cap_from_env_is_clamped(
    monkeypatch: pytest.MonkeyPatch, raw: str | None, expected: int
) -> None:
    if raw is None:
        monkeypatch.delenv("MG_TEST_CAP", raising=False)
    else:
        monkeypatch.setenv("MG_TEST_CAP", raw)
    assert cap_from_env("MG_TEST_CAP") == expected


def test_cap_default_is_clamped_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MG_TEST_CAP", raising=False)
    assert cap_from_env("MG_TEST_CAP", default=0) == 1
    assert cap_from_env("MG_TEST_CAP", default=10_000) == 1000
    assert JsonFileLedger(Path("unused.json"), cap=5000).cap == 1000


def test_missing_ledger_is_created_with_zero_counts(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "model-usage.json"
    ledger = JsonFileLedger(path)
    assert ledger.snapshot().requests == 0
    assert not path.exists()  # a read writes nothing
    ledger.reserve(estimated_tokens=5)
    data = json.loads(path.read_text())
    assert (data["requests"], data["estimated_tokens"], data["prompt_tokens"]) == (1, 5, 0)


# --- refusing a bad ledger without rewriting it -------------------------------------

BAD_FILES = {
    "empty": b"",
    "whitespace": b"  \n",
    "not-json": b'{"requests": 3,',
    "not-an-object": b"[1, 2, 3]",
    "negative": b'{"requests": -1, "prompt_tokens": 0, "completion_tokens": 0, '
    b'"estimated_tokens": 0}',
    "missing-field": b'{"requests": 1, "prompt_tokens": 0, "completion_tokens": 0}',
    "string-count": b'{"requests": "1", "prompt_tokens": 0, "completion_tokens": 0, '
    b'"estimated_tokens": 0}',
    "float-count": b'{"requests": 1.5, "prompt_tokens": 0, "completion_tokens": 0, '
    b'"estimated_tokens": 0}',
    "bool-count": b'{"requests": true, "prompt_tokens": 0, "completion_tokens": 0, '
    b'"estimated_tokens": 0}',
    "unknown-field": b'{"requests": 1, "prompt_tokens": 0, "completion_tokens": 0, '
    b'"estimated_tokens": 0, "refund": 1}',
    "binary": b"\xff\xfe\x00garbage",
}


@pytest.mark.parametrize("content", list(BAD_FILES))
async def test_bad_json_ledger_refuses_and_is_never_rewritten(tmp_path: Path, content: str) -> None:
    path = tmp_path / "model-usage.json"
    path.write_bytes(BAD_FILES[content])
    old = os.stat(path)
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns - 5_000_000_000))
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    ledger = JsonFileLedger(path)
    provider = ScriptedProvider([GOOD_ANSWER])
    with pytest.raises(LedgerUnavailable):
        await Gateway([provider], ledger=ledger).attempt(make_request(), Label)
    with pytest.raises(LedgerUnavailable):
        ledger.snapshot()
    with pytest.raises(LedgerUnavailable):
        ledger.settle(ledger_reservation_stub(), Usage(1, 1, "provider"))
    assert provider.requests == []
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name, path.name + ".lock"]


def ledger_reservation_stub() -> Any:
    from modelgate.ledger import Reservation

    return Reservation(ledger="x", number=1, estimated_tokens=1, reserved_at=0.0)


def test_unreadable_json_ledger_refuses(tmp_path: Path) -> None:
    path = tmp_path / "model-usage.json"
    path.mkdir()  # a folder where the file should be: unreadable as a ledger
    with pytest.raises(LedgerUnavailable):
        JsonFileLedger(path).reserve(estimated_tokens=1)
    assert path.is_dir() and not any(path.iterdir())


@pytest.mark.parametrize("column", ["requests", "prompt_tokens", "estimated_tokens"])
@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
async def test_negative_sql_ledger_refuses_and_is_never_rewritten(
    request: pytest.FixtureRequest, tmp_path: Path, column: str, backend: str
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'l.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    spec = LedgerSpec("sql", url)
    spec.open().reserve(estimated_tokens=3)
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(f"UPDATE modelgate_ledger SET {column} = -4"))
    rows_before = _rows(engine)
    provider = ScriptedProvider([GOOD_ANSWER])
    with pytest.raises(LedgerUnavailable):
        await Gateway([provider], ledger=spec.open()).attempt(make_request(), Label)
    with pytest.raises(LedgerUnavailable):
        spec.open().snapshot()
    assert provider.requests == []
    assert _rows(engine) == rows_before
    engine.dispose()


def _rows(engine: Any) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text("SELECT * FROM modelgate_ledger"))]


def test_unreachable_sql_ledger_is_unavailable(tmp_path: Path) -> None:
    folder = tmp_path / "no-such-folder"
    from modelgate.ledger_sql import SqlLedger

    with pytest.raises(LedgerUnavailable):
        SqlLedger(create_engine(f"sqlite:///{folder / 'x.db'}"), name="t")


# --- concurrency: abstain, never queue -------------------------------------------------


def test_exclusive_hold_makes_other_reservations_abstain(spec: LedgerSpec) -> None:
    ledger = spec.open()
    outcomes: list[str] = []

    def other_thread() -> None:  # a thread has its own context: another holder
        try:
            spec.open().reserve(estimated_tokens=1)
            outcomes.append("reserved")
        except LedgerBusy:
            outcomes.append("busy")

    with ledger.exclusive():
        first = ledger.reserve(estimated_tokens=1)  # inside the hold: allowed
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        second = ledger.reserve(estimated_tokens=1)
        ledger.settle(second, Usage(2, 3, "provider"))
    assert (first.number, second.number) == (1, 2)
    assert outcomes == ["busy"]
    assert spec.open().reserve(estimated_tokens=1).number == 3  # released


def test_second_process_abstains_while_a_check_holds_the_ledger(spec: LedgerSpec) -> None:
    spec.open().reserve(estimated_tokens=1)
    ready, release = SPAWN.Event(), SPAWN.Event()
    holder = SPAWN.Process(target=hold_exclusive, args=(spec, ready, release))
    holder.start()
    try:
        assert ready.wait(timeout=60)
        with pytest.raises(LedgerBusy):
            spec.open().reserve(estimated_tokens=1)
        with pytest.raises(LedgerBusy):
            with spec.open().exclusive():
                pass
    finally:
        release.set()
        holder.join(timeout=30)
    assert holder.exitcode == 0
    assert spec.open().reserve(estimated_tokens=1).number == 2


def test_two_processes_reserving_at_once_one_abstains(spec: LedgerSpec) -> None:
    spec.open().reserve(estimated_tokens=1)  # the row/file exists before the race
    barrier = SPAWN.Barrier(2)
    results = SPAWN.Queue()
    workers = [
        SPAWN.Process(target=racing_reserve, args=(spec, barrier, results)) for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    outcomes = sorted(results.get(timeout=60) for _ in workers)
    for worker in workers:
        worker.join(timeout=30)
    assert outcomes == ["ledger_busy", "reserved"]
    assert spec.open().snapshot().requests == 2


def test_process_killed_between_reserve_and_answer_stays_counted(spec: LedgerSpec) -> None:
    with StubChatServer(default=StubResponse.answer(GOOD_ANSWER, delay_s=30)) as server:
        child = SPAWN.Process(target=reserve_then_wait_for_answer, args=(spec, server.base_url))
        child.start()
        deadline = time.monotonic() + 60
        while server.count == 0 and time.monotonic() < deadline and child.is_alive():
            time.sleep(0.02)
        assert server.count == 1, "the child never sent its request"
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(timeout=30)
    assert child.exitcode == -signal.SIGKILL
    ledger = spec.open()
    assert ledger.snapshot().requests == 1
    assert ledger.reserve(estimated_tokens=1).number == 2  # and the lock died with it


async def test_concurrent_calls_in_one_process_all_count(spec: LedgerSpec) -> None:
    """Independent calls of one app wait their (millisecond) turn instead of abstaining."""
    import asyncio

    ledger = spec.open()
    provider = ScriptedProvider(
        [ScriptedReply(text=GOOD_ANSWER, delay_s=0.05, usage=Usage(3, 1, "provider"))] * 12
    )
    gateway = Gateway([provider], ledger=ledger)
    answers = await asyncio.gather(*(gateway.attempt(make_request(), Label) for _ in range(12)))
    assert len(answers) == 12
    snapshot = ledger.snapshot()
    assert (snapshot.requests, snapshot.prompt_tokens, snapshot.completion_tokens) == (12, 36, 12)


async def test_exclusive_hold_covers_tasks_it_starts_and_refuses_others(
    spec: LedgerSpec,
) -> None:
    import asyncio

    ledger = spec.open()
    inside = Gateway([ScriptedProvider([GOOD_ANSWER] * 2)], ledger=ledger)
    outside_provider = ScriptedProvider([GOOD_ANSWER])
    outside = Gateway([outside_provider], ledger=spec.open())

    async def other_check() -> str:
        try:
            await outside.attempt(make_request(), Label)
            return "answered"
        except LedgerBusy:
            return "abstained"

    other = asyncio.create_task(other_check())  # created outside the hold
    with ledger.exclusive():
        await asyncio.gather(*(inside.attempt(make_request(), Label) for _ in range(2)))
        assert await other == "abstained"
    assert outside_provider.requests == []
    assert ledger.snapshot().requests == 2


async def test_corrupt_sqlite_row_refuses_and_is_never_rewritten(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    spec = LedgerSpec("sql", url)
    spec.open().reserve(estimated_tokens=3)
    engine = create_engine(url)
    with engine.begin() as conn:  # SQLite keeps whatever it is given
        conn.execute(text("UPDATE modelgate_ledger SET completion_tokens = 'garbage'"))
    rows_before = _rows(engine)
    provider = ScriptedProvider([GOOD_ANSWER])
    with pytest.raises(LedgerUnavailable):
        await Gateway([provider], ledger=spec.open()).attempt(make_request(), Label)
    assert provider.requests == []
    assert _rows(engine) == rows_before
    engine.dispose()
