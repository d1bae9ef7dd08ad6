"""The OpenAI chat-completions wire format, shared by the adapters."""

from __future__ import annotations

import email.utils
import math
import time
from typing import Any

from modelgate.errors import (
    CallFailed,
    MalformedAnswer,
    ProviderStatusError,
    RateLimited,
    Rejected,
)
from modelgate.types import ModelRequest, StructuredOutput, Usage

MAX_ERROR_EXCERPT = 300


def response_format(request: ModelRequest, mode: StructuredOutput) -> dict[str, Any] | None:
    """The ``response_format`` field for one structured-output mode (``None``: omit it)."""
    if mode is StructuredOutput.JSON_SCHEMA:
        return {
            "type": "json_schema",
            "json_schema": {
                "name": request.output_name,
                "schema": request.output_schema,
                "strict": True,
            },
        }
    if mode is StructuredOutput.JSON_OBJECT_SCHEMA:
        return {"type": "json_object", "schema": request.output_schema}
    return None


def max_tokens(request: ModelRequest, upper_bound: int | None) -> int:
    if upper_bound is None:
        return request.max_output_tokens
    return min(request.max_output_tokens, upper_bound)


def chat_body(
    request: ModelRequest,
    *,
    model: str,
    mode: StructuredOutput,
    max_output_tokens: int | None,
    extra_body: dict[str, Any],
) -> dict[str, Any]:
    """The JSON body of ``POST /chat/completions``. ``extra_body`` is merged last."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": max_tokens(request, max_output_tokens),
    }
    fmt = response_format(request, mode)
    if fmt is not None:
        body["response_format"] = fmt
    body.update(extra_body)
    return body


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header: delta-seconds or an HTTP date; ``None`` if absent
    or unreadable. Negative values become 0."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(0.0, seconds)


def status_error(status: int, body_text: str, retry_after: str | None, provider: str) -> CallFailed:
    """Classify an HTTP error status: 429 rate limited, 5xx transient, other 4xx rejected."""
    excerpt = body_text[:MAX_ERROR_EXCERPT]
    if status == 429:
        return RateLimited(
            f"HTTP 429 from {provider}: {excerpt}",
            status=status,
            retry_after_s=parse_retry_after(retry_after),
            provider=provider,
        )
    if status >= 500:
        return ProviderStatusError(
            f"HTTP {status} from {provider}: {excerpt}",
            status=status,
            retry_after_s=parse_retry_after(retry_after),
            provider=provider,
        )
    return Rejected(f"HTTP {status} from {provider}: {excerpt}", status=status, provider=provider)


def read_usage(raw: Any) -> Usage | None:
    """Provider-reported usage when both token counts are non-negative integers."""
    if not isinstance(raw, dict):
        return None
    prompt = raw.get("prompt_tokens")
    completion = raw.get("completion_tokens")
    if (
        isinstance(prompt, int)
        and isinstance(completion, int)
        and not isinstance(prompt, bool)
        and not isinstance(completion, bool)
        and prompt >= 0
        and completion >= 0
    ):
        return Usage(prompt_tokens=prompt, completion_tokens=completion, source="provider")
    return None


def answer_text(payload: Any, provider: str, raw: str | bytes) -> str:
    """``choices[0].message.content`` as a string, else ``MalformedAnswer``."""
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise MalformedAnswer(
            "response is not a chat completion (no choices[0].message.content)",
            raw_text=_excerpt(raw),
            provider=provider,
        ) from None
    if not isinstance(content, str):
        raise MalformedAnswer(
            "chat completion has no text content", raw_text=_excerpt(raw), provider=provider
        )
    return content


def _excerpt(raw: str | bytes) -> str:
    """The start of a raw response body as text, for an error (decoded only then)."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    return text[:MAX_ERROR_EXCERPT]
