"""Providers: one async ``complete`` per upstream request.

``Provider`` (``base``) is the interface; ``registry.ADAPTERS`` the configurable
adapters and ``build_provider`` what builds one; ``ScriptedProvider`` and
``ReplayProvider`` answer from a queue or a recording. Importing this package never
imports litellm: ``LiteLLMProvider`` imports it when it is built.
"""

from __future__ import annotations

from modelgate.providers.base import AdapterName, Provider, ProviderConfig
from modelgate.providers.litellm_provider import LiteLLMProvider
from modelgate.providers.openai_http import OpenAICompatibleProvider
from modelgate.providers.registry import ADAPTERS, Adapter, adapter_names, build_provider
from modelgate.providers.replay import ReplayProvider
from modelgate.providers.scripted import ScriptedProvider, ScriptedReply, ScriptExhausted

__all__ = [
    "ADAPTERS",
    "Adapter",
    "AdapterName",
    "LiteLLMProvider",
    "OpenAICompatibleProvider",
    "Provider",
    "ProviderConfig",
    "ReplayProvider",
    "ScriptExhausted",
    "ScriptedProvider",
    "ScriptedReply",
    "adapter_names",
    "build_provider",
]
