"""GatewayConfig: the operator's TOML file for Viano's LLM gateway v1.

The file lists providers in failover order, one retry policy and a few limits (see
``config/llm.example.toml`` and docs/llm-gateway-v1.md)::

    [[providers]]                 # first entry is tried first in every attempt
    name = "local"
    adapter = "openai"            # or "litellm"
    base_url = "http://127.0.0.1:8765/v1"
    model = "smollm2-135m-instruct"
    api_key_env = ""              # empty: no key is sent
    timeout_s = 45                # wall clock of one upstream request (caller side)
    max_output_tokens = 4096
    structured_output = "json_schema"
    context_window_tokens = 32768 # optional: prompt + answer; contexts are fitted to it
    answer_tokens = 1024          # optional: the answer size the request schema bounds to

    [retry]
    max_attempts = 3              # attempts per attempt_id, each one a failover pass
    backoff_s = [1, 4, 16]        # delay before attempt 2, 3, ... (last value repeats)

    [limits]
    max_request_bytes = 1048576   # a prompt larger than this is never sent
    max_answer_bytes = 2097152    # an answer larger than this is a bad answer
    request_cap = 0               # lifetime request cap in ledger_path; 0: no cap
    ledger_path = ""              # JSON request ledger; "" keeps none

Keys are validated strictly (an unknown key is an error, so a typo cannot silently
disable a setting). API keys never appear in the file: ``api_key_env`` names the
environment variable that holds one.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from modelgate.fingerprint import fingerprint
from modelgate.providers.base import ProviderConfig
from viano_bug_analysis.errors import VianoError


class GatewayConfigError(VianoError):
    """The gateway configuration file is missing, not TOML, or not valid."""

    code = "llm.config_invalid"


class RetrySettings(BaseModel):
    """How many attempts one ``attempt_id`` gets and the delay before each next one.

    ``backoff_s[i]`` is the delay before attempt ``i + 2``; when the list is shorter than
    the attempts, its last value repeats. A provider's Retry-After, when larger, wins
    if ``honour_retry_after`` is true.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_attempts: int = Field(default=3, ge=1, le=50)
    backoff_s: tuple[float, ...] = (1.0, 4.0, 16.0)
    honour_retry_after: bool = True

    @model_validator(mode="after")
    def _non_negative(self) -> RetrySettings:
        if any(delay < 0 for delay in self.backoff_s):
            raise ValueError("backoff_s values must be >= 0")
        return self

    def delay_after(self, attempt_number: int) -> float:
        """The delay before attempt ``attempt_number + 1`` (1-based attempts)."""
        if not self.backoff_s:
            return 0.0
        index = min(attempt_number - 1, len(self.backoff_s) - 1)
        return float(self.backoff_s[max(index, 0)])


class GatewayLimits(BaseModel):
    """Operational limits of the gateway (the interpreter has its own, see
    ``InterpretationLimits``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_request_bytes: int = Field(default=1 << 20, ge=1024)
    max_answer_bytes: int = Field(default=2 << 20, ge=1024)
    request_cap: int = Field(default=0, ge=0, le=1000)
    ledger_path: str = ""


class VianoProviderConfig(ProviderConfig):
    """A provider as Viano configures it: modelgate's settings plus the model's context
    window in tokens (``context_window_tokens``: prompt and answer together; llama.cpp's
    ``n_ctx`` for the embedded model). With a window, PromptBuilder shortens each
    context so that the request and ``max_output_tokens`` fit it
    (``analysis/budget.py``); without one, only ``InterpretationLimits`` bound it."""

    context_window_tokens: int | None = Field(default=None, ge=1024, le=10_000_000)
    # The answer size (tokens) the request schema bounds every answer to, when it should
    # be smaller than ``max_output_tokens``: a slow model whose time is its output (the
    # embedded model, ADR 0105). ``max_output_tokens`` stays the request's hard limit and
    # what the context budget keeps free; validation is the same either way.
    answer_tokens: int | None = Field(default=None, ge=64, le=1_000_000)

    @model_validator(mode="after")
    def _answer_within_output(self) -> VianoProviderConfig:
        limit = self.max_output_tokens
        if self.answer_tokens is not None and limit is not None and self.answer_tokens > limit:
            raise ValueError(
                f"answer_tokens ({self.answer_tokens}) exceeds max_output_tokens ({limit})"
            )
        return self


class GatewayConfig(BaseModel):
    """Providers in failover order, the retry policy and the limits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    providers: tuple[VianoProviderConfig, ...] = Field(min_length=1)
    retry: RetrySettings = RetrySettings()
    limits: GatewayLimits = GatewayLimits()

    @model_validator(mode="after")
    def _unique_names(self) -> GatewayConfig:
        names = [p.name for p in self.providers]
        if len(set(names)) != len(names):
            raise ValueError(f"provider names must be unique, got {names}")
        return self

    @classmethod
    def load(cls, path: str | Path) -> GatewayConfig:
        """Read and validate a TOML file. ``GatewayConfigError`` when it cannot be used."""
        source = Path(path)
        from viano_bug_analysis.intake.raw import read_bounded

        try:
            raw = read_bounded(source, MAX_CONFIG_BYTES, code="llm.config_too_large")
        except OSError as exc:
            raise GatewayConfigError(
                f"cannot read gateway configuration {source}: {exc.strerror}",
                code="llm.config_unreadable",
                path=str(source),
            ) from None
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise GatewayConfigError(
                f"{source} is not valid UTF-8 TOML: {exc}",
                code="llm.config_not_toml",
                path=str(source),
            ) from None
        return cls.from_mapping(data, where=str(source))

    @classmethod
    def from_mapping(cls, data: dict[str, Any], *, where: str = "<mapping>") -> GatewayConfig:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise GatewayConfigError(
                f"invalid gateway configuration in {where}: {problems}", path=where
            ) from None

    @classmethod
    def embedded(cls) -> GatewayConfig:
        """The configuration shipped in the package (``llm/embedded.toml``): the embedded
        local model on 127.0.0.1:8765."""
        text = resources.files("viano_bug_analysis.llm").joinpath(EMBEDDED_FILE)
        data = tomllib.loads(text.read_text(encoding="utf-8"))
        return cls.from_mapping(data, where=f"<package>/{EMBEDDED_FILE}")

    def fingerprint(self) -> str:
        """``llm_config-v1:sha256:...`` over every provider, retry and limit setting.

        Key values are never part of it (only the names of their variables).
        """
        data = self.model_dump(mode="json")
        for provider in data["providers"]:
            # no window: the same fingerprint as before the setting existed
            for key in ("context_window_tokens", "answer_tokens"):
                if provider.get(key) is None:
                    provider.pop(key, None)
        return fingerprint(data, "llm_config")


MAX_CONFIG_BYTES = 1 << 20  # a gateway configuration is a few hundred bytes
EMBEDDED_FILE = "embedded.toml"
LOCAL_CONFIG = Path("config") / "llm.local.toml"


def resolve_config(path: Path | None) -> tuple[GatewayConfig, str]:
    """The configuration a command uses, and where it came from (for people).

    ``path`` given: that file (an unreadable one is an error, never a fallback).
    Otherwise ``config/llm.local.toml`` of the current folder when it exists, else the
    configuration shipped in the package (:meth:`GatewayConfig.embedded`)."""
    if path is not None:
        return GatewayConfig.load(path), str(path)
    if LOCAL_CONFIG.is_file():
        return GatewayConfig.load(LOCAL_CONFIG), str(LOCAL_CONFIG)
    return GatewayConfig.embedded(), "the embedded default (no config/llm.local.toml here)"
