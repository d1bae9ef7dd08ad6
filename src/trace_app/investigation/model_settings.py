"""Which model Trace asks, how, and under what guard: read from the environment.

- ``TRACE_MODEL_PROVIDER``: one of modelgate's adapters (``modelgate.providers.registry``,
  the one table of them): ``openai`` (default; httpx, any OpenAI-compatible server) or
  ``litellm`` (the optional extra; model ``nvidia_nim/...``).
- ``TRACE_MODEL``: the model id sent upstream; default
  ``nvidia/nemotron-3.5-lightning-30b-a3b`` (``nvidia_nim/`` prefixed for litellm).
- ``TRACE_MODEL_BASE_URL``: default ``https://integrate.api.nvidia.com/v1``; point it at
  vLLM, llama.cpp's server, Ollama or any other OpenAI-compatible server.
- ``TRACE_MODEL_STRUCTURED_OUTPUT``: ``json_schema`` (default; NIM, vLLM, OpenAI),
  ``json_object_schema`` (llama.cpp's server) or ``none``.
- ``NVIDIA_NIM_API_KEY``: the key for NVIDIA's hosted API (needed with NVIDIA's base URL).
- ``TRACE_MODEL_API_KEY``: a key for another server (optional; sent only when set).
- ``TRACE_LIVE_PASSPHRASE``: typed for each live check; unset means live checks are off.
  ``trace demo`` generates one instead and passes it to ``create_app`` in these settings.
- ``TRACE_PROMPT_VERSION``: ``report-lineage-v4`` (default) or ``report-lineage-v5``.
- ``TRACE_MODEL_AUDIT_LOG``: a file path; when set, every model exchange is appended to it
  as JSONL through modelgate's recorder (request bodies with secrets removed).

With none of ``NVIDIA_NIM_API_KEY``, ``TRACE_MODEL`` and ``TRACE_MODEL_BASE_URL`` set,
``configured`` is False and ``trace demo`` / ``trace eval`` start the embedded model
(:meth:`ModelSettings.for_local_server`). The ledger's request cap is a Trace setting
(``TRACE_MODEL_REQUEST_CAP``, :class:`trace_app.settings.TraceSettings`). Together the two
classes are the only readers of the environment in ``trace_app``; the key itself is read
by modelgate (``ProviderConfig.read_api_key``) when a call is due, and never logged.

The per-call settings are fixed by the spec and not configurable: temperature 0, 96 output
tokens, one attempt on one provider, a 45-second wall clock per call, and reasoning off
(``chat_template_kwargs: {"enable_thinking": false}``) on the Nemotron model only.
"""

from __future__ import annotations

import dataclasses
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from modelgate.providers import AdapterName, ProviderConfig, adapter_names
from modelgate.types import StructuredOutput
from trace_app.domain.errors import ConfigurationError

NEMOTRON_MODEL = "nvidia/nemotron-3.5-lightning-30b-a3b"
LITELLM_PREFIX = "nvidia_nim/"
NVIDIA_BASE_URL = "https://integrate.api.nvidia.com/v1"
NVIDIA_KEY_ENV = "NVIDIA_NIM_API_KEY"
OTHER_KEY_ENV = "TRACE_MODEL_API_KEY"
PASSPHRASE_ENV = "TRACE_LIVE_PASSPHRASE"  # noqa: S105 (a variable name)
AUDIT_LOG_ENV = "TRACE_MODEL_AUDIT_LOG"
CONFIGURING_VARIABLES = (NVIDIA_KEY_ENV, "TRACE_MODEL", "TRACE_MODEL_BASE_URL")

# The shipped prompt versions (src/trace_app/prompts/) and the default, chosen by the
# `trace eval` figures in docs/evaluation.md.
PROMPT_VERSIONS = ("report-lineage-v4", "report-lineage-v5")
PROMPT_VERSION = "report-lineage-v4"
PROMPT_VERSION_ENV = "TRACE_PROMPT_VERSION"
TEMPERATURE = 0.0
MAX_OUTPUT_TOKENS = 96
CALL_TIMEOUT_S = 45.0
REASONING_OFF: dict[str, Any] = {"chat_template_kwargs": {"enable_thinking": False}}

Adapter = AdapterName


class ModelSettingsError(ConfigurationError):
    """A model setting from the environment has a value Trace cannot use."""

    code = "model_settings_invalid"


