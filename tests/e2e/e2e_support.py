"""The live server the browser tests drive: ``trace serve --demo`` on a free 127.0.0.1
port, with the demo accounts it printed for this run (see conftest.py)."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from email import message_from_bytes
from email.message import Message
from pathlib import Path
from typing import Any

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
# The account the browser pages and the quick API calls use unless a test names another.
PAGE_ACCOUNT = "demo-coordinator"
API_ACCOUNT = "demo-admin"
# An account a test adds with add_user: at least 12 characters.
ADDED_PASSWORD = "browser tests password"
# "  demo-reporter     <password>  (reporter, Central Hospital Demo)" in the terminal output
DEMO_ACCOUNT_LINE = re.compile(r"^\s+(demo-[a-z]+)\s+(\S+)\s+\(", re.MULTILINE)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LiveServer:
    def __init__(
        self,
        base_url: str,
        home: Path,
        process: subprocess.Popen[bytes],
        env: dict[str, str],
        accounts: dict[str, str],
    ) -> None:
        self.base_url = base_url
        self.home = home
        self.process = process
        self.env = env
        self.accounts = accounts  # name -> password
        self._openers: dict[str, urllib.request.OpenerDirector] = {}

    def url(self, path: str = "/") -> str:
        return self.base_url + path

    def add_user(self, name: str, role: str, organization: str | None = None) -> str:
        """A new account made at the server's command line (``trace user create``), as an
        operator would; returns its password (also kept in ``.accounts``)."""
        command = [sys.executable, "-m", "trace_app", "user", "create", name, "--role", role]
        if organization:
            command += ["--organization", organization]
        subprocess.run(
            [*command, "--password-stdin"],
            input=ADDED_PASSWORD + "\n",
            text=True,
            env=self.env,
            cwd=self.home,
            check=True,
            capture_output=True,
            timeout=60,
        )
        self.accounts[name] = ADDED_PASSWORD
        return ADDED_PASSWORD

    def _opener(self, name: str) -> urllib.request.OpenerDirector:
        """A cookie jar holding a real session of ``name``, started through the login form
        (the double-submit CSRF token from the login page, then POST /login)."""
        if name not in self._openers:
            jar = http.cookiejar.CookieJar()
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
            opener.open(self.url("/login"), timeout=30).read()
            csrf = next(c.value for c in jar if c.name == "trace_csrf")
            form = {
                "name": name,
                "password": self.accounts[name],
                "next": "/",
                "csrf_token": csrf,
            }
            data = urllib.parse.urlencode(form).encode()
            opener.open(self.url("/login"), data=data, timeout=30).read()
            assert any(c.name == "trace_session" for c in jar), f"{name} could not sign in"
            self._openers[name] = opener
        return self._openers[name]

    def api(self, method: str, path: str, payload: Any = None, as_user: str = API_ACCOUNT) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(self.url(path), data=data, method=method)
        if method != "GET":
            request.add_header("Content-Type", "application/json")
        with self._opener(as_user).open(request, timeout=30) as response:
            return json.loads(response.read())

    def anonymous_status(self, path: str) -> int:
        try:
            with urllib.request.urlopen(self.url(path), timeout=30) as response:
                status: int = response.status
                return status
        except urllib.error.HTTPError as exc:
            return exc.code

    def sign_in(self, page: Any, name: str) -> None:
        """Sign the browser page in through the login page."""
        page.goto(self.url("/login"))
        page.get_by_label("Name").fill(name)
        page.get_by_label("Password").fill(self.accounts[name])
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(lambda url: "/login" not in url)
        assert name in (page.locator("form.signed-in").text_content() or "")  # a folded menu too

    def sign_out(self, page: Any) -> None:
        page.locator("form.signed-in").get_by_role("button", name="Sign out").click()
        page.wait_for_url("**/login?signed_out=1")

    def reset(self) -> dict[str, Any]:
        result: dict[str, Any] = self.api("POST", "/api/demo/reset", {})
        return result

    def incident_id(self) -> str:
        items = self.api("GET", "/api/incidents")["items"]
        found: str = next(i["id"] for i in items if i["name"] == "Flood Relief Demo")
        return found


def demo_accounts(output: str) -> dict[str, str]:
    """The demo accounts' names and passwords from ``trace serve --demo``'s output."""
    return dict(DEMO_ACCOUNT_LINE.findall(output.split("Demo accounts", 1)[-1]))


@contextmanager
def running_server(home: Path, extra_env: dict[str, str], args: list[str]) -> Iterator[LiveServer]:
    """``trace serve --demo`` in ``home`` (its log in ``home/server.log``) until it answers
    its health check and has printed the demo accounts; stopped afterwards."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "TRACE_HOME"}}
    env.update(
        {
            "TRACE_HOME": str(home / ".trace-local"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra_env)
    log_path = home / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "trace_app", "serve", "--demo", *args, "--port", str(port)],
            cwd=home,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"trace serve exited: {log_path.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                if time.monotonic() > deadline:
                    tail = log_path.read_text()[-2000:]
                    raise RuntimeError(f"trace serve did not start: {tail}") from exc
                time.sleep(0.2)
        accounts = demo_accounts(log_path.read_text())
        assert set(accounts) == {
            "demo-viewer",
            "demo-reporter",
            "demo-reviewer",
            "demo-coordinator",
            "demo-admin",
        }, log_path.read_text()[-2000:]
        yield LiveServer(f"http://127.0.0.1:{port}", home, process, env, accounts)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class MailInbox:
    """What a real SMTP server (aiosmtpd, :func:`mail_inbox`) received, in order."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    async def handle_DATA(self, _server: Any, _session: Any, envelope: Any) -> str:
        self.messages.append(message_from_bytes(envelope.content))
        return "250 OK"

    def wait_for(self, count: int, timeout: float = 20.0) -> list[Message]:
        deadline = time.monotonic() + timeout
        while len(self.messages) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(self.messages) >= count, f"{len(self.messages)} of {count} mails came"
        return self.messages


@contextmanager
def mail_inbox() -> Iterator[tuple[MailInbox, int]]:
    """An SMTP server on 127.0.0.1 (a free port) and what it receives."""
    from aiosmtpd.controller import Controller

    handler, port = MailInbox(), free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield handler, port
    finally:
        controller.stop()
