"""Concurrency (LockBusy, independent cases in parallel) and cancellation."""

from __future__ import annotations

import asyncio
import copy
import gc
import time
from pathlib import Path

import pytest
from interp_support import (
    BASIC_INTAKE,
    CASE_ID,
    PACKAGE_ID,
    answer_for,
    built_store,
    config,
    members,
    prepared_context,
    reply,
    scripted_gateway,
    write_package,
)

from modelgate.providers import ScriptedProvider
from viano_bug_analysis.analysis import CaseInterpreter, OutcomeStatus
from viano_bug_analysis.case import CaseBuilder
from viano_bug_analysis.errors import LockBusy
from viano_bug_analysis.llm import LLMGateway
from viano_bug_analysis.packages import (
    PackageGeneration,
    PackageOperation,
    PackageReader,
    PackageWriter,
)
from viano_bug_analysis.packages.generations import GenerationFiles


async def test_concurrent_dispatch_on_one_package_raises_lock_busy(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    good = answer_for(prepared_context(store).catalogue)
    gateway, provider = scripted_gateway(reply(good, delay_s=0.5))
    interpreter = CaseInterpreter(store, gateway)
    first = asyncio.create_task(interpreter.interpret(CASE_ID, PACKAGE_ID))
    while not provider.requests:
        await asyncio.sleep(0.01)
    with pytest.raises(LockBusy):
        await interpreter.interpret(CASE_ID, PACKAGE_ID)
    with pytest.raises(LockBusy):
        CaseBuilder(store).build(CASE_ID, PACKAGE_ID)  # other operations are excluded too
    assert (await first).status is OutcomeStatus.COMPLETED
    assert len(provider.requests) == 1


async def test_independent_cases_run_while_a_provider_awaits(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    ids = [CASE_ID]
    for n in range(2, 5):
        intake = copy.deepcopy(BASIC_INTAKE)
        intake["case_id"] = f"case-{n}"
        store.add(write_package(tmp_path / f"p{n}.zip", intake))
        CaseBuilder(store).build(f"case-{n}", PACKAGE_ID)
        ids.append(f"case-{n}")
    good = answer_for(prepared_context(store).catalogue)
    provider = ScriptedProvider([reply(good, delay_s=0.6) for _ in ids], name="scripted")
    interpreter = CaseInterpreter(store, LLMGateway(config(), providers=[provider]))
    started = time.perf_counter()
    results = await asyncio.gather(*(interpreter.interpret(c, PACKAGE_ID) for c in ids))
    elapsed = time.perf_counter() - started
    assert all(r.status is OutcomeStatus.COMPLETED for r in results)
    assert elapsed < 0.6 * len(ids) * 0.75, elapsed  # overlapped, not serial


async def test_cancellation_releases_the_lock_and_keeps_preparation(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    built = store.current(CASE_ID, PACKAGE_ID).generation
    good = answer_for(prepared_context(store).catalogue)
    gateway, provider = scripted_gateway(reply(good, delay_s=5), reply(good))
    interpreter = CaseInterpreter(store, gateway)
    task = asyncio.create_task(interpreter.interpret(CASE_ID, PACKAGE_ID))
    while not provider.requests:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    prepared = store.current(CASE_ID, PACKAGE_ID)
    assert prepared.generation == built + 1  # the context generation survived
    assert prepared.manifest.phase == "INTERPRETING_CASE"
    context = members(store)["analysis/interpretations/0001/context.json"]
    with store.lock(CASE_ID, PACKAGE_ID):  # released: it can be taken again at once
        pass
    result = await interpreter.interpret(CASE_ID, PACKAGE_ID)
    assert result.status is OutcomeStatus.COMPLETED
    after = members(store)
    assert after["analysis/interpretations/0001/context.json"] == context
    assert [n for n in after if n.endswith("context.json")] == [
        "analysis/interpretations/0001/context.json"
    ]
    assert store.current(CASE_ID, PACKAGE_ID).generation == built + 3
    assert len(provider.requests) == 2  # the cancelled call was unconfirmed


async def test_package_work_never_blocks_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading, verifying and publishing generations run in storage threads: a slow disk
    (simulated: every look-up of the current generation and every publication takes
    0.3 s) delays the interpretation, never the event loop that other cases share."""
    store = built_store(tmp_path)
    good = answer_for(prepared_context(store).catalogue)
    gateway, _provider = scripted_gateway(reply(good))
    slow_current = GenerationFiles.open_current  # every look-up of a current generation
    slow_publish = PackageOperation.publish_open  # publish() goes through it

    def current(
        self: GenerationFiles, case_id: str, package_id: str
    ) -> tuple[PackageGeneration, PackageReader]:
        time.sleep(0.3)
        return slow_current(self, case_id, package_id)

    def publish(
        self: PackageOperation, writer: PackageWriter
    ) -> tuple[PackageGeneration, PackageReader]:
        time.sleep(0.3)
        return slow_publish(self, writer)

    monkeypatch.setattr(GenerationFiles, "open_current", current)
    monkeypatch.setattr(PackageOperation, "publish_open", publish)
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    # What earlier tests left behind is frozen, so that a full collection over it (which
    # holds the GIL for tenths of a second late in a whole test run) is not measured.
    gc.collect()
    gc.freeze()
    try:
        ticking = asyncio.create_task(ticker())
        await asyncio.sleep(0.05)  # the ticker is running before the interpretation starts
        started = time.perf_counter()
        result = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
        elapsed = time.perf_counter() - started
        done.set()
        await ticking
    finally:
        gc.unfreeze()
    assert result.status is OutcomeStatus.COMPLETED
    assert elapsed >= 1.2  # the slow steps did run (one look-up, three publications)
    assert max(gaps) < 0.2, max(gaps)
