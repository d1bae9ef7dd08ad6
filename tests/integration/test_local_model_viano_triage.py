"""`viano triage` with the real embedded model on 3 real reports, with a SIGKILL in the
middle (issue 39, "Tests that must exist"): the run after the kill repeats no confirmed
model call.

The command runs as a child process against the session's model server through a
loopback relay that counts the requests per case. The relay forwards the first case's
request to the model and holds the second one (never forwarded), so the child is
killed while a call is in flight and the model spends no time on an answer nobody
reads. The three reports are the GitHub issues of the data set with the smallest
interpretation contexts (3.6 to 3.9 KB, one JSON Lines dump); the answer is bounded
(``max_output_tokens`` 64) because what is checked is which calls are made, not what the
model writes: an answer cut off at the limit is still a confirmed, recorded call.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from modelgate.local_server import LocalModelServer
from viano_bug_analysis.evaluation import extract_record
from viano_bug_analysis.packages import PackageStore

# 3 interpretations of about 2,000 prompt tokens each on 2 shared cores
pytestmark = [pytest.mark.localmodel, pytest.mark.realdata, pytest.mark.timeout(900)]

# the issues of inex_bug/msrv3_closed.subset.jsonl with the smallest contexts (the lines
# are read at run time; none of them is in eval/)
ISSUES = (115087342, 336891492, 60013896)
_CASE_ID = re.compile(r'"case_id":\s*"([^"]+)"')
_CHILD = "import sys; from viano_bug_analysis.cli import app; sys.argv[0] = 'viano'; app()"


class Relay:
    """A loopback relay to the model server: counts chat requests per case id
    (``forwarded``: sent on to the model and answered); while ``hold`` is set, every
    request after the first answered one waits, unforwarded, until :meth:`release`."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.forwarded: Counter[str] = Counter()
        self.held: list[str] = []
        self.hold = True
        self._gate = threading.Event()
        self.holding = threading.Event()
        self._lock = threading.Lock()
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the caller is gone (killed)

            def do_GET(self) -> None:  # the "is a server there" probe
                self._send(200, b'{"object": "list", "data": []}')

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                user = json.loads(body)["messages"][-1]["content"]
                case = m.group(1) if (m := _CASE_ID.search(user)) else "?"
                with relay._lock:
                    hold = relay.hold and sum(relay.forwarded.values()) >= 1
                    if hold:
                        relay.held.append(case)
                if hold:
                    relay.holding.set()
                    relay._gate.wait(600)
                    self._send(503, b'{"error": "held by the test"}')
                    return
                request = urllib.request.Request(
                    relay.upstream + self.path.removeprefix("/v1"),
                    data=body,
                    headers={"Content-Type": "application/json"},
                )
                try:
                    with urllib.request.urlopen(request, timeout=900) as answer:
                        status, data = answer.status, answer.read()
                except urllib.error.HTTPError as error:
                    status, data = error.code, error.read()
                with relay._lock:
                    relay.forwarded[case] += 1
                self._send(status, data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def release(self) -> None:
        self.hold = False
        self._gate.set()

    def __enter__(self) -> Relay:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()


def _config(folder: Path, base_url: str) -> Path:
    """The embedded configuration (config/llm.local.toml's provider settings) pointed at
    the relay, one attempt, the answer bounded."""
    path = folder / "llm.toml"
    path.write_text(
        f'[[providers]]\nname = "local"\nbase_url = "{base_url}"\n'
        'model = "smollm2-135m-instruct"\napi_key_env = ""\ntimeout_s = 900\n'
        "max_output_tokens = 64\nanswer_tokens = 64\ncontext_window_tokens = 8192\n"
        'structured_output = "json_object_schema"\n'
        "[retry]\nmax_attempts = 1\nbackoff_s = [1]\n",
        encoding="utf-8",
    )
    return path


def _confirmed(store_root: Path) -> set[str]:
    """Cases whose gateway round is recorded in the store (a confirmed call)."""
    store = PackageStore.open(store_root)
    found = set()
    for row in store.list_packages():
        with store.current(str(row["case_id"]), str(row["package_id"])).open() as reader:
            if any("/rounds/" in name for name in reader.names()):
                found.add(str(row["case_id"]))
    return found


def test_embedded_triage_after_a_sigkill_repeats_no_confirmed_call(
    tmp_path: Path, real_data_dir: Path, local_model_server: LocalModelServer
) -> None:
    backlog = tmp_path / "backlog"
    backlog.mkdir()
    source = real_data_dir / "bug_reports" / "inex_bug" / "msrv3_closed.subset.jsonl"
    lines = [extract_record(source, i, tmp_path / f"{i}.json").read_bytes() for i in ISSUES]
    (backlog / "issues.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    store_root = tmp_path / "store"
    with Relay(local_model_server.base_url) as relay:
        config = _config(tmp_path, relay.base_url)
        command = [sys.executable, "-c", _CHILD, "triage", str(backlog), "--store"]
        command += [str(store_root), "--config", str(config), "--json"]
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            assert relay.holding.wait(600), "no second request reached the relay"
            # the second case's request is in flight, the first case's round recorded
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL
        first = Counter(relay.forwarded)
        confirmed = _confirmed(store_root)
        assert set(first) == confirmed and len(confirmed) == 1, (first, confirmed)
        assert relay.held and relay.held[0] not in confirmed

        relay.release()
        started = time.monotonic()
        rerun = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        payload = json.loads(rerun.stdout)
        second = relay.forwarded - first
        # the confirmed case is not asked again; the two others are, once each
        assert not set(second) & confirmed, (confirmed, first, second)
        assert sorted(second.values()) == [1, 1] and payload["model_calls"] == 2
        assert sum(payload["counts"].values()) == 3
        # every answer came back (accepted, rejected or cut off at the bound: recorded)
        assert set(payload["counts"]) <= {"COMPLETED", "ERROR"}, payload["counts"]
        assert len(_confirmed(store_root)) == 3, payload
        assert time.monotonic() - started < 600
