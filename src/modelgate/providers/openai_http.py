"""OpenAI-compatible chat completions over httpx (NVIDIA's API, vLLM, llama.cpp, Ollama).

One ``complete`` call is one ``POST {base_url}/chat/completions``: httpx makes no
retries of its own and redirects are not followed. httpx's own timeout is only a
backstop one second after ``timeout_s``; the gateway's caller-side clock is the limit.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

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


def _with_body(error: CallFailed, body: dict[str, Any]) -> CallFailed:
    error.request_body = body
    return error


def _no_constants(token: str) -> Any:
    raise ValueError(f"{token} is not valid JSON")


def encode_body(body: dict[str, Any]) -> bytes:
    """The body's JSON bytes: orjson (compact, UTF-8) on the hot path; the standard
    encoder for what orjson refuses (a non-string key, an integer beyond 64 bits)."""
    try:
        return orjson.dumps(body)
    except orjson.JSONEncodeError:
        return json.dumps(body).encode()


def decode_body(content: bytes) -> Any:
    """Strict JSON (no NaN or Infinity). orjson first; what it refuses is read again by
    the standard decoder, which accepts a few things orjson does not (integers beyond
    64 bits, lone surrogates) and refuses the same constants."""
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return json.loads(content, parse_constant=_no_constants)


class OpenAICompatibleProvider(Provider):
    """``POST {base_url}/chat/completions`` with the configured structured-output mode."""

    def __init__(
        self,
        config: ProviderConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not config.base_url:
            raise NotConfigured("the openai adapter needs a base_url", provider=config.name)
        self.config = config
        self.name = config.name
        self.model = config.model
        self.timeout_s = config.timeout_s
        self.url = f"{config.base_url}/chat/completions"
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = config.read_api_key()
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        self._headers = headers
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._transport = transport

    def _client_for_this_loop(self) -> httpx.AsyncClient:
        """One client per event loop: an httpx pool is bound to the loop it first ran in,
        and CLI code may call ``asyncio.run`` more than once with one provider."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = httpx.AsyncClient(
                headers=self._headers,
                timeout=httpx.Timeout(self.config.timeout_s + 1.0),
                follow_redirects=False,
                transport=self._transport or self._default_transport(),
                trust_env=False,
            )
            self._client_loop = loop
        return self._client

    def _default_transport(self) -> httpx.AsyncHTTPTransport:
        """No transport retries. Every request goes to ``self.url`` and redirects are not
        followed, so a plain-HTTP base URL (a local server) never makes a TLS handshake:
        its transport skips loading the certificate store (~20 ms per event loop)."""
        tls = urlsplit(self.url).scheme.lower() == "https"
        return httpx.AsyncHTTPTransport(retries=0, verify=tls)

    def __repr__(self) -> str:
        return f"OpenAICompatibleProvider(name={self.name!r}, model={self.model!r})"

    def wire_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body posted for ``request`` (secret-named fields included)."""
        return _wire.chat_body(
            request,
            model=self.model,
            mode=self.config.structured_output,
            max_output_tokens=self.config.max_output_tokens,
            extra_body=self.config.extra_body,
        )

    def _recorded(self, body: dict[str, Any]) -> dict[str, Any]:
        # only the configured extra fields can carry a secret-named key
        return {**body, **scrub(self.config.extra_body)} if self.config.extra_body else body

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        return self._recorded(self.wire_body(request))

    async def complete(self, request: ModelRequest) -> ProviderResponse:
        body = self.wire_body(request)
        recorded_body = self._recorded(body)
        try:
            response = await self._client_for_this_loop().post(self.url, content=encode_body(body))
        except httpx.TimeoutException:
            raise _with_body(
                AttemptTimeout(
                    f"{self.name}: httpx timeout after {self.timeout_s + 1.0} s",
                    limit_s=self.timeout_s,
                    provider=self.name,
                ),
                recorded_body,
            ) from None
        except httpx.TransportError as exc:
            raise _with_body(
                TransportError(
                    f"{self.name}: {type(exc).__name__} talking to {self.url}", provider=self.name
                ),
                recorded_body,
            ) from None
        try:
            return self._read(response, recorded_body)
        except CallFailed as exc:
            exc.request_body = recorded_body
            raise

    def _read(self, response: httpx.Response, recorded_body: dict[str, Any]) -> ProviderResponse:
        if response.status_code != 200:
            raise _wire.status_error(
                response.status_code,
                response.text,
                response.headers.get("retry-after"),
                self.name,
            )
        try:
            payload = decode_body(response.content)
        except ValueError:  # also invalid UTF-8
            raise MalformedAnswer(
                "response body is not JSON",
                raw_text=response.content[:300].decode("utf-8", "replace"),
                provider=self.name,
            ) from None
        content = _wire.answer_text(payload, self.name, response.content)
        return ProviderResponse(
            text=content,
            model=str(payload.get("model") or self.model),
            usage=_wire.read_usage(payload.get("usage")),
            request_body=recorded_body,
            raw=payload if isinstance(payload, dict) else {},
        )

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await client.aclose()
