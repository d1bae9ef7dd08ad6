"""RETRY_PENDING, DEFERRED and BLOCKED through the whole interpreter lifecycle."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from interp_support import (
    CASE_ID,
    PACKAGE_ID,
    answer_for,
    built_store,
    config,
    members,
    prepared_context,
    reply,
    scripted_gateway,
)

from modelgate.errors import AttemptTimeout, TransportError
from viano_bug_analysis.analysis import CaseInterpreter, InterpretationError, OutcomeStatus
from viano_bug_analysis.llm import GatewayConfig, LLMGateway


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def rounds(store: object) -> list[str]:
    return sorted(n for n in members(store) if "/rounds/" in n)  # type: ignore[arg-type]


async def test_retry_pending_then_due_retry_completes(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    good = answer_for(prepared_context(store).catalogue)
    clock = Clock()
    gateway, provider = scripted_gateway(TransportError("reset"), reply(good), clock=clock)
    interpreter = CaseInterpreter(store, gateway)

    first = await interpreter.interpret(CASE_ID, PACKAGE_ID)
    assert first.status is OutcomeStatus.RETRY_PENDING
    assert first.due_at == "2026-01-01T12:00:01.000Z"
    assert len(rounds(store)) == 1

    early = await interpreter.interpret(CASE_ID, PACKAGE_ID)  # not due yet: nothing sent
    assert early.status is OutcomeStatus.RETRY_PENDING and early.reused
    assert early.due_at == first.due_at and len(provider.requests) == 1

    clock.now += timedelta(seconds=1)
    done = await interpreter.interpret(CASE_ID, PACKAGE_ID)
    assert done.status is OutcomeStatus.COMPLETED
    assert len(provider.requests) == 2
    assert len(rounds(store)) == 2  # both rounds share the attempt hash
    assert len({r.rsplit("/", 2)[1] for r in rounds(store)}) == 1


async def test_exhausted_attempts_block_and_stay_blocked(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    clock = Clock()
    gateway, provider = scripted_gateway(
        AttemptTimeout("late", limit_s=1),
        TransportError("reset"),
        gateway_config=config(max_attempts=2, backoff=(0,)),
        clock=clock,
    )
    interpreter = CaseInterpreter(store, gateway)
    assert (await interpreter.interpret(CASE_ID, PACKAGE_ID)).status is OutcomeStatus.RETRY_PENDING
    blocked = await interpreter.interpret(CASE_ID, PACKAGE_ID)
    assert blocked.status is OutcomeStatus.BLOCKED
    again = await interpreter.interpret(CASE_ID, PACKAGE_ID)
    assert again.status is OutcomeStatus.BLOCKED and again.reused
    assert len(provider.requests) == 2
    manifest_pointers = store.current(CASE_ID, PACKAGE_ID).manifest.pointers
    assert "case_interpretation" not in manifest_pointers


async def test_blocked_needs_explicit_resumption_and_a_new_attempt_id(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    good = answer_for(prepared_context(store).catalogue)
    gateway, provider = scripted_gateway(
        TransportError("reset"), reply(good), gateway_config=config(max_attempts=1)
    )
    interpreter = CaseInterpreter(store, gateway)
    assert (await interpreter.interpret(CASE_ID, PACKAGE_ID)).status is OutcomeStatus.BLOCKED

    with pytest.raises(InterpretationError) as info:
        await interpreter.interpret(CASE_ID, PACKAGE_ID, attempt_id="second")
    assert info.value.code == "interpretation.resumption_required"
    with pytest.raises(InterpretationError) as info:
        await interpreter.interpret(CASE_ID, PACKAGE_ID, resume=True)  # the blocked id itself
    assert info.value.code == "interpretation.resumption_needs_new_attempt_id"
    assert len(provider.requests) == 1

    resumed = await interpreter.interpret(CASE_ID, PACKAGE_ID, attempt_id="second", resume=True)
    assert resumed.status is OutcomeStatus.COMPLETED
    names = members(store)
    assert any("/resumptions/" in n for n in names)


async def test_deferred_publishes_no_round_and_uses_no_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = built_store(tmp_path)
    monkeypatch.delenv("VIANO_TEST_ABSENT_KEY", raising=False)
    data = config().model_dump(mode="json")
    data["providers"][0]["api_key_env"] = "VIANO_TEST_ABSENT_KEY"
    gateway = LLMGateway(GatewayConfig.from_mapping(data))
    interpreter = CaseInterpreter(store, gateway)
    result = await interpreter.interpret(CASE_ID, PACKAGE_ID)
    assert result.status is OutcomeStatus.DEFERRED
    assert result.error is not None and result.error["code"] == "not_configured"
    assert rounds(store) == []
    generation = store.current(CASE_ID, PACKAGE_ID).generation
    again = await interpreter.interpret(CASE_ID, PACKAGE_ID)
    assert again.status is OutcomeStatus.DEFERRED
    assert store.current(CASE_ID, PACKAGE_ID).generation == generation  # preparation reused


async def test_changed_configuration_under_a_pending_attempt_is_refused(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    clock = Clock()
    gateway, _ = scripted_gateway(TransportError("reset"), clock=clock)
    assert (
        await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    ).status is OutcomeStatus.RETRY_PENDING
    clock.now += timedelta(minutes=5)
    other, provider = scripted_gateway(
        reply({}), gateway_config=config(max_attempts=5), clock=clock
    )
    with pytest.raises(InterpretationError) as info:
        await CaseInterpreter(store, other).interpret(CASE_ID, PACKAGE_ID)
    assert info.value.code == "interpretation.attempt_mismatch"
    assert provider.requests == []
