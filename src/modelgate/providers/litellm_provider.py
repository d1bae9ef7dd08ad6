"""The litellm adapter (optional extra ``litellm==1.102.1``), imported only when built.

Exactly one upstream request per ``complete``: litellm's own retries
(``num_retries=0``) and the OpenAI SDK's (``max_retries=0``) are both off, and only
routes measured to honour that are offered. With litellm 1.102.1 the ``nvidia_nim/``
route sends 3 requests on an HTTP 500, a 429 or a timeout even with both set to 0,
while ``openai/`` and ``hosted_vllm/`` with an ``api_base`` send 1. So:

- ``openai/<model>`` and ``hosted_vllm/<model>`` are used as given (``base_url``
  becomes ``api_base``);
- ``nvidia_nim/<model>`` is sent as ``openai/<model>`` to ``base_url`` (default
  NVIDIA's hosted API), which speaks the same OpenAI wire format;
- any other route is refused with ``NotConfigured``.

``tests/modelgate/test_upstream_count.py`` proves the count on every offered route.
Errors are classified by exception type and the upstream HTTP status found in the
exception chain, never by message text.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator
from typing import Any

from modelgate.errors import (
    AttemptTimeout,
    CallFailed,
    MalformedAnswer,
    NotConfigured,
    TransportError,
)
from modelgate.providers import _wire
from modelgate.providers.base import Provider, ProviderConfig
from modelgate.recording import scrub
from modelgate.types import ModelRequest, ProviderResponse

NVIDIA_API_BASE = "https://integrate.api.nvidia.com/v1"
# route prefix -> (prefix sent to litellm, default api_base)
ROUTES: dict[str, tuple[str, str | None]] = {
    "openai": ("openai", None),
    "hosted_vllm": ("hosted_vllm", None),
    "nvidia_nim": ("openai", NVIDIA_API_BASE),
}


def _import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        with warnings.catch_warnings():
            # pydantic notes about litellm's own TypedDicts, raised while it imports
            warnings.simplefilter("ignore", UserWarning)
            import litellm
    except ImportError:
        raise NotConfigured(
            "litellm is not installed (pip install 'trace-viano[litellm]')"
        ) from None
    litellm.suppress_debug_info = True
    litellm.num_retries = 0
    return litellm


def resolve_route(config: ProviderConfig) -> tuple[str, str]:
    """``(model sent to litellm, api_base)`` for a configured litellm model."""
    prefix, sep, rest = config.model.partition("/")
    if not sep or not rest or prefix not in ROUTES:
        offered = ", ".join(f"{p}/..." for p in ROUTES)
        raise NotConfigured(
            f"litellm route {config.model!r} is not offered (offered: {offered}); only routes "
            "proven to send exactly one upstream request are allowed",
            provider=config.name,
        )
    sent_prefix, default_base = ROUTES[prefix]
    api_base = config.base_url or default_base
    if not api_base:
        raise NotConfigured(f"litellm route {prefix}/ needs a base_url", provider=config.name)
    return f"{sent_prefix}/{rest}", api_base


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


class LiteLLMProvider(Provider):
    """One ``litellm.acompletion`` per request, retries off at every layer."""

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        self.name = config.name
        self.model = config.model
        self.timeout_s = config.timeout_s
        self.route_model, self.api_base = resolve_route(config)
        self._api_key = config.read_api_key()
        self._litellm = _import_litellm()

    def __repr__(self) -> str:
        return f"LiteLLMProvider(name={self.name!r}, model={self.model!r})"

    def wire_body(self, request: ModelRequest) -> dict[str, Any]:
        """The body litellm sends (its OpenAI route writes these fields as they are)."""
        return _wire.chat_body(
            request,
            model=self.route_model.partition("/")[2],
            mode=self.config.structured_output,
            max_output_tokens=self.config.max_output_tokens,
            extra_body=self.config.extra_body,
        )

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        recorded: dict[str, Any] = scrub(self.wire_body(request))
        return recorded

    async def complete(self, request: ModelRequest) -> ProviderResponse:
        body = self.wire_body(request)
        recorded: dict[str, Any] = scrub(body)
        kwargs: dict[str, Any] = {
            "model": self.route_model,
            "api_base": self.api_base,
            "api_key": self._api_key or "no-key",
            "messages": body["messages"],
            "temperature": body["temperature"],
            "max_tokens": body["max_tokens"],
            "num_retries": 0,
            "max_retries": 0,
            "timeout": self.timeout_s + 1.0,
        }
        if "response_format" in body:
            kwargs["response_format"] = body["response_format"]
        if self.config.extra_body:
            kwargs["extra_body"] = dict(self.config.extra_body)
        try:
            result = await self._litellm.acompletion(**kwargs)
        except Exception as exc:
            error = self._classify(exc)
            error.request_body = recorded
            raise error from None
        raw = _to_dict(result)
        text = raw.get("choices", [{}])[0].get("message", {}).get("content") if raw else None
        if not isinstance(text, str):
            failure = MalformedAnswer(
                "litellm response has no text content",
                raw_text=json.dumps(raw)[:300],
                provider=self.name,
            )
            failure.request_body = recorded
            raise failure
        return ProviderResponse(
            text=text,
            model=str(raw.get("model") or self.model),
            usage=_wire.read_usage(raw.get("usage")),
            request_body=recorded,
            raw=raw,
        )

    def _classify(self, exc: Exception) -> CallFailed:
        import httpx
        import openai

        chain = list(_chain(exc))
        # Only a real upstream response decides a status: litellm also raises subclasses
        # of openai's status errors (with a made-up 500) for answers it failed to parse.
        for item in chain:
            response: Any = None
            if isinstance(item, httpx.HTTPStatusError):
                response = item.response
            elif (
                isinstance(item, openai.APIStatusError)
                and type(item).__module__.split(".")[0] == "openai"
            ):
                response = item.response
            if response is not None:
                return _wire.status_error(
                    response.status_code,
                    _safe_text(response),
                    response.headers.get("retry-after"),
                    self.name,
                )
        timeouts = (httpx.TimeoutException, openai.APITimeoutError, self._litellm.Timeout)
        if any(isinstance(item, timeouts) for item in chain):
            return AttemptTimeout(
                f"{self.name}: litellm timeout", limit_s=self.timeout_s, provider=self.name
            )
        connection = (
            httpx.TransportError,
            openai.APIConnectionError,
            self._litellm.APIConnectionError,
        )
        if any(isinstance(item, connection) for item in chain):
            return TransportError(f"{self.name}: connection failed", provider=self.name)
        malformed = (ValueError, openai.APIResponseValidationError, self._litellm.APIError)
        if any(isinstance(item, malformed) for item in chain):
            return MalformedAnswer(
                f"{self.name}: the response is not a chat completion ({type(exc).__name__})",
                provider=self.name,
            )
        return TransportError(
            f"{self.name}: unclassified litellm failure {type(exc).__name__}", provider=self.name
        )


def _safe_text(response: Any) -> str:
    try:
        return str(response.text)
    except Exception:
        return ""


def _to_dict(result: Any) -> dict[str, Any]:
    dump = getattr(result, "model_dump", None)
    if callable(dump):
        data = dump()
        return data if isinstance(data, dict) else {}
    return result if isinstance(result, dict) else {}
