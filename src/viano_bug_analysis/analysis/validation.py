"""Validation of a model answer: the output schema, then every reference rule.

``validate_output(output, catalogue)`` returns the list of violations (empty: valid).
Each rule has a stable code; the rejection report lists every violation found, so an
auditor sees all of them at once. One place per rule: nothing else decides validity.

Rules (docs/case-interpretation.md explains each):

    schema                       the answer does not match case-interpretation-output-v1
    output_too_large             the answer is larger than InterpretationLimits allows
    unknown_source               a cited id is not in this context's catalogue
    entity_not_entity            a relevant entity is not an N entry of the catalogue
    entity_duplicate             an N entry is listed twice in relevant_entities
    expected_not_expectation     expected_behavior cites something other than E records
    assumption_not_tester        tester_assumptions cite something other than T/C records
    fact_not_local_inline        confirmed_technical_facts cite other than inline local F facts
    divergence_without_intended  a gap/divergence cites no E record
    divergence_without_observed  a gap/divergence cites no observation, report text or comment
    contradiction_too_few        a contradiction cites fewer than two distinct sources
    contradiction_unread         a contradiction cites an unread payload
    incompleteness_not_unknown   intended behaviour is not complete and no unknown cites Q0001
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

from viano_bug_analysis.analysis.catalogue import COMPLETE, COMPLETENESS_ID, Catalogue

SCHEMA_FILE = "case-interpretation-output-v1.schema.json"
STATEMENT_LISTS = (
    "observed_behavior",
    "expected_behavior",
    "tester_assumptions",
    "confirmed_technical_facts",
    "contradictions",
    "unknowns",
    "investigation_direction",
)
OPTIONAL_STATEMENTS = ("behavior_gap", "first_known_divergence", "failure_stage")
DIVERGENCE_SECTIONS = ("behavior_gap", "first_known_divergence")
OBSERVED_LETTERS = frozenset("OBC")


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: its code, where (a JSON pointer into the answer) and why."""

    rule: str
    at: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "at": self.at, "message": self.message}


def output_schema() -> dict[str, Any]:
    """The output schema file shipped with the package (a fresh copy on every call)."""
    return copy.deepcopy(_schema())


@functools.cache
def _schema() -> dict[str, Any]:
    text = resources.files("viano_bug_analysis.analysis").joinpath("schemas").joinpath(SCHEMA_FILE)
    schema: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return schema


@functools.cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(_schema())


def schema_violations(output: Any) -> list[Violation]:
    """Every schema error, in a stable order (empty: the answer matches the schema file).

    Fast path: when the pydantic mirror of the file (``output_model.InterpretationOutput``,
    tested to agree with it) accepts, the answer matches; a fresh answer was moreover
    checked against the file itself by the gateway. Otherwise jsonschema lists the file's
    violations (and if it finds none, the file wins)."""
    from pydantic import ValidationError

    from viano_bug_analysis.analysis.output_model import InterpretationOutput

    try:
        InterpretationOutput.model_validate(output, strict=True)
    except ValidationError:
        pass
    else:
        return []
    errors = sorted(
        _validator().iter_errors(output), key=lambda e: (list(e.absolute_path), e.message)
    )
    return [Violation("schema", _pointer(e.absolute_path), e.message[:500]) for e in errors]


def _pointer(path: Any) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else ""


