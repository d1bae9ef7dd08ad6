"""Fakes for the triage tests and bench: a provider and an OpenAI-compatible loopback
server that answer every request with a valid answer for the catalogue it was sent
(``interp_support.answer_for``), after a fixed delay. Both take the real gateway path."""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from interp_support import answer_for

from modelgate.providers import Provider
from modelgate.testing import chat_completion
from modelgate.types import ModelRequest, ProviderResponse, Usage
from viano_bug_analysis.analysis.catalogue import Catalogue

_CASE_ID = re.compile(r'"case_id":\s*"([^"]+)"')


def answer_text(user: str) -> tuple[str, str]:
    """(case_id, a valid answer as JSON) for the user message of a request."""
    context = json.loads(user[user.index("{") :])
    catalogue = Catalogue(context["catalogue"])
    answer = answer_for(catalogue, summary="Triage answer.")
    gap = answer["behavior_gap"]
    if gap is not None and catalogue.is_implicit_expectation(gap["source_ids"][0]):
        answer["behavior_gap"] = None  # a gap needs a stated expectation (ADR 0075)
    match = _CASE_ID.search(user)
    return (match.group(1) if match else "?"), json.dumps(answer)


class CatalogueModel(Provider):
    """A provider object (``LLMGateway(..., providers=[...])``)."""

    name = "catalogue"
    model = "catalogue-model"
    timeout_s = 30.0

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s
        self.calls: Counter[str] = Counter()

    async def complete(self, request: ModelRequest) -> ProviderResponse:
        import asyncio

        case_id, text = answer_text(request.messages[-1].content)
        self.calls[case_id] += 1
        await asyncio.sleep(self.delay_s)
        return ProviderResponse(
            text=text,
            model=self.model,
            usage=Usage(prompt_tokens=100, completion_tokens=50, source="provider"),
        )


class CatalogueServer:
    """A loopback chat-completions server; ``calls`` counts requests by case id."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s
        self.calls: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                case_id, text = answer_text(body["messages"][-1]["content"])
                with server._lock:
                    server.calls[case_id] += 1
                time.sleep(server.delay_s)
                data = json.dumps(chat_completion(text, model="catalogue-model")).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    with server._lock:
                        server.answered[case_id] += 1
                except OSError:
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def total(self) -> int:
        with self._lock:
            return sum(self.calls.values())

    def __enter__(self) -> CatalogueServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def config_file(folder: Path, base_url: str, timeout_s: float = 30) -> Path:
    path = folder / "llm.toml"
    path.write_text(
        f'[[providers]]\nname = "remote"\nbase_url = "{base_url}"\nmodel = "catalogue-model"\n'
        f'api_key_env = ""\ntimeout_s = {timeout_s}\nmax_output_tokens = 8192\n'
        "[retry]\nmax_attempts = 1\nbackoff_s = [1]\n",
        encoding="utf-8",
    )
    return path


def real_reports(data: Path, folder: Path, bugzilla: int, github: int) -> Path:
    """A folder of real reports from the data set: ``bugzilla`` Bugzilla bugs, one file
    each, and a JSON Lines dump of ``github`` GitHub issues (lines copied at run time)."""
    folder.mkdir(parents=True, exist_ok=True)
    bugs = data / "bug_reports" / "bugbug" / "bugs.json"
    with bugs.open("rb") as lines:
        for i, line in zip(range(bugzilla), lines, strict=False):
            (folder / f"bug-{i:03d}.json").write_bytes(line.rstrip(b"\r\n"))
    issues = data / "bug_reports" / "bugbug" / "github_webcompat_web-bugs_issues.subset.json"
    with issues.open("rb") as lines:
        picked = [line for _, line in zip(range(github), lines, strict=False)]
    if picked:
        (folder / "issues.jsonl").write_bytes(b"".join(picked))
    return folder
