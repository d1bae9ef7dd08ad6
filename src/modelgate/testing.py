"""A real OpenAI-compatible HTTP stub on 127.0.0.1 for tests and benchmarks.

``StubChatServer`` answers ``POST .../chat/completions`` from a script of
``StubResponse`` values (status, body, headers, delay) and counts every request it
receives, so a test can prove how many upstream requests a call really made.
It uses only the standard library and listens on loopback only.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


def chat_completion(
    content: str | None,
    *,
    model: str = "stub-model",
    prompt_tokens: int | None = 11,
    completion_tokens: int | None = 7,
) -> dict[str, Any]:
    """A minimal chat-completion body (``usage`` omitted when token counts are None)."""
    body: dict[str, Any] = {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
    }
    if prompt_tokens is not None and completion_tokens is not None:
        body["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
    return body


@dataclass(frozen=True, slots=True)
class StubResponse:
    status: int = 200
    body: dict[str, Any] | str | bytes = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    @classmethod
    def answer(cls, content: str | None, *, delay_s: float = 0.0, **kwargs: Any) -> StubResponse:
        return cls(body=chat_completion(content, **kwargs), delay_s=delay_s)

    def encoded(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()


@dataclass(frozen=True, slots=True)
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class StubChatServer:
    """Threaded HTTP server on ``127.0.0.1:<free port>``; use as a context manager."""

    def __init__(
        self,
        script: Iterable[StubResponse] = (),
        *,
        default: StubResponse | None = None,
    ) -> None:
        self._script: deque[StubResponse] = deque(script)
        self.default = default
        self.requests: list[SeenRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def add(self, *responses: StubResponse) -> None:
        with self._lock:
            self._script.extend(responses)

    def _next(self) -> StubResponse:
        with self._lock:
            if self._script:
                return self._script.popleft()
        if self.default is not None:
            return self.default
        return StubResponse(status=599, body='{"error": "stub has no scripted response"}')

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # headers and body go out in two writes: without this, Nagle's algorithm
                # and delayed ACKs add about 40 ms to every response on loopback
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                seen = SeenRequest("POST", self.path, dict(self.headers.items()), body)
                with stub._lock:
                    stub.requests.append(seen)
                reply = stub._next()
                deadline = time.monotonic() + reply.delay_s
                while time.monotonic() < deadline and not stub._stopping.is_set():
                    time.sleep(min(0.01, max(0.0, deadline - time.monotonic())))
                data = reply.encoded()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler

    def start(self) -> StubChatServer:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> StubChatServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
