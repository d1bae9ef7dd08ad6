"""Acceptance, rejection and re-verification of interpretation artifacts.

One place decides what is published for a finished round:

- accepted: ``case_interpretation.json`` (the wrapper: controller-supplied identities,
  revision, hashes, outcome reference and metadata around the model's sections, plus
  provenance and completeness copied from the context), ``case_interpretation.md``
  (its escaped rendering), a ``case-interpreted`` checkpoint and the three pointers;
- rejected: ``errors/<attempt-hash>.json`` with every violation (or the gateway's
  error) and a reference to the raw round record; no pointer, no summary, and the
  phase stays INTERPRETING_CASE.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from viano_bug_analysis.analysis.case_access import BuiltCase
from viano_bug_analysis.analysis.catalogue import COMPLETENESS_ID, Catalogue
from viano_bug_analysis.analysis.errors import InterpretationError
from viano_bug_analysis.analysis.limits import InterpretationLimits
from viano_bug_analysis.analysis.markdown import render_markdown
from viano_bug_analysis.analysis.prompt_builder import PreparedContext, load_context
from viano_bug_analysis.analysis.validation import (
    Violation,
    reference_violations,
    schema_violations,
)
from viano_bug_analysis.llm.rounds import AttemptKey, InterpretationLayout, load_json
from viano_bug_analysis.packages import (
    POINTER_CASE_INTERPRETATION,
    POINTER_CASE_INTERPRETATION_SUMMARY,
    POINTER_INTERPRETATION_CONTEXT,
    PackageReader,
    PackageWriter,
    canonical_json,
)

CHECKPOINT_INTERPRETING = "case-interpreting"
CHECKPOINT_INTERPRETED = "case-interpreted"
WRAPPER_FORMAT = "viano-case-interpretation-v1"
REJECTION_FORMAT = "viano-interpretation-rejection-v1"
OUTPUT_SCHEMA_NAME = "case-interpretation-output-v1"
INTERPRETATION_POINTERS = (
    POINTER_INTERPRETATION_CONTEXT,
    POINTER_CASE_INTERPRETATION,
    POINTER_CASE_INTERPRETATION_SUMMARY,
)
OPERATIONAL_LIMIT_RULES = frozenset({"output_too_large", "markdown_too_large"})
SOURCE_FIELDS = ("kind", "pointer", "origin", "inline", "unread", "author", "timestamp")


@dataclass(frozen=True, slots=True)
class Verdict:
    accepted: bool
    pointers: dict[str, str] = field(default_factory=dict)
    violations: list[dict[str, str]] = field(default_factory=list)
    rejection_ref: str | None = None


def find_checkpoint(
    reader: PackageReader, name: str, revision: int, layout: InterpretationLayout
) -> dict[str, Any] | None:
    """The payload of checkpoint ``name`` of this revision and interpretation, if any."""
    path = (
        layout.interpreting_checkpoint
        if name == CHECKPOINT_INTERPRETING
        else layout.interpreted_checkpoint
    )
    manifest = reader.require_manifest()
    for checkpoint in reversed(manifest.checkpoints):
        if checkpoint.name == name and checkpoint.path == path:
            if checkpoint.analysis_revision != revision:
                return None
            try:
                payload = load_json(reader.read(path))
            except (ValueError, KeyError) as exc:
                raise InterpretationError(
                    f"checkpoint {path} is unreadable: {exc}",
                    code="interpretation.checkpoint_invalid",
                ) from None
            if payload.get("analysis_revision") != revision:
                raise InterpretationError(
                    f"checkpoint {path} names another analysis revision",
                    code="interpretation.checkpoint_invalid",
                )
            return payload
    return None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_wrapper(
    case: BuiltCase,
    layout: InterpretationLayout,
    prepared: PreparedContext,
    key: AttemptKey,
    record: dict[str, Any],
    round_ref: str,
) -> dict[str, Any]:
    """The persisted wrapper. Everything but ``interpretation`` comes from the controller
    or the case; the model's answer cannot overwrite any of it."""
    outcome = record["outcome"]
    output = outcome["output"]
    catalogue = prepared.catalogue
    cited = sorted(
        {s for section in _statement_sources(output) for s in section}
        | {item["entity_id"] for item in output["relevant_entities"]}
    )
    sources = {}
    for source_id in cited:
        entry = catalogue.get(source_id)
        if entry is not None:
            sources[source_id] = {k: entry.get(k) for k in SOURCE_FIELDS}
    return {
        "format": WRAPPER_FORMAT,
        "case_id": case.case_id,
        "package_id": case.package_id,
        "analysis_revision": case.analysis_revision,
        "interpretation_index": layout.index,
        "attempt_id": key.attempt_id,
        "attempt_hash": key.attempt_hash,
        "case_sha256": case.case_sha256,
        "context_sha256": prepared.context_sha256,
        "context_ref": layout.context,
        "llm_outcome_ref": round_ref,
        "request_fingerprint": record["request_fingerprint"],
        "configuration_fingerprint": record["configuration_fingerprint"],
        "provider": outcome.get("provider"),
        "model": outcome.get("model"),
        "prompt_version": record.get("prompt_version"),
        "output_schema": OUTPUT_SCHEMA_NAME,
        "expected_behavior_status": prepared.expected_behavior_status(),
        "sources": sources,
        "interpretation": output,
    }