def _statements(output: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for section in STATEMENT_LISTS:
        for index, statement in enumerate(output[section]):
            yield f"/{section}/{index}", statement
    for section in OPTIONAL_STATEMENTS:
        if output[section] is not None:
            yield f"/{section}", output[section]
    yield "/interpretation_summary", output["interpretation_summary"]


def reference_violations(output: Mapping[str, Any], catalogue: Catalogue) -> list[Violation]:
    """The reference rules. ``output`` must already match the schema."""
    found: list[Violation] = []
    for at, statement in _statements(output):
        for i, source_id in enumerate(statement["source_ids"]):
            if source_id not in catalogue:
                found.append(
                    Violation(
                        "unknown_source",
                        f"{at}/source_ids/{i}",
                        f"{source_id} is not in the catalogue",
                    )
                )
    found += _entity_rules(output, catalogue)
    found += _letter_rule(output, "expected_behavior", frozenset("E"), "expected_not_expectation")
    found += _letter_rule(output, "tester_assumptions", frozenset("TC"), "assumption_not_tester")
    found += _fact_rule(output, catalogue)
    found += _divergence_rules(output)
    found += _contradiction_rules(output, catalogue)
    found += _completeness_rule(output, catalogue)
    return found


def _entity_rules(output: Mapping[str, Any], catalogue: Catalogue) -> list[Violation]:
    found: list[Violation] = []
    seen: set[str] = set()
    for index, item in enumerate(output["relevant_entities"]):
        entity_id = item["entity_id"]
        at = f"/relevant_entities/{index}/entity_id"
        if entity_id[:1] != "N" or entity_id not in catalogue:
            found.append(
                Violation("entity_not_entity", at, f"{entity_id} is not an N entry of this context")
            )
        elif entity_id in seen:
            found.append(Violation("entity_duplicate", at, f"{entity_id} is listed more than once"))
        seen.add(entity_id)
    return found


def _letter_rule(
    output: Mapping[str, Any], section: str, letters: frozenset[str], rule: str
) -> list[Violation]:
    found: list[Violation] = []
    allowed = "/".join(sorted(letters))
    for index, statement in enumerate(output[section]):
        for i, source_id in enumerate(statement["source_ids"]):
            if source_id[:1] not in letters:
                found.append(
                    Violation(
                        rule,
                        f"/{section}/{index}/source_ids/{i}",
                        f"{section} may cite only {allowed} records, not {source_id}",
                    )
                )
    return found


def _fact_rule(output: Mapping[str, Any], catalogue: Catalogue) -> list[Violation]:
    found: list[Violation] = []
    for index, statement in enumerate(output["confirmed_technical_facts"]):
        for i, source_id in enumerate(statement["source_ids"]):
            if source_id in catalogue and not catalogue.is_local_inline_fact(source_id):
                found.append(
                    Violation(
                        "fact_not_local_inline",
                        f"/confirmed_technical_facts/{index}/source_ids/{i}",
                        f"{source_id} is not an inline fact from the supplied data",
                    )
                )
    return found


def _divergence_rules(output: Mapping[str, Any]) -> list[Violation]:
    found: list[Violation] = []
    for section in DIVERGENCE_SECTIONS:
        statement = output[section]
        if statement is None:
            continue
        letters = {source_id[:1] for source_id in statement["source_ids"]}
        if "E" not in letters:
            found.append(
                Violation(
                    "divergence_without_intended",
                    f"/{section}",
                    f"{section} cites no intended behaviour (E)",
                )
            )
        if not letters & OBSERVED_LETTERS:
            found.append(
                Violation(
                    "divergence_without_observed",
                    f"/{section}",
                    f"{section} cites no observation, report text or comment (O/B/C)",
                )
            )
    return found


def _contradiction_rules(output: Mapping[str, Any], catalogue: Catalogue) -> list[Violation]:
    found: list[Violation] = []
    for index, statement in enumerate(output["contradictions"]):
        at = f"/contradictions/{index}"
        if len(set(statement["source_ids"])) < 2:
            found.append(
                Violation("contradiction_too_few", at, "a contradiction needs two distinct sources")
            )
        for source_id in statement["source_ids"]:
            if catalogue.is_unread(source_id):
                found.append(
                    Violation("contradiction_unread", at, f"{source_id} is an unread payload")
                )
    return found


def _completeness_rule(output: Mapping[str, Any], catalogue: Catalogue) -> list[Violation]:
    if catalogue.completeness() == COMPLETE:
        return []
    if any(COMPLETENESS_ID in statement["source_ids"] for statement in output["unknowns"]):
        return []
    return [
        Violation(
            "incompleteness_not_unknown",
            "/unknowns",
            f"intended behaviour is {catalogue.completeness()}; "
            f"an unknown must cite {COMPLETENESS_ID}",
        )
    ]


def validate_output(output: Any, catalogue: Catalogue) -> list[Violation]:
    """Schema first; the reference rules only run on a schema-valid answer."""
    problems = schema_violations(output)
    if problems:
        return problems
    return reference_violations(output, catalogue)
