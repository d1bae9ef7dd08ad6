"""Browser-test fixtures: a real ``trace serve --demo`` on a free 127.0.0.1 port, real
accounts, and Debian's chromium through Playwright (never a downloaded browser).

- ``live_server`` (session): the server, with ``.url(path)``, ``.home`` (its TRACE_HOME),
  ``.accounts`` (the demo accounts' names and the passwords the server printed for this
  run), ``.api(method, path, payload, as_user=...)`` for quick JSON calls made as a
  signed-in account (a real session, started through ``POST /login``), ``.add_user(...)``
  (``trace user create ... --password-stdin`` against the same TRACE_HOME), ``.sign_in(page,
  name)`` (through the login page) and ``.reset()``.
- ``browser`` (module) and ``page`` (per test, a fresh context signed in as
  ``demo-coordinator``: every permission a page needs, the Reset demo button included).
- ``screenshot(page, name)`` saves ``test-artifacts/screenshots/<name>.png``.

Extra environment for the server can be given by overriding the ``live_server_env``
fixture (e.g. the investigation's passphrase or a model URL).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    PAGE_ACCOUNT,
    SCREENSHOTS,
    LiveServer,
    running_server,
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def live_server_env() -> dict[str, str]:
    """Extra environment for the server process; override to add settings."""
    return {}


@pytest.fixture(scope="session")
def live_server(
    tmp_path_factory: pytest.TempPathFactory, live_server_env: dict[str, str]
) -> Iterator[LiveServer]:
    home = tmp_path_factory.mktemp("trace-live")
    with running_server(home, live_server_env, ["--host", "127.0.0.1"]) as server:
        yield server


# Module scope, not session: Playwright's sync API keeps an event loop running in the
# main thread while it is open, and pytest-asyncio tests collected after the browser
# tests would then fail with "Runner.run() cannot be called from a running event loop".
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip(f"chromium not found at {CHROMIUM} (make browser installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def anonymous_page(browser: Any) -> Iterator[Any]:
    """A fresh browser context, not signed in."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def page(live_server: LiveServer, anonymous_page: Any) -> Any:
    """A fresh browser context signed in as ``demo-coordinator`` through the login page."""
    live_server.sign_in(anonymous_page, PAGE_ACCOUNT)
    return anonymous_page


@pytest.fixture
def screenshot() -> Callable[[Any, str], Path]:
    def take(page: Any, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
