"""LLMGateway: GatewayConfig loading and the five outcomes of one dispatch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from interp_catalogue import VALID_ANSWER
from interp_support import config, reply, scripted_gateway

from modelgate.errors import ProviderStatusError, RateLimited, Rejected, TransportError
from modelgate.ledger import JsonFileLedger
from modelgate.providers import ScriptedProvider
from modelgate.types import Message, ModelRequest
from viano_bug_analysis.analysis.output_model import InterpretationOutput
from viano_bug_analysis.llm import GatewayConfig, GatewayConfigError, LLMGateway, OutcomeStatus

REPO = Path(__file__).resolve().parents[3]
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def request() -> ModelRequest:
    from modelgate.answers import output_schema

    return ModelRequest(
        messages=(Message("system", "describe"), Message("user", "{}")),
        output_name="case_interpretation_v1",
        output_schema=output_schema(InterpretationOutput),
        prompt_version="case_interpretation_v1",
        max_output_tokens=512,
    )


# -- configuration ---------------------------------------------------------------------


def test_example_config_loads_with_every_documented_key() -> None:
    cfg = GatewayConfig.load(REPO / "config" / "llm.example.toml")
    provider = cfg.providers[0]
    assert (provider.name, provider.adapter, provider.model) == (
        "local",
        "openai",
        "smollm2-135m-instruct",
    )
    assert provider.api_key_env == "" and provider.timeout_s == 45
    assert provider.max_output_tokens == 4096 and provider.structured_output == "json_schema"
    assert cfg.retry.max_attempts == 3 and cfg.retry.backoff_s == (1, 4, 16)


def test_providers_keep_failover_order(tmp_path: Path) -> None:
    path = tmp_path / "llm.toml"
    path.write_text(
        "\n".join(
            f'[[providers]]\nname = "{n}"\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n'
            for n in ("b", "a", "c")
        )
    )
    assert [p.name for p in GatewayConfig.load(path).providers] == ["b", "a", "c"]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('[[providers]]\nname = "x"\nmodel = "m"\ntypo_key = 1\n', "llm.config_invalid"),
        ("not = [toml", "llm.config_not_toml"),
        ("[retry]\nmax_attempts = 3\n", "llm.config_invalid"),
        ('[[providers]]\nname = "x"\nmodel = "m"\nadapter = "magic"\n', "llm.config_invalid"),
        (
            '[[providers]]\nname = "x"\nmodel = "m"\nstructured_output = "xml"\n',
            "llm.config_invalid",
        ),
    ],
)
def test_bad_configuration_is_a_typed_error(tmp_path: Path, text: str, code: str) -> None:
    path = tmp_path / "llm.toml"
    path.write_text(text)
    with pytest.raises(GatewayConfigError) as info:
        GatewayConfig.load(path)
    assert info.value.code == code


def test_missing_configuration_file(tmp_path: Path) -> None:
    with pytest.raises(GatewayConfigError) as info:
        GatewayConfig.load(tmp_path / "absent.toml")
    assert info.value.code == "llm.config_unreadable"


def test_configuration_fingerprint_changes_with_settings_not_with_key_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = config()
    monkeypatch.setenv("SOME_KEY", "secret-1")
    same = config()
    assert base.fingerprint() == same.fingerprint()
    assert config(max_attempts=2).fingerprint() != base.fingerprint()
    assert "secret-1" not in base.model_dump_json()


def test_backoff_list_last_value_repeats() -> None:
    retry = config(max_attempts=6, backoff=(1, 4)).retry
    assert [retry.delay_after(n) for n in (1, 2, 3, 4)] == [1, 4, 4, 4]


# -- outcomes --------------------------------------------------------------------------


async def test_completed_outcome_carries_the_validated_answer() -> None:
    gateway, provider = scripted_gateway(reply(VALID_ANSWER))
    outcome = await gateway.dispatch(request(), InterpretationOutput, attempt_number=1)
    assert outcome.status is OutcomeStatus.COMPLETED
    assert outcome.output == VALID_ANSWER and outcome.sent
    assert len(provider.requests) == 1


async def test_transient_failure_is_retry_pending_with_a_due_time() -> None:
    gateway, _ = scripted_gateway(ProviderStatusError("boom", status=503), clock=lambda: T0)
    outcome = await gateway.dispatch(request(), InterpretationOutput, attempt_number=1)
    assert outcome.status is OutcomeStatus.RETRY_PENDING
    assert outcome.due_at == "2026-01-01T12:00:01.000Z"  # backoff_s[0] = 1
    assert outcome.error is not None and outcome.error["code"] == "all_providers_failed"


async def test_retry_after_longer_than_backoff_wins() -> None:
    gateway, _ = scripted_gateway(
        RateLimited("slow down", status=429, retry_after_s=30), clock=lambda: T0
    )
    outcome = await gateway.dispatch(request(), InterpretationOutput, attempt_number=2)
    assert outcome.due_at == (T0 + timedelta(seconds=30)).isoformat(
        timespec="milliseconds"
    ).replace("+00:00", "Z")


async def test_transient_failure_on_last_attempt_is_blocked() -> None:
    gateway, _ = scripted_gateway(TransportError("reset"))
    outcome = await gateway.dispatch(request(), InterpretationOutput, attempt_number=3)
    assert outcome.status is OutcomeStatus.BLOCKED and outcome.due_at is None


async def test_unusable_answer_is_error_with_raw_text_and_no_retry() -> None:
    bad = dict(VALID_ANSWER, root_cause="the cache")
    gateway, provider = scripted_gateway(reply(bad), reply(VALID_ANSWER))
    outcome = await gateway.dispatch(request(), InterpretationOutput, attempt_number=1)
    assert outcome.status is OutcomeStatus.ERROR
    assert outcome.raw_text is not None and "root_cause" in outcome.raw_text
    assert outcome.error is not None and outcome.error["code"] == "malformed_answer"
    assert len(provider.requests) == 1 and provider.pending == 1


async def test_refused_request_is_error() -> None:
    gateway, _ = scripted_gateway(Rejected("bad request", status=400))
    outcome = await gateway.dispatch(request(), InterpretationOutput, attempt_number=1)
    assert outcome.status is OutcomeStatus.ERROR and outcome.error["http_status"] == 400


async def test_missing_api_key_is_deferred_and_nothing_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("VIANO_TEST_ABSENT_KEY", raising=False)
    data = config().model_dump(mode="json")
    data["providers"][0]["api_key_env"] = "VIANO_TEST_ABSENT_KEY"
    gateway = LLMGateway(GatewayConfig.from_mapping(data))
    outcome = await gateway.dispatch(request(), InterpretationOutput, attempt_number=1)
    assert outcome.status is OutcomeStatus.DEFERRED
    assert not outcome.sent and outcome.attempt_number == 0
    assert outcome.error is not None and outcome.error["code"] == "not_configured"


async def test_exhausted_request_cap_is_deferred(tmp_path: Path) -> None:
    ledger = JsonFileLedger(tmp_path / "ledger.json", cap=1)
    gateway, provider = scripted_gateway(reply(VALID_ANSWER), reply(VALID_ANSWER), ledger=ledger)
    assert (
        await gateway.dispatch(request(), InterpretationOutput, attempt_number=1)
    ).status is OutcomeStatus.COMPLETED
    outcome = await gateway.dispatch(request(), InterpretationOutput, attempt_number=1)
    assert outcome.status is OutcomeStatus.DEFERRED
    assert outcome.error is not None and outcome.error["code"] == "budget_exhausted"
    assert len(provider.requests) == 1


async def test_failover_to_the_next_provider_within_one_attempt() -> None:
    first = ScriptedProvider([TransportError("down")], name="a")
    second = ScriptedProvider([reply(VALID_ANSWER)], name="b")
    gateway = LLMGateway(config(), providers=[first, second])
    outcome = await gateway.dispatch(request(), InterpretationOutput, attempt_number=1)
    assert outcome.status is OutcomeStatus.COMPLETED and outcome.provider == "b"


async def test_request_larger_than_the_limit_is_never_sent() -> None:
    data = config().model_dump(mode="json")
    data["limits"]["max_request_bytes"] = 1024
    gateway, provider = scripted_gateway(
        reply(VALID_ANSWER), gateway_config=GatewayConfig.from_mapping(data)
    )
    big = ModelRequest(
        messages=(Message("user", "x" * 2000),),
        output_name="o",
        output_schema={},
        prompt_version="v",
    )
    outcome = await gateway.dispatch(big, InterpretationOutput, attempt_number=1)
    assert outcome.status is OutcomeStatus.ERROR and not outcome.sent
    assert provider.requests == []
