"""No answer rejected for a repeated citation (issue 39, item 5; ADR 0103).

llama.cpp's grammar ignores ``uniqueItems``, so a small model could cite one id twice in
a contradiction and lose its whole answer to ``contradiction_too_few``. For a provider
constrained that way the request schema leaves contradictions out; the validator's rule
is unchanged."""

from __future__ import annotations

from pathlib import Path

from interp_catalogue import answer, catalogue, statement
from interp_support import built_store, prepared_context
from jsonschema import Draft202012Validator

from viano_bug_analysis.analysis.prompt_builder import PromptBuilder
from viano_bug_analysis.analysis.validation import validate_output
from viano_bug_analysis.llm import GatewayConfig, LLMGateway


def _gateway(mode: str) -> LLMGateway:
    return LLMGateway(
        GatewayConfig.from_mapping(
            {
                "providers": [
                    {
                        "name": "p",
                        "base_url": "http://127.0.0.1:9/v1",
                        "model": "m",
                        "max_output_tokens": 2048,
                        "structured_output": mode,
                    }
                ]
            }
        )
    )


def test_the_embedded_model_is_stated_unable_to_keep_ids_distinct() -> None:
    assert GatewayConfig.embedded().providers[0].structured_output == "json_object_schema"
    assert LLMGateway(GatewayConfig.embedded()).grammar_keeps_ids_distinct is False
    assert _gateway("json_schema").grammar_keeps_ids_distinct is True
    assert _gateway("none").grammar_keeps_ids_distinct is True


def test_a_grammar_provider_gets_no_contradictions_in_its_schema(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    prepared = prepared_context(store)
    full = PromptBuilder().request(prepared, 2048).output_schema
    bounded = PromptBuilder().request(prepared, 2048, distinct_ids=False).output_schema
    assert full is not None and bounded is not None
    assert full["properties"]["contradictions"]["maxItems"] > 0
    assert bounded["properties"]["contradictions"]["maxItems"] == 0
    # every other section is the same
    for name in full["properties"]:
        if name != "contradictions":
            assert full["properties"][name] == bounded["properties"][name], name
    # a self-contradiction cannot be written in the bounded answer space
    ids = [str(e["id"]) for e in prepared.catalogue.entries if str(e["id"]).startswith("O")]
    self_contradiction = {"text": "x", "source_ids": [ids[0], ids[0]]}
    bounded_validator = Draft202012Validator(bounded)
    schema_errors = [
        e
        for e in bounded_validator.iter_errors({"contradictions": [self_contradiction]})
        if list(e.absolute_path)[:1] == ["contradictions"]
    ]
    assert schema_errors


def test_the_validator_rule_is_unchanged() -> None:
    out = answer(contradictions=[statement("Self contradiction.", "O0001", "O0001")])
    assert [v.rule for v in validate_output(out, catalogue())] == ["contradiction_too_few"]
