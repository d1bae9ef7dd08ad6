"""The session-wide guard in tests/conftest.py: loopback only, loudly."""

from __future__ import annotations

import socket

import httpx
import pytest
from mg_helpers import Label, make_request

from modelgate.gateway import Gateway
from modelgate.providers import ProviderConfig, build_provider
from modelgate.testing import StubChatServer, StubResponse

OUTSIDE = "192.0.2.10"  # TEST-NET-1: never routed, and the guard must stop us first


def test_plain_socket_to_outside_is_refused() -> None:
    with pytest.raises(RuntimeError, match="loopback") as caught:
        socket.create_connection((OUTSIDE, 443), timeout=1)
    assert not isinstance(caught.value, OSError)  # no client may read it as transient


def test_httpx_to_outside_is_refused() -> None:
    with pytest.raises(RuntimeError, match="loopback"):
        httpx.get(f"http://{OUTSIDE}/v1/models", timeout=1)


async def test_provider_pointed_outside_fails_loudly() -> None:
    provider = build_provider(
        ProviderConfig(name="real", base_url=f"https://{OUTSIDE}/v1", model="m", timeout_s=2)
    )
    with pytest.raises(BaseException) as caught:
        await Gateway([provider]).attempt(make_request(), Label)
    # anyio may wrap it in an exception group; either way it is the guard, not a
    # transient failure the gateway would fall over or retry on
    assert _refusals(caught.value), caught.value


def _refusals(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [found for inner in error.exceptions for found in _refusals(inner)]
    return [error] if type(error).__name__ == "NetworkRefused" else []


def test_loopback_is_allowed() -> None:
    with StubChatServer(default=StubResponse.answer("{}")) as stub:
        response = httpx.post(f"http://localhost:{stub.port}/v1/chat/completions", json={})
        assert response.status_code == 200
        assert stub.count == 1