def is_nemotron(model: str) -> bool:
    """True for the Nemotron model, with or without litellm's ``nvidia_nim/`` route."""
    return model.removeprefix(LITELLM_PREFIX) == NEMOTRON_MODEL


@dataclass(frozen=True, slots=True)
class ModelSettings:
    adapter: Adapter
    model: str
    base_url: str
    api_key_env: str
    structured_output: StructuredOutput
    passphrase: str | None = field(repr=False)
    timeout_s: float = CALL_TIMEOUT_S
    audit_log: Path | None = None
    # whether the environment names a model (False: only the defaults; see the module doc)
    configured: bool = True
    prompt_version: str = PROMPT_VERSION

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ModelSettings:
        env = os.environ if env is None else env
        adapter_value = env.get("TRACE_MODEL_PROVIDER", "openai").strip().lower() or "openai"
        if adapter_value not in adapter_names():
            choices = " or ".join(repr(name) for name in adapter_names())
            raise ModelSettingsError(
                f"TRACE_MODEL_PROVIDER must be {choices}, not {adapter_value!r}"
            )
        adapter = cast(Adapter, adapter_value)
        base_url = env.get("TRACE_MODEL_BASE_URL", "").strip().rstrip("/") or NVIDIA_BASE_URL
        default_model = LITELLM_PREFIX + NEMOTRON_MODEL if adapter == "litellm" else NEMOTRON_MODEL
        model = env.get("TRACE_MODEL", "").strip() or default_model
        mode_value = env.get("TRACE_MODEL_STRUCTURED_OUTPUT", "").strip() or "json_schema"
        try:
            structured = StructuredOutput(mode_value)
        except ValueError:
            choices = ", ".join(m.value for m in StructuredOutput)
            raise ModelSettingsError(
                f"TRACE_MODEL_STRUCTURED_OUTPUT must be one of {choices}, not {mode_value!r}"
            ) from None
        if base_url == NVIDIA_BASE_URL:
            key_env = NVIDIA_KEY_ENV
        else:
            key_env = OTHER_KEY_ENV if env.get(OTHER_KEY_ENV, "").strip() else ""
        passphrase = env.get(PASSPHRASE_ENV, "") or None
        audit = env.get(AUDIT_LOG_ENV, "").strip()
        prompt_version = env.get(PROMPT_VERSION_ENV, "").strip() or PROMPT_VERSION
        if prompt_version not in PROMPT_VERSIONS:
            raise ModelSettingsError(
                f"TRACE_PROMPT_VERSION must be one of {', '.join(PROMPT_VERSIONS)}, "
                f"not {prompt_version!r}"
            )
        return cls(
            adapter=adapter,
            model=model,
            base_url=base_url,
            api_key_env=key_env,
            structured_output=structured,
            passphrase=passphrase,
            audit_log=Path(audit) if audit else None,
            configured=any(env.get(name, "").strip() for name in CONFIGURING_VARIABLES),
            prompt_version=prompt_version,
        )

    def for_local_server(self, model: str, base_url: str) -> ModelSettings:
        """These settings pointed at a local OpenAI-compatible server (llama.cpp's): no key,
        JSON object with schema; the passphrase and the audit log stay as they are."""
        return dataclasses.replace(
            self,
            adapter="openai",
            model=model,
            base_url=base_url.rstrip("/"),
            api_key_env="",
            structured_output=StructuredOutput.JSON_OBJECT_SCHEMA,
            configured=True,
        )

    @property
    def live_enabled(self) -> bool:
        return self.passphrase is not None

    def passphrase_matches(self, typed: str | None) -> bool:
        """Constant-time comparison; False when live checks are off or nothing was typed."""
        if self.passphrase is None or not typed:
            return False
        return hmac.compare_digest(typed.encode("utf-8"), self.passphrase.encode("utf-8"))

    def provider_config(self) -> ProviderConfig:
        return ProviderConfig(
            name="trace-" + self.adapter,
            adapter=self.adapter,
            base_url=self.base_url,
            model=self.model,
            api_key_env=self.api_key_env,
            timeout_s=self.timeout_s,
            max_output_tokens=MAX_OUTPUT_TOKENS,
            structured_output=self.structured_output,
            extra_body=dict(REASONING_OFF) if is_nemotron(self.model) else {},
        )
