"""Every adapter route sends exactly one upstream request per call with zero retries.

A real HTTP server on 127.0.0.1 counts what arrives: on success, on an HTTP 500, on a
timeout (the caller-side clock) and on a malformed answer. The ledger must count
exactly what the server saw.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mg_helpers import GOOD_ANSWER, Label, make_request

from modelgate.errors import (
    AllProvidersFailed,
    AttemptTimeout,
    MalformedAnswer,
    NotConfigured,
    ProviderStatusError,
    RateLimited,
    Rejected,
)
from modelgate.gateway import Gateway, RetryPolicy
from modelgate.ledger import JsonFileLedger
from modelgate.providers import ProviderConfig, build_provider
from modelgate.recording import Recorder, load_exchanges
from modelgate.testing import StubChatServer, StubResponse

ROUTES = [
    pytest.param("openai", "plain-model", id="httpx"),
    pytest.param("litellm", "openai/plain-model", id="litellm-openai"),
    pytest.param("litellm", "hosted_vllm/plain-model", id="litellm-hosted_vllm"),
    pytest.param("litellm", "nvidia_nim/nvidia/some-model", id="litellm-nvidia_nim"),
]

OUTCOMES = {
    "success": (StubResponse.answer(GOOD_ANSWER), None),
    "http-500": (StubResponse(status=500, body='{"error": "boom"}'), ProviderStatusError),
    "timeout": (StubResponse.answer(GOOD_ANSWER, delay_s=2.0), AttemptTimeout),
    "body-not-json": (StubResponse(status=200, body="<html>oops</html>"), MalformedAnswer),
    "answer-wrong-shape": (StubResponse.answer('{"colour": "RED"}'), MalformedAnswer),
}


@pytest.fixture(scope="module", autouse=True)
def _litellm_warmed() -> None:
    """litellm's first call in a process is slow (lazy set-up); do it before the clocks run."""
    with StubChatServer(default=StubResponse.answer(GOOD_ANSWER)) as server:
        config = ProviderConfig(
            name="warm", adapter="litellm", base_url=server.base_url, model="openai/m"
        )
        asyncio.run(Gateway([build_provider(config)]).attempt(make_request(), Label))


def _gateway(
    stub: StubChatServer, adapter: str, model: str, tmp_path: Path, timeout_s: float = 5.0
) -> Gateway:
    config = ProviderConfig(
        name="p", adapter=adapter, base_url=stub.base_url, model=model, timeout_s=timeout_s
    )
    return Gateway(
        [build_provider(config)],
        ledger=JsonFileLedger(tmp_path / "ledger.json"),
        recorder=Recorder(tmp_path / "audit.jsonl"),
        retry=RetryPolicy(max_attempts=1),
    )


@pytest.mark.parametrize(("adapter", "model"), ROUTES)
@pytest.mark.parametrize("outcome", list(OUTCOMES))
async def test_exactly_one_upstream_request(
    stub: StubChatServer, tmp_path: Path, adapter: str, model: str, outcome: str
) -> None:
    response, expected_error = OUTCOMES[outcome]
    stub.default = response
    timeout_s = 0.6 if outcome == "timeout" else 5.0
    gateway = _gateway(stub, adapter, model, tmp_path, timeout_s)
    if expected_error is None:
        answer = await gateway.call(make_request(), Label)
        assert answer.value.colour == "RED"
        assert answer.usage.source == "provider"
    else:
        with pytest.raises((expected_error, AllProvidersFailed)) as caught:
            await gateway.call(make_request(), Label)
        error = caught.value
        if isinstance(error, AllProvidersFailed):
            assert [type(e) for e in error.errors] == [expected_error]
    await asyncio.sleep(0.3)  # a stacked retry would arrive here
    assert stub.count == 1
    assert stub.requests[0].path == "/v1/chat/completions"
    snapshot = JsonFileLedger(tmp_path / "ledger.json").snapshot()
    assert snapshot.requests == 1
    exchanges = load_exchanges(tmp_path / "audit.jsonl")
    assert len(exchanges) == 1
    assert exchanges[0].outcome == ("ok" if expected_error is None else expected_error.code)
    await gateway.aclose()


@pytest.mark.parametrize(("adapter", "model"), ROUTES)
async def test_status_classification(
    stub: StubChatServer, tmp_path: Path, adapter: str, model: str
) -> None:
    gateway = _gateway(stub, adapter, model, tmp_path)
    stub.add(StubResponse(status=429, body="{}", headers={"Retry-After": "7"}))
    with pytest.raises(AllProvidersFailed) as caught:
        await gateway.attempt(make_request(), Label)
    (limited,) = caught.value.errors
    assert isinstance(limited, RateLimited)
    assert limited.retry_after_s == 7.0
    stub.add(StubResponse(status=400, body='{"error": "bad request"}'))
    with pytest.raises(Rejected) as rejected:
        await gateway.attempt(make_request(), Label)
    assert rejected.value.status == 400
    assert stub.count == 2
    await gateway.aclose()


