"""The provider interface and the adapter table: what the gateway relies on is declared,
and one table says which adapters a configuration may name."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, get_args

import pytest
from mg_helpers import GOOD_ANSWER, Label, make_request
from pydantic import ValidationError

from modelgate.errors import AllProvidersFailed
from modelgate.fingerprint import request_material
from modelgate.gateway import Gateway
from modelgate.providers import (
    ADAPTERS,
    AdapterName,
    OpenAICompatibleProvider,
    Provider,
    ProviderConfig,
    ReplayProvider,
    ScriptedProvider,
    adapter_names,
    build_provider,
)
from modelgate.recording import Recorder, load_exchanges
from modelgate.types import ModelRequest, ProviderResponse


class _Minimal(Provider):
    """Only ``complete``: the interface gives the rest."""

    name = "minimal"
    model = "minimal-model"
    timeout_s = 0.05

    def __init__(self, *, hang: bool = False) -> None:
        self.hang = hang

    async def complete(self, request: ModelRequest) -> ProviderResponse:
        if self.hang:
            await asyncio.sleep(10)
        return ProviderResponse(text=GOOD_ANSWER, model=self.model, usage=None)


def test_a_provider_without_complete_cannot_be_built() -> None:
    class Incomplete(Provider):
        name, model, timeout_s = "x", "y", 1.0

    with pytest.raises(TypeError):
        Incomplete()  # type: ignore[abstract]


async def test_defaults_of_the_interface_are_what_the_gateway_uses(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    gateway = Gateway([_Minimal(hang=True)], recorder=Recorder(audit))
    with pytest.raises(AllProvidersFailed, match="attempt_timeout"):
        await gateway.attempt(make_request(), Label)
    # a timeout before the provider said: the body recorded is what request_body gives
    (exchange,) = load_exchanges(audit)
    assert exchange.request == request_material(make_request(), "minimal-model")
    await gateway.aclose()  # the default aclose: nothing to release, no error


def test_every_provider_in_modelgate_implements_the_interface() -> None:
    assert issubclass(ScriptedProvider, Provider) and ScriptedProvider.sends_upstream
    assert issubclass(ReplayProvider, Provider) and not ReplayProvider.sends_upstream
    for row in ADAPTERS.values():
        assert isinstance(row.build, type) and issubclass(row.build, Provider)
        assert row.build.sends_upstream


def test_the_adapter_table_is_what_a_configuration_accepts() -> None:
    assert adapter_names() == tuple(ADAPTERS) == ("openai", "litellm")
    assert set(get_args(AdapterName)) == set(ADAPTERS)
    assert all(name == row.name and row.summary for name, row in ADAPTERS.items())
    with pytest.raises(ValidationError):
        ProviderConfig(name="p", adapter="ollama", model="m")  # type: ignore[arg-type]


def test_build_provider_builds_the_row_the_configuration_names() -> None:
    config = ProviderConfig(name="p", base_url="http://127.0.0.1:9/v1", model="m")
    provider = build_provider(config)
    assert type(provider) is ADAPTERS["openai"].build is OpenAICompatibleProvider


def test_request_body_is_the_body_as_sent_without_secrets() -> None:
    extra: dict[str, Any] = {"api_key": "not-for-the-log", "top_k": 3}
    config = ProviderConfig(name="p", base_url="http://127.0.0.1:9/v1", model="m", extra_body=extra)
    provider = OpenAICompatibleProvider(config)
    sent = provider.wire_body(make_request())
    recorded = provider.request_body(make_request())
    assert sent["api_key"] == "not-for-the-log" and recorded["api_key"] == "[redacted]"
    assert {k: v for k, v in recorded.items() if k != "api_key"} == {
        k: v for k, v in sent.items() if k != "api_key"
    }
