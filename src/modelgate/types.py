"""Request, response, usage and answer types shared by every provider and the gateway.

Plain data only (frozen dataclasses and one enum). How an answer text becomes a typed,
validated value (output schema, closed enums, strict parsing) is in
``modelgate.answers``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

OutputT = TypeVar("OutputT", bound=BaseModel)

UsageSource = Literal["provider", "estimate"]


class StructuredOutput(enum.StrEnum):
    """How a provider is asked for structured output (a per-provider setting).

    - ``json_schema``: OpenAI form ``{"type": "json_schema", "json_schema": {...}}``
      (OpenAI, NVIDIA NIM, vLLM).
    - ``json_object_schema``: ``{"type": "json_object", "schema": {...}}`` (llama.cpp's
      server, which answers HTTP 500 to the ``json_schema`` form).
    - ``none``: no ``response_format``; the answer is still parsed and validated.
    """

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT_SCHEMA = "json_object_schema"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What a caller asks for. Providers turn it into their own wire format.

    ``output_schema`` is the JSON schema of the typed answer (from the pydantic output
    type, with per-request enums already closed). ``prompt_version`` is part of every
    request fingerprint. ``temperature`` and ``max_output_tokens`` are sent as given.
    """

    messages: tuple[Message, ...]
    output_name: str
    output_schema: dict[str, Any]
    prompt_version: str
    temperature: float = 0.0
    max_output_tokens: int = 256

    def input_characters(self) -> int:
        return sum(len(m.content) for m in self.messages)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one exchange; ``source`` says whether the provider reported it."""

    prompt_tokens: int
    completion_tokens: int
    source: UsageSource

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def estimate_usage(request: ModelRequest) -> Usage:
    """The documented estimate: input characters / 4 + 150 prompt tokens, 16 completion."""
    return Usage(
        prompt_tokens=request.input_characters() // 4 + 150,
        completion_tokens=16,
        source="estimate",
    )


@dataclass(frozen=True, slots=True)
class ProviderResponse:
    """One provider answer before validation.

    ``request_body`` is the body as sent with secrets removed; ``raw`` is the decoded
    response body; ``usage`` is ``None`` when the provider reported none.
    """

    text: str
    model: str
    usage: Usage | None
    request_body: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Answer(Generic[OutputT]):
    """A validated, typed answer and how it was obtained."""

    value: OutputT
    model: str
    provider: str
    usage: Usage
    request_fingerprint: str
    latency_s: float
    raw_text: str
    replayed: bool = False
