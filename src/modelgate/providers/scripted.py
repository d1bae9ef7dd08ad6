"""A provider for tests: queued answers, delays and errors, and a history of requests.

It goes through exactly the same gateway path as a real provider (ledger, wall clock,
validation, recording); only the upstream is a queue instead of a server.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from modelgate.errors import CallFailed, ModelGateError
from modelgate.providers import _wire
from modelgate.providers.base import Provider
from modelgate.recording import scrub
from modelgate.types import ModelRequest, ProviderResponse, StructuredOutput, Usage


class ScriptExhausted(AssertionError):
    """The test asked the scripted provider for more answers than it queued."""


@dataclass(frozen=True, slots=True)
class ScriptedReply:
    """One scripted upstream outcome: answer ``text`` (or raise ``error``) after ``delay_s``.

    ``text`` may be a string, a dict (written as JSON) or a pydantic model instance.
    ``usage`` is what the provider "reports"; ``None`` makes the gateway use the estimate.
    """

    text: str | dict[str, Any] | BaseModel | None = None
    error: BaseException | None = None
    delay_s: float = 0.0
    usage: Usage | None = None

    def answer_text(self) -> str:
        if isinstance(self.text, BaseModel):
            return self.text.model_dump_json()
        if isinstance(self.text, dict):
            return json.dumps(self.text)
        return self.text or ""


ReplyLike = ScriptedReply | str | dict[str, Any] | BaseModel | BaseException


def _as_reply(item: ReplyLike) -> ScriptedReply:
    if isinstance(item, ScriptedReply):
        return item
    if isinstance(item, BaseException):
        return ScriptedReply(error=item)
    return ScriptedReply(text=item)


class ScriptedProvider(Provider):
    """Answers from a queue. ``requests`` holds every request it saw, in order."""

    def __init__(
        self,
        replies: Iterable[ReplyLike] = (),
        *,
        name: str = "scripted",
        model: str = "scripted-model",
        timeout_s: float = 45.0,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.timeout_s = timeout_s
        self.extra_body = dict(extra_body or {})
        self._queue: deque[ScriptedReply] = deque(_as_reply(r) for r in replies)
        self.requests: list[ModelRequest] = []

    def add(self, *replies: ReplyLike) -> None:
        self._queue.extend(_as_reply(r) for r in replies)

    @property
    def pending(self) -> int:
        return len(self._queue)

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The chat-completions body a real OpenAI-compatible adapter would send."""
        body: dict[str, Any] = scrub(
            _wire.chat_body(
                request,
                model=self.model,
                mode=StructuredOutput.JSON_SCHEMA,
                max_output_tokens=None,
                extra_body=self.extra_body,
            )
        )
        return body

    async def complete(self, request: ModelRequest) -> ProviderResponse:
        self.requests.append(request)
        body = self.request_body(request)
        if not self._queue:
            raise ScriptExhausted(f"{self.name}: no scripted reply left for request")
        reply = self._queue.popleft()
        if reply.delay_s > 0:
            await asyncio.sleep(reply.delay_s)
        if reply.error is not None:
            error = reply.error
            if isinstance(error, ModelGateError) and error.provider is None:
                error.provider = self.name
            if isinstance(error, CallFailed):
                error.request_body = body
            raise error
        text = reply.answer_text()
        return ProviderResponse(
            text=text,
            model=self.model,
            usage=reply.usage,
            request_body=body,
            raw={"choices": [{"message": {"role": "assistant", "content": text}}]},
        )