async def test_late_answer_is_discarded_and_stays_counted(
    stub: StubChatServer, tmp_path: Path
) -> None:
    stub.add(StubResponse.answer(GOOD_ANSWER, delay_s=0.8))
    gateway = _gateway(stub, "openai", "m", tmp_path, timeout_s=0.4)
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(AllProvidersFailed) as caught:
        await gateway.attempt(make_request(), Label)
    elapsed = loop.time() - started
    assert isinstance(caught.value.errors[0], AttemptTimeout)
    assert 0.35 <= elapsed < 0.7, elapsed  # the caller's clock, not the server's answer
    await asyncio.sleep(0.7)  # the server answers late; nothing may pick it up
    ledger = JsonFileLedger(tmp_path / "ledger.json").snapshot()
    assert ledger.requests == 1
    assert ledger.prompt_tokens == 0  # the late answer's usage was never read
    (exchange,) = load_exchanges(tmp_path / "audit.jsonl")
    assert exchange.outcome == "attempt_timeout"
    assert exchange.response_text is None
    assert exchange.request["model"] == "m"  # the body as sent, although no answer came
    assert exchange.request["messages"] == stub.requests[0].json()["messages"]
    assert stub.count == 1
    await gateway.aclose()


async def test_reasoning_off_only_for_the_configured_model(
    stub: StubChatServer, tmp_path: Path
) -> None:
    stub.default = StubResponse.answer(GOOD_ANSWER)
    reasoning_off = {"chat_template_kwargs": {"enable_thinking": False}}
    nemotron = build_provider(
        ProviderConfig(
            name="nim", base_url=stub.base_url, model="nvidia/nemotron", extra_body=reasoning_off
        )
    )
    other = build_provider(ProviderConfig(name="other", base_url=stub.base_url, model="other"))
    via_litellm = build_provider(
        ProviderConfig(
            name="nim-litellm",
            adapter="litellm",
            base_url=stub.base_url,
            model="nvidia_nim/nvidia/nemotron",
            extra_body=reasoning_off,
        )
    )
    for provider in (nemotron, other, via_litellm):
        await Gateway([provider]).attempt(make_request(), Label)
    bodies = [r.json() for r in stub.requests]
    assert [b["model"] for b in bodies] == ["nvidia/nemotron", "other", "nvidia/nemotron"]
    assert bodies[0]["chat_template_kwargs"] == {"enable_thinking": False}
    assert "chat_template_kwargs" not in bodies[1]
    assert bodies[2]["chat_template_kwargs"] == {"enable_thinking": False}


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("json_schema", "json_schema"), ("json_object_schema", "json_object"), ("none", None)],
)
async def test_structured_output_modes(
    stub: StubChatServer, mode: str, expected: str | None
) -> None:
    stub.default = StubResponse.answer(GOOD_ANSWER)
    provider = build_provider(
        ProviderConfig(name="p", base_url=stub.base_url, model="m", structured_output=mode)
    )
    await Gateway([provider]).attempt(make_request(), Label)
    body = stub.requests[0].json()
    if expected is None:
        assert "response_format" not in body
    else:
        assert body["response_format"]["type"] == expected
        schema = (
            body["response_format"]["json_schema"]["schema"]
            if expected == "json_schema"
            else body["response_format"]["schema"]
        )
        assert schema["additionalProperties"] is False
        assert schema["properties"]["colour"]["enum"] == ["RED", "GREEN"]


