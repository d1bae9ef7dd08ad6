"""Browser-test fixtures: a real ``trace serve`` on a free 127.0.0.1 port, and Debian's
chromium through Playwright (never a downloaded browser).

- ``live_server`` (session): the server, with ``.url(path)``, ``.home`` (its TRACE_HOME),
  ``.api(method, path, json=...)`` for quick JSON calls, and ``.reset()``.
- ``browser`` (session) and ``page`` (per test, a fresh context).
- ``screenshot(page, name)`` saves ``test-artifacts/screenshots/<name>.png``.

Extra environment for the server can be given by overriding the ``live_server_env``
fixture (e.g. the investigation's passphrase or a model URL).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "test-artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LiveServer:
    def __init__(self, base_url: str, home: Path, process: subprocess.Popen[bytes]) -> None:
        self.base_url = base_url
        self.home = home
        self.process = process

    def url(self, path: str = "/") -> str:
        return self.base_url + path

    def api(self, method: str, path: str, payload: Any = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(self.url(path), data=data, method=method)
        if method != "GET":
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def reset(self) -> dict[str, Any]:
        result: dict[str, Any] = self.api("POST", "/api/demo/reset", {})
        return result

    def incident_id(self) -> str:
        items = self.api("GET", "/api/incidents")["items"]
        found: str = next(i["id"] for i in items if i["name"] == "Flood Relief Demo")
        return found


@pytest.fixture(scope="session")
def live_server_env() -> dict[str, str]:
    """Extra environment for the server process; override to add settings."""
    return {}


@pytest.fixture(scope="session")
def live_server(
    tmp_path_factory: pytest.TempPathFactory, live_server_env: dict[str, str]
) -> Iterator[LiveServer]:
    home = tmp_path_factory.mktemp("trace-live")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "TRACE_HOME"}}
    env.update(
        {
            "TRACE_HOME": str(home / ".trace-local"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(live_server_env)
    log_path = home / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "trace_app",
                "serve",
                "--demo",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            cwd=home,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = LiveServer(f"http://127.0.0.1:{port}", home, process)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"trace serve exited: {log_path.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(server.url("/api/incidents"), timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                if time.monotonic() > deadline:
                    tail = log_path.read_text()[-2000:]
                    raise RuntimeError(f"trace serve did not start: {tail}") from exc
                time.sleep(0.2)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def screenshot() -> Callable[[Any, str], Path]:
    def take(page: Any, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
