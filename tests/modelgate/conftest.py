"""Fixtures for modelgate tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from modelgate.testing import StubChatServer

# mg_helpers / mg_workers import by name under any --import-mode (spawned children
# inherit sys.path)
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture
def stub() -> Iterator[StubChatServer]:
    """A real HTTP server on 127.0.0.1 that counts the requests it receives."""
    with StubChatServer() as server:
        yield server
