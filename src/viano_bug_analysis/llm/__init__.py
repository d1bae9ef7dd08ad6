"""Viano LLM gateway v1 (see docs/llm-gateway-v1.md)."""
