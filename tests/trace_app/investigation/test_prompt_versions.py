"""Two prompt versions ship: v5 (short contrasting examples for small models) and v4,
both asking the same typed questions; TRACE_PROMPT_VERSION picks one."""

from __future__ import annotations

import pytest

from modelgate.local_server import find_embedded_model, missing_runtime_modules
from trace_app.investigation.answers import SupportResult, attribution_result_type
from trace_app.investigation.content_fingerprint import content_fingerprint
from trace_app.investigation.evidence import ReportEvidence
from trace_app.investigation.menu import Menu
from trace_app.investigation.model_settings import (
    PROMPT_VERSION,
    PROMPT_VERSIONS,
    ModelSettings,
    ModelSettingsError,
)
from trace_app.investigation.requests import (
    attribution_request,
    prompt_files,
    prompt_parts,
    support_request,
)

MAX_INSTRUCTION_TOKENS = 300
REPORT = ReportEvidence("rep_a", "Field Team Test", "We reached the mill.", "2026-01-01", ())
OTHER = ReportEvidence("rep_b", "Clinic Test", "Admitted, stable.", "2026-01-01", ())


def test_the_version_comes_from_the_environment_and_defaults_to_the_chosen_one() -> None:
    assert ModelSettings.from_env({}).prompt_version == PROMPT_VERSION in PROMPT_VERSIONS
    for version in PROMPT_VERSIONS:
        chosen = ModelSettings.from_env({"TRACE_PROMPT_VERSION": version})
        assert chosen.prompt_version == version
    with pytest.raises(ModelSettingsError, match="TRACE_PROMPT_VERSION"):
        ModelSettings.from_env({"TRACE_PROMPT_VERSION": "report-lineage-v3"})
    with pytest.raises(ValueError, match="unknown prompt version"):
        prompt_files("report-lineage-v3")


@pytest.mark.parametrize("version", PROMPT_VERSIONS)
def test_both_versions_ask_the_same_typed_questions(version: str) -> None:
    menu = Menu(("Clinic Test",))
    output = attribution_result_type(menu.names)
    default = attribution_request(REPORT, menu, output)
    ours = attribution_request(REPORT, menu, output, version)
    assert ours.prompt_version == version
    assert (ours.output_name, ours.output_schema) == (default.output_name, default.output_schema)
    assert ours.messages[1] == default.messages[1]  # the same user message, the report as data
    support = support_request(REPORT, OTHER, version)
    assert support.output_schema == support_request(REPORT, OTHER).output_schema
    assert support.output_name == "SupportResult" and SupportResult.__name__ == "SupportResult"


def test_the_versions_differ_in_instructions_and_in_the_fingerprint() -> None:
    v4, v5 = PROMPT_VERSIONS
    assert prompt_parts(prompt_files(v4)[0])[0] != prompt_parts(prompt_files(v5)[0])[0]
    prints = {
        content_fingerprint(REPORT, Menu(()), (), model="m", prompt_version=v) for v in (v4, v5)
    }
    assert len(prints) == 2  # a run saved under one version is never reused by the other


@pytest.mark.skipif(bool(missing_runtime_modules()), reason="llama-cpp-python not installed")
@pytest.mark.parametrize("version", PROMPT_VERSIONS)
def test_the_instructions_stay_within_300_tokens_of_the_embedded_model(version: str) -> None:
    from llama_cpp import Llama

    vocabulary = Llama(model_path=str(find_embedded_model()), vocab_only=True, verbose=False)
    for filename in prompt_files(version):
        instructions = prompt_parts(filename)[0]
        tokens = vocabulary.tokenize(instructions.encode("utf-8"), add_bos=False)
        assert len(tokens) <= MAX_INSTRUCTION_TOKENS, (filename, len(tokens))
