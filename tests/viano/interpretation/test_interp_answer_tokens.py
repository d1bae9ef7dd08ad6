"""Each section bounded for the embedded model (issue 39, item 4; ADR 0105).

A provider's ``answer_tokens`` bounds the request schema's answer (statements per list,
ids per statement, characters per text) below ``max_output_tokens``, which stays the
request's limit. The embedded model says 1,024; a capable model without the key keeps
the schema bounded by its own output limit, and the validator is the same for both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from interp_catalogue import answer, catalogue, statement
from interp_support import (
    BASIC_INTAKE,
    CASE_ID,
    PACKAGE_ID,
    answer_for,
    built_store,
    prepared_context,
    reply,
)
from jsonschema import Draft202012Validator

from modelgate.providers import ScriptedProvider
from viano_bug_analysis.analysis import CaseInterpreter
from viano_bug_analysis.analysis.prompt_builder import PromptBuilder
from viano_bug_analysis.analysis.request_schema import answer_bounds
from viano_bug_analysis.analysis.validation import validate_output
from viano_bug_analysis.llm import GatewayConfig, LLMGateway
from viano_bug_analysis.llm.config import GatewayConfigError


def _config(**provider: Any) -> GatewayConfig:
    return GatewayConfig.from_mapping(
        {
            "providers": [
                {
                    "name": "p",
                    "base_url": "http://127.0.0.1:9/v1",
                    "model": "m",
                    "max_output_tokens": 2048,
                    "structured_output": "json_object_schema",
                    "context_window_tokens": 8192,
                    **provider,
                }
            ],
            "retry": {"max_attempts": 1},
        }
    )


def _lists(schema: dict[str, Any]) -> dict[str, int]:
    """maxItems of every statement list of a derived schema."""
    return {
        name: node["maxItems"]
        for name, node in schema["properties"].items()
        if isinstance(node, dict) and "maxItems" in node
    }


def test_the_embedded_model_is_bounded_to_a_smaller_answer() -> None:
    gateway = LLMGateway(GatewayConfig.embedded())
    assert gateway.max_output_tokens == 2048
    assert gateway.answer_tokens == 1024
    bounds = answer_bounds(gateway.answer_tokens)
    assert (bounds.items, bounds.ids, bounds.chars) == (1, 2, 60)
    # its largest answer, counted as the context budget counts, is far inside the limit
    assert bounds.worst_chars() / 2.5 <= gateway.answer_tokens < gateway.max_output_tokens


def test_without_the_key_the_output_limit_bounds_the_answer() -> None:
    assert LLMGateway(_config()).answer_tokens == 2048
    assert LLMGateway(_config(max_output_tokens=8192)).answer_tokens == 8192
    # failover: the smallest answer of any provider that may answer
    two = GatewayConfig.from_mapping(
        {
            "providers": [
                {"name": "a", "model": "m", "max_output_tokens": 8192},
                {"name": "b", "model": "m", "max_output_tokens": 4096, "answer_tokens": 512},
            ]
        }
    )
    assert LLMGateway(two).answer_tokens == 512


def test_an_answer_size_above_the_output_limit_is_refused() -> None:
    with pytest.raises(GatewayConfigError, match="answer_tokens"):
        _config(answer_tokens=4096)
    with pytest.raises(GatewayConfigError, match="answer_tokens"):
        _config(answer_tokens=10)


def test_the_fingerprint_of_a_configuration_without_the_key_is_unchanged() -> None:
    # the value computed by the code before answer_tokens existed (same mapping)
    before = "llm_config-v1:sha256:c6e5e932450364c8f4d2c0e93196616c4ced4766c666b79e3d30c1b720202175"
    assert _config().fingerprint() == before
    assert _config(answer_tokens=1024).fingerprint() != before


def test_the_request_keeps_its_limit_and_bounds_each_section(tmp_path: Path) -> None:
    prepared = prepared_context(built_store(tmp_path))
    full = PromptBuilder().request(prepared, 2048)
    bounded = PromptBuilder().request(prepared, 2048, answer_tokens=1024)
    assert full.max_output_tokens == bounded.max_output_tokens == 2048
    assert full.output_schema is not None and bounded.output_schema is not None
    wide, narrow = _lists(full.output_schema), _lists(bounded.output_schema)
    assert wide.keys() == narrow.keys()
    assert all(narrow[k] <= 1 for k in narrow) and max(wide.values()) == 2
    texts = [
        d["properties"]["text"]["maxLength"]
        for d in bounded.output_schema["$defs"].values()
        if "text" in d.get("properties", {})
    ]
    assert texts and set(texts) == {60}
    # an answer of two statements in one list is outside the bounded space only
    ids = [str(e["id"]) for e in prepared.catalogue.entries if str(e["id"])[0] in "OB"]
    two = answer_for(prepared.catalogue)
    two["observed_behavior"] = [statement("x", ids[0]), statement("y", ids[0])]
    two["interpretation_summary"] = statement("s", ids[0])
    assert not Draft202012Validator(bounded.output_schema).is_valid(two)
    # never a larger answer than the request without the key
    assert answer_bounds(1024).worst_chars() < answer_bounds(2048).worst_chars()


def test_validation_is_the_same_under_either_bound() -> None:
    cat = catalogue()
    # an answer larger than the embedded model's bounds is still valid: the validator
    # checks the published schema and the rules, never the request's bounds
    long = answer(interpretation_summary=statement("s" * 500, "O0001", "E0001"))
    assert validate_output(answer(), cat) == []
    assert validate_output(long, cat) == []


async def test_the_interpreter_sends_the_bounded_schema(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    catalogue_now = prepared_context(store).catalogue
    provider = ScriptedProvider(
        [reply(answer_for(catalogue_now, summary="Saved drafts lose files."))],
        name="scripted",
        model="scripted-model",
    )
    gateway = LLMGateway(_config(answer_tokens=1024), providers=[provider])
    await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
    (sent,) = provider.requests
    assert sent.max_output_tokens == 2048
    assert sent.output_schema is not None
    assert set(_lists(sent.output_schema).values()) <= {0, 1}


def test_every_case_shares_the_prompt_prefix(tmp_path: Path) -> None:
    """llama.cpp's server reuses the longest token prefix of the previous request: the
    system prompt comes first and is the same bytes for every case, so a case after
    another evaluates only its own context (ADR 0105)."""
    first = prepared_context(built_store(tmp_path / "a"))
    other = dict(BASIC_INTAKE, title="Printing a draft drops its last page", case_id="case-2")
    second = prepared_context(built_store(tmp_path / "b", other), case_id="case-2")
    a = PromptBuilder().request(first, 2048, answer_tokens=1024)
    b = PromptBuilder().request(second, 2048, answer_tokens=1024)
    assert [m.role for m in a.messages] == ["system", "user"]
    assert a.messages[0] == b.messages[0]
    assert a.messages[1] != b.messages[1]
