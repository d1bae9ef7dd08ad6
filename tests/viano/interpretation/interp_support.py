"""Shared helpers for the interpretation tests: supplied packages, built cases in a
store, scripted gateways and answers derived from a real context's catalogue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from modelgate.providers import ScriptedProvider, ScriptedReply
from viano_bug_analysis.analysis.case_access import verify_built_case
from viano_bug_analysis.analysis.catalogue import Catalogue
from viano_bug_analysis.analysis.limits import InterpretationLimits
from viano_bug_analysis.analysis.prompt_builder import PreparedContext, PromptBuilder
from viano_bug_analysis.case import CaseBuilder, CaseBuilderLimits
from viano_bug_analysis.llm import GatewayConfig, LLMGateway
from viano_bug_analysis.packages import Manifest, PackageStore, PackageWriter

CASE_ID = "case-1"
PACKAGE_ID = "supplied"

BASIC_INTAKE: dict[str, Any] = {
    "intake_format": "viano-intake/1",
    "case_id": CASE_ID,
    "title": "Saving a draft loses the attachment",
    "summary": "After saving a draft with one attachment the attachment list is empty.",
    "reporter": "reporter-a",
    "created_at": "2024-03-01T10:00:00Z",
    "environment": {"app_version": "2.4.1", "os": "Debian 12"},
    "observations": ["The attachment list is empty after the draft is reopened."],
    "expected_behavior": "The attachment stays listed after the draft is saved and reopened.",
    "steps": ["Create a draft", "Attach report.pdf", "Save and reopen the draft"],
    "comments": [
        {
            "text": "Same here on 2.4.1 with a PNG file.",
            "author": "tester-b",
            "timestamp": "2024-03-02T09:00:00Z",
        },
    ],
    "tester_hypotheses": [
        {"text": "Maybe the upload finishes after the save.", "author": "tester-b"}
    ],
    "facts": [
        {"name": "upload_size_bytes", "value": "48213"},
        {
            "name": "server_log",
            "value_ref": {
                "kind": "log",
                "member": "original/server.log",
                "description": "server log of the save",
            },
        },
    ],
}

EXTRA_MEMBERS = {"original/server.log": b"2024-03-01 10:00:01 ERROR save failed\n" * 50}


def write_package(
    path: Path,
    intake: dict[str, Any],
    *,
    extra: dict[str, bytes] | None = None,
    unknown: dict[str, bytes] | None = None,
    package_id: str = PACKAGE_ID,
) -> Path:
    """A supplied package (generation 1) holding ``intake`` as native intake JSON."""
    manifest = Manifest(
        package_id=package_id,
        case_id=intake.get("case_id", CASE_ID),
        inputs=({"member": "original/intake.json", "format": "viano-intake"},),
    )
    writer = PackageWriter.new(manifest)
    writer.add_bytes("original/intake.json", json.dumps(intake, indent=1).encode("utf-8"))
    for name, data in sorted((extra if extra is not None else EXTRA_MEMBERS).items()):
        writer.add_bytes(name, data)
    for name, data in sorted((unknown or {}).items()):
        writer.add_bytes(name, data)
    with open(path, "wb") as out:
        writer.write(out)
    return path


def built_store(
    root: Path,
    intake: dict[str, Any] | None = None,
    *,
    extra: dict[str, bytes] | None = None,
    unknown: dict[str, bytes] | None = None,
    limits: CaseBuilderLimits | None = None,
) -> PackageStore:
    """A store with one supplied package, added and built (revision 1)."""
    intake = intake or BASIC_INTAKE
    store = PackageStore.init(root / "store")
    package = write_package(root / "supplied.zip", intake, extra=extra, unknown=unknown)
    store.add(package)
    CaseBuilder(store, limits).build(intake.get("case_id", CASE_ID), PACKAGE_ID)
    return store


def prepared_context(
    store: PackageStore, case_id: str = CASE_ID, limits: InterpretationLimits | None = None
) -> PreparedContext:
    limits = limits or InterpretationLimits()
    with store.current(case_id, PACKAGE_ID).open() as reader:
        case = verify_built_case(reader, case_id, PACKAGE_ID, limits, CaseBuilderLimits())
    return PromptBuilder(limits).prepare(case)


def first(catalogue: Catalogue, letters: str) -> list[str]:
    return [e["id"] for e in catalogue.entries if e["id"][0] in letters]


def answer_for(
    catalogue: Catalogue, summary: str = "A saved draft loses its attachment."
) -> dict[str, Any]:
    """A valid answer for this catalogue (every rule respected)."""
    observed = first(catalogue, "OB")[:2]
    expectations = first(catalogue, "E")[:1]
    testers = first(catalogue, "TC")[:2]
    facts = [i for i in first(catalogue, "F") if catalogue.is_local_inline_fact(i)][:1]
    entities = first(catalogue, "N")[:2]
    unknown_ids = ["Q0001"] if catalogue.completeness() != "complete" else first(catalogue, "D")[:1]
    gap = (
        {
            "text": "The draft differs from what was intended.",
            "source_ids": expectations + observed[:1],
        }
        if expectations
        else None
    )
    return {
        "observed_behavior": [{"text": "The attachment disappears.", "source_ids": observed}],
        "expected_behavior": (
            [{"text": "The attachment should stay.", "source_ids": expectations}]
            if expectations
            else []
        ),
        "tester_assumptions": (
            [{"text": "A tester suspects timing.", "source_ids": testers}] if testers else []
        ),
        "confirmed_technical_facts": (
            [{"text": "A size was reported.", "source_ids": facts}] if facts else []
        ),
        "behavior_gap": gap,
        "first_known_divergence": None,
        "failure_stage": {"text": "Saving a draft.", "source_ids": observed[:1]},
        "contradictions": [],
        "unknowns": (
            [{"text": "Some details are missing.", "source_ids": unknown_ids}]
            if unknown_ids
            else []
        ),
        "relevant_entities": [{"entity_id": n, "role": "mentioned"} for n in entities],
        "investigation_direction": [
            {"text": "How saving treats pending uploads.", "source_ids": observed[:1]}
        ],
        "interpretation_summary": {"text": summary, "source_ids": observed[:1]},
    }


def config(max_attempts: int = 3, backoff: tuple[float, ...] = (1.0, 4.0, 16.0)) -> GatewayConfig:
    return GatewayConfig.from_mapping(
        {
            "providers": [
                {
                    "name": "scripted",
                    "adapter": "openai",
                    "base_url": "http://127.0.0.1:9/v1",
                    "model": "scripted-model",
                    "timeout_s": 5,
                    "max_output_tokens": 4096,
                    "structured_output": "json_schema",
                }
            ],
            "retry": {"max_attempts": max_attempts, "backoff_s": list(backoff)},
        }
    )


def scripted_gateway(
    *replies: Any, gateway_config: GatewayConfig | None = None, **kwargs: Any
) -> tuple[LLMGateway, ScriptedProvider]:
    provider = ScriptedProvider(list(replies), name="scripted", model="scripted-model")
    return LLMGateway(gateway_config or config(), providers=[provider], **kwargs), provider


def reply(obj: Any, delay_s: float = 0.0) -> ScriptedReply:
    text = obj if isinstance(obj, str) else json.dumps(obj)
    return ScriptedReply(text=text, delay_s=delay_s)


def members(store: PackageStore, case_id: str = CASE_ID) -> dict[str, bytes]:
    with store.current(case_id, PACKAGE_ID).open() as reader:
        return {name: reader.read(name) for name in reader.names()}
