"""The provider seam: the ``Provider`` interface, and the configuration of an adapter.

``Provider`` declares everything the gateway uses of a provider; every adapter
(``modelgate.providers.registry.ADAPTERS``) and every test or replay provider subclasses
it. This module imports no adapter: adapters import it, and the registry imports both.
"""

from __future__ import annotations

import abc
import os
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from modelgate.errors import NotConfigured
from modelgate.fingerprint import fingerprint, request_material
from modelgate.types import ModelRequest, ProviderResponse, StructuredOutput

_RESERVED_BODY_KEYS = frozenset({"model", "messages", "stream", "n"})

# The names ``ProviderConfig.adapter`` accepts; ``registry.ADAPTERS`` has one row for
# each (checked when the registry is imported).
AdapterName = Literal["openai", "litellm"]


class Provider(abc.ABC):
    """One upstream seam, and everything the gateway asks of it.

    - ``name`` (shown in errors and exchanges), ``model`` (part of every request
      fingerprint) and ``timeout_s`` (the attempt clock the gateway enforces).
    - ``sends_upstream``: ``True`` for a provider whose ``complete`` sends a request to
      a model. ``False`` (replay): the gateway neither reserves nor settles the ledger
      and records nothing for it.
    - ``complete(request)``: exactly one upstream request (no retries of its own);
      the answer text with usage, or an error from ``modelgate.errors``. A failed
      request carries ``error.request_body`` when the provider knows it.
    - ``request_body(request)``: the request body as this provider sends it, with
      secret-named fields removed; the audit log records it for an exchange that ended
      before the provider said (a timeout, a cancellation). The default, for a provider
      without a wire format of its own, is the request material of the fingerprint.
    - ``aclose()``: release held connections; the default has nothing to release.

    The caller (the gateway) owns the wall clock, retries, failover, ledger and
    recording.
    """

    name: str
    model: str
    timeout_s: float
    sends_upstream: ClassVar[bool] = True

    @abc.abstractmethod
    async def complete(self, request: ModelRequest) -> ProviderResponse:
        """Send one request upstream; the answer, or an error from ``modelgate.errors``."""

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The body as sent for ``request``, secret-named fields removed."""
        return request_material(request, self.model)

    async def aclose(self) -> None:
        """Release held connections (nothing, by default)."""
        return None


class ProviderConfig(BaseModel):
    """One provider as configured by an app (TOML, environment).

    ``adapter`` names a row of ``modelgate.providers.registry.ADAPTERS``. ``timeout_s``
    is the wall clock of one upstream request, enforced on the caller's side by the
    gateway. ``max_output_tokens``, when set, is an upper bound on the request's own
    ``max_output_tokens``. ``extra_body`` is merged into the request body of this
    provider only (e.g. ``{"chat_template_kwargs": {"enable_thinking": False}}`` for one
    reasoning model). ``api_key_env`` names the environment variable holding the key;
    the key itself is never part of the configuration.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    adapter: AdapterName = "openai"
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
