"""Viano LLM gateway v1 (see docs/llm-gateway-v1.md).

from viano_bug_analysis.llm import GatewayConfig, LLMGateway
gateway = LLMGateway(GatewayConfig.load("config/llm.local.toml"))
"""

from viano_bug_analysis.llm.config import (
    GatewayConfig,
    GatewayConfigError,
    GatewayLimits,
    RetrySettings,
)
from viano_bug_analysis.llm.gateway import GatewayOutcome, LLMGateway, OutcomeStatus

__all__ = [
    "GatewayConfig",
    "GatewayConfigError",
    "GatewayLimits",
    "GatewayOutcome",
    "LLMGateway",
    "OutcomeStatus",
    "RetrySettings",
]