def _statement_sources(output: dict[str, Any]) -> list[list[str]]:
    out: list[list[str]] = []
    for value in output.values():
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, dict) and "source_ids" in item:
                out.append(list(item["source_ids"]))
    return out


def accept_or_reject(
    reader: PackageReader,
    case: BuiltCase,
    layout: InterpretationLayout,
    prepared: PreparedContext,
    key: AttemptKey,
    record: dict[str, Any],
    round_ref: str,
    limits: InterpretationLimits,
) -> tuple[PackageWriter | None, Verdict]:
    """The writer of the publication generation (``None`` when the package already
    holds it: a replay after a crash) and the verdict.

    An existing rejection report is returned as is, except when every violation it lists
    is an operational limit (``output_too_large``, ``markdown_too_large``): then the
    confirmed round is validated again under the current ``limits``, and published if
    it now passes (no new request; the report stays for audit; docs/decisions/0046)."""
    report_ref = layout.error_report(key.attempt_hash)
    if report_ref in reader:
        report = load_json(reader.read(report_ref))
        existing = Verdict(False, violations=report.get("violations", []), rejection_ref=report_ref)
        codes = {v.get("rule") for v in existing.violations}
        if not codes or not codes <= OPERATIONAL_LIMIT_RULES:
            return None, existing
        writer, verdict = _validate(reader, case, layout, prepared, key, record, round_ref, limits)
        return (writer, verdict) if verdict.accepted else (None, existing)
    return _validate(reader, case, layout, prepared, key, record, round_ref, limits)


def _validate(
    reader: PackageReader,
    case: BuiltCase,
    layout: InterpretationLayout,
    prepared: PreparedContext,
    key: AttemptKey,
    record: dict[str, Any],
    round_ref: str,
    limits: InterpretationLimits,
) -> tuple[PackageWriter | None, Verdict]:
    report_ref = layout.error_report(key.attempt_hash)
    outcome = record["outcome"]
    violations: list[Violation] = []
    if outcome["status"] == "COMPLETED":
        output = outcome["output"]
        violations = schema_violations(output) or reference_violations(output, prepared.catalogue)
        if not violations:
            wrapper = build_wrapper(case, layout, prepared, key, record, round_ref)
            accepted = canonical_json(wrapper)
            markdown = render_markdown(wrapper).encode("utf-8")
            if len(accepted) > limits.max_output_bytes:
                violations.append(
                    Violation("output_too_large", "", f"accepted output is {len(accepted)} bytes")
                )
            if len(markdown) > limits.max_markdown_bytes:
                violations.append(
                    Violation("markdown_too_large", "", f"Markdown is {len(markdown)} bytes")
                )
            if not violations:
                return _accept(reader, case, layout, prepared, wrapper, accepted, markdown)
    else:
        raw = outcome.get("raw_text")
        if raw:
            try:
                violations = schema_violations(json.loads(raw))
            except ValueError:
                violations = [Violation("not_json", "", "the answer is not JSON")]
    if report_ref in reader:  # rejected again: the first report stands
        return None, Verdict(False, violations=[v.to_json() for v in violations])
    writer = PackageWriter(reader)
    report = {
        "format": REJECTION_FORMAT,
        "case_id": case.case_id,
        "package_id": case.package_id,
        "analysis_revision": case.analysis_revision,
        "interpretation_index": layout.index,
        "attempt_id": key.attempt_id,
        "attempt_hash": key.attempt_hash,
        "case_sha256": case.case_sha256,
        "context_sha256": prepared.context_sha256,
        "llm_outcome_ref": round_ref,
        "gateway_status": outcome["status"],
        "gateway_error": outcome.get("error"),
        "reason": "response_invalid" if violations else "gateway_error",
        "violations": [v.to_json() for v in violations],
        "phase": reader.require_manifest().phase,
    }
    writer.add_json(report_ref, report)
    return writer, Verdict(False, violations=report["violations"], rejection_ref=report_ref)


