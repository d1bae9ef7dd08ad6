"""Fixtures for modelgate tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from modelgate.testing import StubChatServer


@pytest.fixture
def stub() -> Iterator[StubChatServer]:
    """A real HTTP server on 127.0.0.1 that counts the requests it receives."""
    with StubChatServer() as server:
        yield server
