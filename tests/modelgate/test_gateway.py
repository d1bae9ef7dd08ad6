"""Gateway policy: failover, retries only for transient failures, due times, recording."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from mg_helpers import GOOD_ANSWER, Label, make_request

from modelgate.errors import (
    AllProvidersFailed,
    AttemptTimeout,
    BadAnswer,
    BudgetExhausted,
    LedgerBusy,
    MalformedAnswer,
    OutOfSetAnswer,
    ProviderStatusError,
    RateLimited,
    Rejected,
    ReplayMiss,
    TransportError,
    is_transient,
)
from modelgate.fingerprint import request_fingerprint
from modelgate.gateway import Gateway, RetryPolicy
from modelgate.ledger import JsonFileLedger
from modelgate.providers import ReplayProvider, ScriptedProvider, ScriptedReply
from modelgate.recording import Recorder, load_exchanges
from modelgate.types import Usage


class _Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


async def test_scripted_provider_takes_the_real_path(tmp_path: Path) -> None:
    provider = ScriptedProvider([ScriptedReply(text=GOOD_ANSWER, usage=Usage(12, 3, "provider"))])
    ledger = JsonFileLedger(tmp_path / "ledger.json")
    recorder = Recorder(tmp_path / "audit.jsonl")
    answer = await Gateway([provider], ledger=ledger, recorder=recorder).attempt(
        make_request(), Label
    )
    assert answer.value == Label.model_validate_json(GOOD_ANSWER)
    assert answer.provider == "scripted"
    assert answer.usage == Usage(12, 3, "provider")
    assert answer.request_fingerprint == request_fingerprint(make_request(), "scripted-model")
    assert provider.requests == [make_request()]
    assert ledger.snapshot().prompt_tokens == 12
    (exchange,) = load_exchanges(tmp_path / "audit.jsonl")
    assert exchange.outcome == "ok"
    assert exchange.request["messages"][1]["content"] == make_request().messages[1].content
    assert exchange.request_fingerprint == answer.request_fingerprint


async def test_usage_falls_back_to_the_documented_estimate() -> None:
    request = make_request("x" * 400)
    answer = await Gateway([ScriptedProvider([GOOD_ANSWER])]).attempt(request, Label)
    chars = sum(len(m.content) for m in request.messages)
    assert answer.usage == Usage(chars // 4 + 150, 16, "estimate")


@pytest.mark.parametrize(
    "failure",
    [
        TransportError("refused"),
        ProviderStatusError("HTTP 503", status=503),
        RateLimited("HTTP 429", status=429, retry_after_s=2.0),
        ScriptedReply(text=GOOD_ANSWER, delay_s=2.0),
    ],
    ids=["transport", "5xx", "429", "timeout"],
)
async def test_transient_failure_on_a_falls_over_to_b(tmp_path: Path, failure: object) -> None:
    a = ScriptedProvider([failure], name="a", model="model-a", timeout_s=0.1)  # type: ignore[list-item]
    b = ScriptedProvider([GOOD_ANSWER], name="b", model="model-b")
    ledger = JsonFileLedger(tmp_path / "ledger.json")
    recorder = Recorder(tmp_path / "audit.jsonl")
    answer = await Gateway([a, b], ledger=ledger, recorder=recorder).attempt(make_request(), Label)
    assert answer.provider == "b" and answer.model == "model-b"
    assert len(a.requests) == len(b.requests) == 1
    assert ledger.snapshot().requests == 2  # both upstream requests counted
    outcomes = [(e.provider, e.outcome) for e in load_exchanges(tmp_path / "audit.jsonl")]
    assert outcomes[1] == ("b", "ok") and outcomes[0][0] == "a" and outcomes[0][1] != "ok"


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ('{"colour": "BLUE", "note": "x"}', OutOfSetAnswer),
        ('{"colour": "RED"}', MalformedAnswer),
        ("RED", MalformedAnswer),
        (Rejected("HTTP 400", status=400), Rejected),
    ],
)
async def test_bad_answer_or_rejection_neither_falls_over_nor_retries(
    reply: object, error: type[Exception]
) -> None:
    a = ScriptedProvider([reply, GOOD_ANSWER], name="a")  # type: ignore[list-item]
    b = ScriptedProvider([GOOD_ANSWER], name="b")
    sleeps = _Sleeps()
    gateway = Gateway([a, b], retry=RetryPolicy(max_attempts=5, backoff_s=1), sleep=sleeps)
    with pytest.raises(error):
        await gateway.call(make_request(), Label)
    assert len(a.requests) == 1
    assert b.requests == []
    assert sleeps.delays == []


async def test_call_retries_transient_failures_with_backoff_and_retry_after() -> None:
    provider = ScriptedProvider(
        [
            TransportError("reset"),
            RateLimited("HTTP 429", status=429, retry_after_s=9.0),
            GOOD_ANSWER,
        ]
    )
    sleeps = _Sleeps()
    gateway = Gateway([provider], retry=RetryPolicy(max_attempts=3, backoff_s=0.5), sleep=sleeps)
    answer = await gateway.call(make_request(), Label)
    assert answer.value.colour == "RED"
    assert sleeps.delays == [0.5, 9.0]  # backoff, then the provider's Retry-After
    assert len(provider.requests) == 3


async def test_exhausted_attempts_raise_the_last_error() -> None:
    provider = ScriptedProvider([TransportError("a"), TransportError("b")])
    sleeps = _Sleeps()
    gateway = Gateway([provider], retry=RetryPolicy(max_attempts=2, backoff_s=1), sleep=sleeps)
    with pytest.raises(AllProvidersFailed) as caught:
        await gateway.call(make_request(), Label)
    assert caught.value.errors[0].message == "b"
    assert sleeps.delays == [1.0]
    assert len(provider.requests) == 2


def test_retry_policy_due_time_and_exhaustion() -> None:
    policy = RetryPolicy(max_attempts=3, backoff_s=10, max_backoff_s=15)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    timeout = AttemptTimeout("slow", limit_s=45)
    assert policy.delay_before(1, timeout) == 10
    assert policy.due_at(1, timeout, now=now) == now + timedelta(seconds=10)
    assert policy.delay_before(2, timeout) == 15  # 20, capped
    assert policy.delay_before(3, timeout) is None  # exhausted: BLOCKED
    assert policy.due_at(3, timeout, now=now) is None
    limited = RateLimited("429", status=429, retry_after_s=120)
    assert policy.delay_before(1, limited) == 120
    assert RetryPolicy(max_attempts=3, honour_retry_after=False).delay_before(1, limited) == 1
    group = AllProvidersFailed("all", errors=[timeout, limited])
    assert policy.delay_before(1, group) == 120
    for never in (
        MalformedAnswer("x"),
        OutOfSetAnswer("x"),
        Rejected("x", status=400),
        BudgetExhausted("x", cap=1, requests=1),
        LedgerBusy("x"),
        ProviderStatusError("x", status=404),
    ):
        assert policy.delay_before(1, never) is None
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)


def test_is_transient_is_the_one_rule() -> None:
    assert is_transient(TransportError("x"))
    assert is_transient(AttemptTimeout("x", limit_s=1))
    assert is_transient(ProviderStatusError("x", status=502))
    assert not is_transient(BadAnswer("x"))
    mixed = AllProvidersFailed(
        "x", errors=[TransportError("x"), ProviderStatusError("x", status=404)]
    )
    assert not is_transient(mixed)


async def test_refusals_stop_before_any_provider(tmp_path: Path) -> None:
    ledger = JsonFileLedger(tmp_path / "ledger.json", cap=1)
    a, b = ScriptedProvider([GOOD_ANSWER], name="a"), ScriptedProvider([GOOD_ANSWER], name="b")
    gateway = Gateway([a, b], ledger=ledger, recorder=Recorder(tmp_path / "audit.jsonl"))
    await gateway.attempt(make_request(), Label)
    with pytest.raises(BudgetExhausted):
        await gateway.attempt(make_request(), Label)
    assert (len(a.requests), len(b.requests)) == (1, 0)
    assert len(load_exchanges(tmp_path / "audit.jsonl")) == 1  # a refusal is not an exchange


async def test_replay_answers_recorded_requests_and_never_calls_live(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    live = ScriptedProvider(
        [ScriptedReply(text=GOOD_ANSWER, usage=Usage(9, 2, "provider")), TransportError("x")],
        model="m-1",
    )
    recorded = await Gateway([live], recorder=Recorder(audit)).attempt(make_request(), Label)
    with pytest.raises(AllProvidersFailed):
        await Gateway([live], recorder=Recorder(audit)).attempt(make_request("other"), Label)
    replay = ReplayProvider(load_exchanges(audit))
    assert replay.model == "m-1" and len(replay) == 1  # the failed exchange is not replayable
    assert replay.unplayed == [recorded.request_fingerprint]
    ledger = JsonFileLedger(tmp_path / "ledger.json")
    gateway = Gateway([replay], ledger=ledger, recorder=Recorder(audit))
    answer = await gateway.attempt(make_request(), Label)
    assert len(load_exchanges(audit)) == 2  # replays are not upstream exchanges
    assert answer.replayed is True
    assert answer.value == recorded.value
    assert answer.request_fingerprint == recorded.request_fingerprint
    assert answer.usage == Usage(9, 2, "provider")
    assert replay.unplayed == []
    with pytest.raises(ReplayMiss) as miss:
        await gateway.attempt(make_request(version="test-v2"), Label)
    assert miss.value.fingerprint == request_fingerprint(make_request(version="test-v2"), "m-1")
    assert ledger.snapshot().requests == 0  # replay is never charged


def test_gateway_needs_a_provider() -> None:
    with pytest.raises(ValueError):
        Gateway([])


async def test_cancelled_call_stays_counted_and_is_recorded(tmp_path: Path) -> None:
    import asyncio

    provider = ScriptedProvider([ScriptedReply(text=GOOD_ANSWER, delay_s=5.0)])
    ledger = JsonFileLedger(tmp_path / "ledger.json")
    gateway = Gateway([provider], ledger=ledger, recorder=Recorder(tmp_path / "audit.jsonl"))
    task = asyncio.create_task(gateway.attempt(make_request(), Label))
    while not provider.requests:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert ledger.snapshot().requests == 1
    (exchange,) = load_exchanges(tmp_path / "audit.jsonl")
    assert exchange.outcome == "cancelled"


def test_provider_config_refuses_what_it_cannot_honour() -> None:
    from pydantic import ValidationError

    from modelgate.providers import ProviderConfig

    good = {"name": "p", "base_url": "http://127.0.0.1:9/v1/", "model": "m"}
    assert ProviderConfig(**good).base_url == "http://127.0.0.1:9/v1"
    for bad in (
        {"extra_body": {"model": "other"}},
        {"extra_body": {"stream": True}},
        {"timeout_s": 0},
        {"adapter": "grpc"},
        {"api_key": "sk-inline"},  # keys come from the environment only
        {"max_output_tokens": 0},
    ):
        with pytest.raises(ValidationError):
            ProviderConfig(**{**good, **bad})
    a = ProviderConfig(**good)
    b = ProviderConfig(**{**good, "extra_body": {"chat_template_kwargs": {"x": 1}}})
    assert a.fingerprint().startswith("provider-config-v1:sha256:")
    assert a.fingerprint() != b.fingerprint()
