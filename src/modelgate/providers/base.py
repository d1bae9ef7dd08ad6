"""The provider seam: one async method, plus the configuration that builds a provider."""

from __future__ import annotations

import os
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from modelgate.errors import NotConfigured
from modelgate.fingerprint import fingerprint
from modelgate.types import ModelRequest, ProviderResponse, StructuredOutput

_RESERVED_BODY_KEYS = frozenset({"model", "messages", "stream", "n"})


@runtime_checkable
class Provider(Protocol):
    """One thin interface per seam.

    ``complete`` sends exactly one upstream request (no retries of its own) and returns
    the answer text with usage, or raises an error from ``modelgate.errors``. The
    caller (the gateway) owns the wall clock, retries, failover, ledger and recording.

    A provider may also set ``sends_upstream = False`` (replay does): the gateway then
    neither reserves nor settles the ledger for it.
    """

    name: str
    model: str
    timeout_s: float

    async def complete(self, request: ModelRequest) -> ProviderResponse: ...


class ProviderConfig(BaseModel):
    """One provider as configured by an app (TOML, environment).

    ``timeout_s`` is the wall clock of one upstream request, enforced on the caller's
    side by the gateway. ``max_output_tokens``, when set, is an upper bound on the
    request's own ``max_output_tokens``. ``extra_body`` is merged into the request body
    of this provider only (e.g. ``{"chat_template_kwargs": {"enable_thinking": False}}``
    for one reasoning model). ``api_key_env`` names the environment variable holding the
    key; the key itself is never part of the configuration.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    adapter: Literal["openai", "litellm"] = "openai"
    base_url: str = ""
    model: str = Field(min_length=1)
    api_key_env: str = ""
    timeout_s: float = Field(default=45.0, gt=0, le=3600)
    max_output_tokens: int | None = Field(default=None, ge=1)
    structured_output: StructuredOutput = StructuredOutput.JSON_SCHEMA
    extra_body: dict[str, Any] = Field(default_factory=dict)

    @field_validator("extra_body")
    @classmethod
    def _no_reserved_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        clash = sorted(_RESERVED_BODY_KEYS & value.keys())
        if clash:
            raise ValueError(f"extra_body may not set {', '.join(clash)}")
        return value

    @field_validator("base_url")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return value.rstrip("/")

    def read_api_key(self) -> str | None:
        """The key from ``api_key_env``; ``None`` when no key is configured.

        Raises ``NotConfigured`` when a variable is named but unset or empty.
        """
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise NotConfigured(
                f"environment variable {self.api_key_env} is not set", provider=self.name
            )
        return key

    def fingerprint(self) -> str:
        """``provider-config-v1:sha256:...`` of every field (the key's value is not one)."""
        return fingerprint(self.model_dump(mode="json"), "provider-config")


def build_provider(config: ProviderConfig) -> Provider:
    """Build the adapter a configuration names. ``NotConfigured`` when it cannot work
    (a named key is unset, litellm is not installed, a litellm route is not supported)."""
    if config.adapter == "openai":
        from modelgate.providers.openai_http import OpenAICompatibleProvider

        return OpenAICompatibleProvider(config)
    from modelgate.providers.litellm_provider import LiteLLMProvider

    return LiteLLMProvider(config)