async def test_api_key_sent_but_never_recorded(
    stub: StubChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("MG_TEST_KEY", secret)
    stub.default = StubResponse.answer(GOOD_ANSWER)
    config = ProviderConfig(name="p", base_url=stub.base_url, model="m", api_key_env="MG_TEST_KEY")
    provider = build_provider(config)
    assert secret not in repr(provider)
    gateway = Gateway([provider], recorder=Recorder(tmp_path / "audit.jsonl"))
    await gateway.attempt(make_request(), Label)
    assert stub.requests[0].headers["Authorization"] == f"Bearer {secret}"
    assert secret not in (tmp_path / "audit.jsonl").read_text()


def test_missing_key_is_not_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MG_ABSENT_KEY", raising=False)
    config = ProviderConfig(
        name="p", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="MG_ABSENT_KEY"
    )
    with pytest.raises(NotConfigured):
        build_provider(config)


@pytest.mark.parametrize("model", ["anthropic/claude", "plain-without-route", "nvidia_nim/"])
def test_litellm_routes_not_proven_are_refused(model: str) -> None:
    config = ProviderConfig(
        name="p", adapter="litellm", base_url="http://127.0.0.1:9/v1", model=model
    )
    with pytest.raises(NotConfigured):
        build_provider(config)


async def test_connection_refused_is_transient(tmp_path: Path) -> None:
    with StubChatServer() as closed:
        url = closed.base_url
    provider = build_provider(ProviderConfig(name="p", base_url=url, model="m", timeout_s=2))
    ledger = JsonFileLedger(tmp_path / "ledger.json")
    with pytest.raises(AllProvidersFailed) as caught:
        await Gateway([provider], ledger=ledger).attempt(make_request(), Label)
    assert caught.value.errors[0].code == "transport_error"
    assert ledger.snapshot().requests == 1


async def test_litellm_native_nvidia_route_stacks_retries(stub: StubChatServer) -> None:
    """Why the adapter translates ``nvidia_nim/``: called natively, litellm 1.102.1 sends
    3 requests on one HTTP 500 even with both retry settings at 0. If an upgrade changes
    this, revisit ``litellm_provider.ROUTES`` (and this test)."""
    from modelgate.providers.litellm_provider import _import_litellm

    litellm = _import_litellm()
    stub.default = StubResponse(status=500, body='{"error": "boom"}')
    with pytest.raises(Exception) as caught:
        await litellm.acompletion(
            model="nvidia_nim/nvidia/some-model",
            api_base=stub.base_url,
            api_key="test-key",
            messages=[{"role": "user", "content": "hi"}],
            num_retries=0,
            max_retries=0,
            timeout=5,
        )
    assert getattr(caught.value, "status_code", None) == 500
    assert stub.count == 3


@pytest.mark.parametrize("model", ["openai/m", "hosted_vllm/m", "nvidia_nim/m"])
@pytest.mark.parametrize("mode", ["json_schema", "json_object_schema", "none"])
async def test_litellm_sends_exactly_the_body_it_records(
    stub: StubChatServer, model: str, mode: str
) -> None:
    stub.default = StubResponse.answer(GOOD_ANSWER)
    provider = build_provider(
        ProviderConfig(
            name="p",
            adapter="litellm",
            base_url=stub.base_url,
            model=model,
            structured_output=mode,
            max_output_tokens=20,
            extra_body={"chat_template_kwargs": {"enable_thinking": False}},
        )
    )
    answer = await Gateway([provider]).attempt(make_request(), Label)
    sent = stub.requests[0].json()
    assert sent == provider.request_body(make_request())
    assert sent["max_tokens"] == 20 and sent["model"] == "m"
    assert answer.usage.source == "provider"


def test_retry_after_parsing() -> None:
    from datetime import UTC, datetime
    from email.utils import format_datetime

    from modelgate.providers._wire import parse_retry_after

    now = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC).timestamp()
    later = format_datetime(datetime(2026, 11, 29, 12, 0, 30, tzinfo=UTC), usegmt=True)
    earlier = format_datetime(datetime(2026, 11, 29, 11, 0, 0, tzinfo=UTC), usegmt=True)
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after(later, now=now) == 30.0
    assert parse_retry_after(earlier, now=now) == 0.0
    assert parse_retry_after("-3") == 0.0
    for unreadable in (None, "", "soon", "nan", "inf"):
        assert parse_retry_after(unreadable) is None


def test_one_provider_works_across_event_loops(stub: StubChatServer) -> None:
    """CLI code may call asyncio.run more than once with the same provider."""
    stub.default = StubResponse.answer(GOOD_ANSWER)
    gateway = Gateway([build_provider(ProviderConfig(name="p", base_url=stub.base_url, model="m"))])
    for _ in range(2):
        assert asyncio.run(gateway.attempt(make_request(), Label)).value.colour == "RED"
    assert stub.count == 2


async def test_nan_in_a_response_body_is_malformed(stub: StubChatServer, tmp_path: Path) -> None:
    body = '{"choices": [{"message": {"content": "{}"}}], "usage": {"prompt_tokens": NaN}}'
    stub.default = StubResponse(status=200, body=body)
    gateway = _gateway(stub, "openai", "m", tmp_path)
    with pytest.raises(MalformedAnswer):
        await gateway.attempt(make_request(), Label)
    (exchange,) = load_exchanges(tmp_path / "audit.jsonl")  # still recorded, as valid JSON
    assert exchange.outcome == "malformed_answer"
