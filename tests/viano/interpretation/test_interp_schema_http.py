"""The schema each request carries upstream, seen by a real HTTP server on 127.0.0.1:
derived from the case's catalogue, in both structured-output modes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from interp_support import (
    BASIC_INTAKE,
    CASE_ID,
    PACKAGE_ID,
    answer_for,
    built_store,
    prepared_context,
)
from jsonschema import Draft202012Validator

from modelgate.testing import StubChatServer, StubResponse
from viano_bug_analysis.analysis import CaseInterpreter, OutcomeStatus
from viano_bug_analysis.analysis.catalogue import Catalogue
from viano_bug_analysis.analysis.request_schema import answer_bounds
from viano_bug_analysis.analysis.schema_file import output_schema
from viano_bug_analysis.llm import GatewayConfig

MODES = ["json_schema", "json_object_schema"]
MAX_OUTPUT_TOKENS = 2048


def _config(base_url: str, mode: str) -> GatewayConfig:
    return GatewayConfig.from_mapping(
        {
            "providers": [
                {
                    "name": "stub",
                    "adapter": "openai",
                    "base_url": base_url,
                    "model": "stub-model",
                    "timeout_s": 10,
                    "max_output_tokens": MAX_OUTPUT_TOKENS,
                    "structured_output": mode,
                }
            ],
            "retry": {"max_attempts": 1, "backoff_s": [0]},
        }
    )


def _sent_schema(body: dict[str, Any], mode: str) -> dict[str, Any]:
    fmt = body["response_format"]
    if mode == "json_schema":
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        return fmt["json_schema"]["schema"]  # type: ignore[no-any-return]
    assert fmt["type"] == "json_object"
    return fmt["schema"]  # type: ignore[no-any-return]


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def _ids_in(schema: dict[str, Any], node: Any) -> set[str]:
    """Every id an enum reachable from ``node`` allows (through $refs)."""
    if isinstance(node, list):
        return set().union(*(_ids_in(schema, n) for n in node)) if node else set()
    if not isinstance(node, dict):
        return set()
    if "$ref" in node:
        return _ids_in(schema, _resolve(schema, node))
    found = set(node.get("enum", []))
    for key, value in node.items():
        if key not in ("enum", "text", "role"):
            found |= _ids_in(schema, value)
    return found


def _section(schema: dict[str, Any], name: str) -> dict[str, Any]:
    return _resolve(schema, schema["properties"][name])


def _citable(schema: dict[str, Any], name: str) -> set[str]:
    node = _section(schema, name)
    if node.get("maxItems") == 0 or node.get("type") == "null":
        return set()
    return _ids_in(schema, node)


async def _exchange(tmp_path: Path, intake: dict[str, Any], mode: str) -> tuple[Any, Catalogue]:
    store = built_store(tmp_path, intake)
    catalogue = prepared_context(store).catalogue
    good = answer_for(catalogue)
    with StubChatServer([StubResponse.answer(json.dumps(good))]) as server:
        from viano_bug_analysis.llm import LLMGateway

        gateway = LLMGateway(_config(server.base_url, mode))
        try:
            result = await CaseInterpreter(store, gateway).interpret(CASE_ID, PACKAGE_ID)
        finally:
            await gateway.aclose()
        assert server.count == 1
        body = server.requests[0].json()
    assert result.status is OutcomeStatus.COMPLETED, result.violations
    schema = _sent_schema(body, mode)
    Draft202012Validator.check_schema(schema)
    # the published answer is an instance of the schema that was sent, and of the file
    assert Draft202012Validator(schema).is_valid(good)
    assert Draft202012Validator(output_schema()).is_valid(good)
    return schema, catalogue


def _kind(catalogue: Catalogue, letters: str) -> set[str]:
    return {str(e["id"]) for e in catalogue.entries if str(e["id"])[0] in letters}


def _check_common(schema: dict[str, Any], catalogue: Catalogue, mode: str) -> None:
    everything = {str(e["id"]) for e in catalogue.entries}
    for name in ("observed_behavior", "failure_stage", "investigation_direction"):
        assert _citable(schema, name) == everything, name
    assert _citable(schema, "interpretation_summary") == everything
    assert _citable(schema, "tester_assumptions") == _kind(catalogue, "TC")
    facts = {i for i in _kind(catalogue, "F") if catalogue.is_local_inline_fact(i)}
    assert _citable(schema, "confirmed_technical_facts") == facts
    unread = {i for i in everything if catalogue.is_unread(i)}
    if mode == "json_object_schema":
        # llama.cpp's grammar ignores uniqueItems: contradictions are left out (ADR 0103)
        assert unread and _section(schema, "contradictions")["maxItems"] == 0
    else:
        assert unread and _citable(schema, "contradictions") == everything - unread
    entities = _section(schema, "relevant_entities")
    assert _ids_in(schema, entities) == _kind(catalogue, "N")
    bounds = answer_bounds(MAX_OUTPUT_TOKENS)
    assert entities["maxItems"] == min(bounds.items, len(_kind(catalogue, "N")))
    # bounded so that the largest answer fits the provider's output limit
    for name in ("observed_behavior", "tester_assumptions", "investigation_direction"):
        node = _section(schema, name)
        if node.get("maxItems") != 0:
            assert node["maxItems"] == bounds.items
            statement = _resolve(schema, node["items"])
            assert statement["properties"]["text"]["maxLength"] == bounds.chars
            assert statement["properties"]["source_ids"]["maxItems"] <= bounds.ids


@pytest.mark.parametrize("mode", MODES)
async def test_case_with_expectations_sends_its_own_ids(tmp_path: Path, mode: str) -> None:
    schema, catalogue = await _exchange(tmp_path, BASIC_INTAKE, mode)
    _check_common(schema, catalogue, mode)
    assert _citable(schema, "expected_behavior") == {"E0001"}
    gap = _section(schema, "behavior_gap")["anyOf"]
    assert gap[1] == {"type": "null"}
    forms = _resolve(schema, gap[0])["properties"]["source_ids"]["anyOf"]
    first, second = forms[0]["prefixItems"]
    assert _ids_in(schema, first) == {"E0001"}
    assert _ids_in(schema, second) == _kind(catalogue, "OBC")
    # complete intended behaviour: unknowns are a plain, optional list
    assert "minItems" not in _section(schema, "unknowns")


@pytest.mark.parametrize("mode", MODES)
async def test_case_without_expectations_closes_intended_behaviour(
    tmp_path: Path, mode: str
) -> None:
    intake = copy.deepcopy(BASIC_INTAKE)
    del intake["expected_behavior"]
    schema, catalogue = await _exchange(tmp_path, intake, mode)
    _check_common(schema, catalogue, mode)
    assert not _kind(catalogue, "E")
    assert _section(schema, "expected_behavior")["maxItems"] == 0
    assert _section(schema, "behavior_gap") == {"type": "null"}
    assert _section(schema, "first_known_divergence") == {"type": "null"}
    forms = _section(schema, "unknowns")["anyOf"]
    first = _resolve(schema, forms[0]["prefixItems"][0])["properties"]["source_ids"]
    assert _ids_in(schema, _resolve(schema, first["anyOf"][0])["prefixItems"][0]) == {"Q0001"}


@pytest.mark.parametrize("mode", MODES)
async def test_case_with_several_entities_lists_each_alias(tmp_path: Path, mode: str) -> None:
    intake = copy.deepcopy(BASIC_INTAKE)
    intake["comments"].append(
        {
            "text": "Also broken with Firefox 128.0 and Chrome 126.0.1, see src/upload.js "
            "and the POST /api/drafts call.",
            "author": "tester-c",
        }
    )
    schema, catalogue = await _exchange(tmp_path, intake, mode)
    _check_common(schema, catalogue, mode)
    assert len(_kind(catalogue, "N")) >= 3