def _accept(
    reader: PackageReader,
    case: BuiltCase,
    layout: InterpretationLayout,
    prepared: PreparedContext,
    wrapper: dict[str, Any],
    accepted: bytes,
    markdown: bytes,
) -> tuple[PackageWriter, Verdict]:
    writer = PackageWriter(reader)
    writer.add_bytes(layout.accepted, accepted)
    writer.add_bytes(layout.summary, markdown)
    pointers = {
        POINTER_INTERPRETATION_CONTEXT: layout.context,
        POINTER_CASE_INTERPRETATION: layout.accepted,
        POINTER_CASE_INTERPRETATION_SUMMARY: layout.summary,
    }
    for name, member in pointers.items():
        writer.set_pointer(name, member)
    writer.add_checkpoint(
        CHECKPOINT_INTERPRETED,
        layout.interpreted_checkpoint,
        {
            "interpretation_index": layout.index,
            "attempt_id": wrapper["attempt_id"],
            "attempt_hash": wrapper["attempt_hash"],
            "case_sha256": case.case_sha256,
            "context_sha256": prepared.context_sha256,
            "case_interpretation": layout.accepted,
            "case_interpretation_sha256": _sha(accepted),
            "case_interpretation_summary": layout.summary,
            "case_interpretation_summary_sha256": _sha(markdown),
            "llm_outcome_ref": wrapper["llm_outcome_ref"],
        },
    )
    return writer, Verdict(True, pointers=pointers)


def verify_published(
    reader: PackageReader,
    case: BuiltCase,
    layout: InterpretationLayout,
    limits: InterpretationLimits,
) -> dict[str, Any]:
    """Re-check a completed interpretation before reusing it: pointers, hashes, the
    answer against the preserved context, and the Markdown rendering. Returns the wrapper."""

    def fail(why: str) -> InterpretationError:
        return InterpretationError(
            f"published interpretation {layout.base} does not verify: {why}",
            code="interpretation.published_invalid",
        )

    checkpoint = find_checkpoint(reader, CHECKPOINT_INTERPRETED, case.analysis_revision, layout)
    if checkpoint is None:
        raise fail("no case-interpreted checkpoint")
    pointers = reader.require_manifest().pointers
    expected = {
        POINTER_INTERPRETATION_CONTEXT: layout.context,
        POINTER_CASE_INTERPRETATION: layout.accepted,
        POINTER_CASE_INTERPRETATION_SUMMARY: layout.summary,
    }
    for name, member in expected.items():
        if pointers.get(name) != member:
            raise fail(f"pointer {name} is {pointers.get(name)!r}")
    accepted = reader.read(layout.accepted, max_bytes=limits.max_output_bytes)
    markdown = reader.read(layout.summary, max_bytes=limits.max_markdown_bytes)
    if _sha(accepted) != checkpoint.get("case_interpretation_sha256"):
        raise fail("case_interpretation.json differs from its checkpoint")
    if _sha(markdown) != checkpoint.get("case_interpretation_summary_sha256"):
        raise fail("case_interpretation.md differs from its checkpoint")
    wrapper = load_json(accepted)
    if wrapper.get("case_sha256") != case.case_sha256:
        raise fail("it is bound to another canonical case")
    interpreting = find_checkpoint(reader, CHECKPOINT_INTERPRETING, case.analysis_revision, layout)
    if interpreting is None:
        raise fail("no case-interpreting checkpoint")
    prepared = load_context(reader, layout, case, interpreting)
    if wrapper.get("context_sha256") != prepared.context_sha256:
        raise fail("it is bound to another context")
    problems = schema_violations(wrapper.get("interpretation")) or reference_violations(
        wrapper["interpretation"], prepared.catalogue
    )
    if problems:
        raise fail(f"{problems[0].rule} at {problems[0].at}")
    if wrapper.get("expected_behavior_status") != prepared.expected_behavior_status():
        raise fail("its completeness/provenance differs from the case")
    if render_markdown(wrapper).encode("utf-8") != markdown:
        raise fail("the Markdown is not the rendering of the JSON")
    return wrapper


def completeness_entry(catalogue: Catalogue) -> dict[str, Any]:
    entry = catalogue.get(COMPLETENESS_ID)
    return dict(entry.get("data", {})) if entry else {}
