"""The bundled OpenAI-compatible adapter against a real HTTP server on 127.0.0.1,
carrying the domain schema and prompt."""

from __future__ import annotations

import json
from pathlib import Path

from interp_support import CASE_ID, PACKAGE_ID, answer_for, built_store, prepared_context

from modelgate.testing import StubChatServer, StubResponse
from viano_bug_analysis.analysis import CaseInterpreter, OutcomeStatus
from viano_bug_analysis.analysis.prompt_builder import system_prompt
from viano_bug_analysis.analysis.schema_file import output_schema
from viano_bug_analysis.llm import GatewayConfig, LLMGateway


def _config(tmp_path: Path, base_url: str, mode: str = "json_schema") -> GatewayConfig:
    path = tmp_path / "llm.toml"
    path.write_text(
        f"""
[[providers]]
name = "stub"
adapter = "openai"
base_url = "{base_url}"
model = "stub-model"
api_key_env = ""
timeout_s = 10
max_output_tokens = 2048
structured_output = "{mode}"

[retry]
max_attempts = 2
backoff_s = [0]
""",
        encoding="utf-8",
    )
    return GatewayConfig.load(path)


async def test_openai_adapter_sends_schema_and_prompt_and_completes(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    good = answer_for(prepared_context(store).catalogue)
    with StubChatServer([StubResponse.answer(json.dumps(good))]) as server:
        gateway = LLMGateway(_config(tmp_path, server.base_url))
        try:
            result = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
        finally:
            await gateway.aclose()
        assert server.count == 1
        seen = server.requests[0]
    assert result.status is OutcomeStatus.COMPLETED
    assert seen.path.endswith("/chat/completions")
    assert "authorization" not in {k.lower() for k in seen.headers}
    body = seen.json()
    assert body["model"] == "stub-model" and body["max_tokens"] <= 2048
    assert body["messages"][0] == {"role": "system", "content": system_prompt().text}
    assert "untrusted data" in body["messages"][1]["content"]
    sent_schema = body["response_format"]["json_schema"]["schema"]
    assert sorted(sent_schema["required"]) == sorted(output_schema()["required"])
    assert sent_schema["additionalProperties"] is False


async def test_http_500_is_retry_pending_after_exactly_one_request(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    with StubChatServer([StubResponse(status=500, body='{"error": "x"}')]) as server:
        gateway = LLMGateway(_config(tmp_path, server.base_url))
        try:
            result = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
        finally:
            await gateway.aclose()
        assert server.count == 1
    assert result.status is OutcomeStatus.RETRY_PENDING
    assert result.error is not None


async def test_llama_cpp_mode_sends_json_object_with_schema(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    good = answer_for(prepared_context(store).catalogue)
    with StubChatServer([StubResponse.answer(json.dumps(good))]) as server:
        gateway = LLMGateway(_config(tmp_path, server.base_url, "json_object_schema"))
        try:
            result = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
        finally:
            await gateway.aclose()
        body = server.requests[0].json()
    assert result.status is OutcomeStatus.COMPLETED
    assert body["response_format"]["type"] == "json_object"
    assert "observed_behavior" in json.dumps(body["response_format"]["schema"])
