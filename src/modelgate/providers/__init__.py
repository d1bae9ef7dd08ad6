"""Providers: one async ``complete`` per upstream request.

``LiteLLMProvider`` is resolved lazily so that importing this package never imports
litellm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from modelgate.providers.base import Provider, ProviderConfig, build_provider
from modelgate.providers.openai_http import OpenAICompatibleProvider
from modelgate.providers.replay import ReplayProvider
from modelgate.providers.scripted import ScriptedProvider, ScriptedReply, ScriptExhausted

if TYPE_CHECKING:
    from modelgate.providers.litellm_provider import LiteLLMProvider as LiteLLMProvider

__all__ = [
    "LiteLLMProvider",
    "OpenAICompatibleProvider",
    "Provider",
    "ProviderConfig",
    "ReplayProvider",
    "ScriptExhausted",
    "ScriptedProvider",
    "ScriptedReply",
    "build_provider",
]


def __getattr__(name: str) -> Any:
    if name == "LiteLLMProvider":
        from modelgate.providers.litellm_provider import LiteLLMProvider

        return LiteLLMProvider
    raise AttributeError(name)
