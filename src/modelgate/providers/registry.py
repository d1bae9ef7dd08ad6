"""The provider adapters: one table, ``ADAPTERS``, read by ``build_provider`` and by the
apps' settings (Trace's ``TRACE_MODEL_PROVIDER``, Viano's ``[[providers]] adapter``).

To add an adapter: write a ``Provider`` subclass taking a ``ProviderConfig`` (its own
module under ``modelgate/providers/``, importing any heavy library only when it is
built), add its name to ``base.AdapterName`` and a row here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import get_args

from modelgate.providers.base import AdapterName, Provider, ProviderConfig
from modelgate.providers.litellm_provider import LiteLLMProvider
from modelgate.providers.openai_http import OpenAICompatibleProvider


@dataclass(frozen=True, slots=True)
class Adapter:
    """One row: the configured name, what builds it, and a line for help texts."""

    name: AdapterName
    build: Callable[[ProviderConfig], Provider]
    summary: str


ADAPTERS: Mapping[str, Adapter] = MappingProxyType(
    {
        "openai": Adapter(
            "openai",
            OpenAICompatibleProvider,
            "any OpenAI-compatible server over httpx (NVIDIA's API, vLLM, llama.cpp, Ollama)",
        ),
        "litellm": Adapter(
            "litellm",
            LiteLLMProvider,
            "litellm (optional extra), routes openai/, hosted_vllm/ and nvidia_nim/",
        ),
    }
)

if set(ADAPTERS) != set(get_args(AdapterName)):  # pragma: no cover (a wiring mistake)
    raise RuntimeError("ADAPTERS and base.AdapterName must name the same adapters")


def adapter_names() -> tuple[str, ...]:
    """The accepted ``ProviderConfig.adapter`` values, in table order."""
    return tuple(ADAPTERS)


def build_provider(config: ProviderConfig) -> Provider:
    """Build the adapter a configuration names. ``NotConfigured`` when it cannot work
    (a named key is unset, litellm is not installed, a litellm route is not supported)."""
    return ADAPTERS[config.adapter].build(config)
