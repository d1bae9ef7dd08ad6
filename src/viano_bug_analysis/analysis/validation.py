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
    divergence_without_intended  a gap/divergence cites no stated (explicit) E record
    divergence_implied_expectation  a gap/divergence cites an only implied E record
    divergence_without_observed  a gap/divergence cites no observation, report text or comment
    contradiction_too_few        a contradiction cites fewer than two distinct sources
    contradiction_unread         a contradiction cites an unread payload
    incompleteness_not_unknown   intended behaviour is not complete and no unknown cites Q0001

The reference rules are read from ``rules.RULES``, the table the request schema of each
interpretation is derived from (``request_schema.derive_schema``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from pydantic import ValidationError

from viano_bug_analysis.analysis.catalogue import COMPLETE, Catalogue
from viano_bug_analysis.analysis.output_model import InterpretationOutput
from viano_bug_analysis.analysis.rules import RULES, CitationRule, RuleTable
from viano_bug_analysis.analysis.schema_file import shipped_schema

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


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: its code, where (a JSON pointer into the answer) and why."""

    rule: str
    at: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "at": self.at, "message": self.message}


@functools.cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(shipped_schema())


def schema_violations(output: Any) -> list[Violation]:
    """Every schema error, in a stable order (empty: the answer matches the schema file).

    Fast path: when the pydantic mirror of the file (``output_model.InterpretationOutput``,
    tested to agree with it) accepts, the answer matches; a fresh answer was moreover
    checked against the file itself by the gateway. Otherwise jsonschema lists the file's
    violations (and if it finds none, the file wins)."""
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


def reference_violations(
    output: Mapping[str, Any], catalogue: Catalogue, rules: RuleTable = RULES
) -> list[Violation]:
    """The reference rules of ``rules`` (the table the request schema is derived from).
    ``output`` must already match the schema."""
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
    found += _entity_rules(output, catalogue, rules)
    for rule in rules.citations:
        if not rule.per_statement:
            found += _citation_rule(output, catalogue, rule)
    found += _required_rules(output, catalogue, rules)
    found += _statement_rules(output, catalogue, rules)
    found += _completeness_rule(output, catalogue, rules)
    return found


def _entity_rules(
    output: Mapping[str, Any], catalogue: Catalogue, rules: RuleTable
) -> list[Violation]:
    rule = rules.entities
    found: list[Violation] = []
    seen: set[str] = set()
    for index, item in enumerate(output["relevant_entities"]):
        entity_id = item["entity_id"]
        at = f"/relevant_entities/{index}/entity_id"
        if entity_id not in catalogue or not rule.admits(catalogue, entity_id):
            found.append(Violation(rule.code, at, f"{entity_id} is not an N entry of this context"))
        elif entity_id in seen:
            found.append(
                Violation(rule.duplicate_code, at, f"{entity_id} is listed more than once")
            )
        seen.add(entity_id)
    return found


def _section_statements(
    output: Mapping[str, Any], section: str
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    value = output[section]
    if isinstance(value, list):
        for index, statement in enumerate(value):
            yield f"/{section}/{index}", statement
    elif value is not None:
        yield f"/{section}", value


def _citation_violation(rule: CitationRule, at: str, source_id: str) -> Violation:
    return Violation(
        rule.code, at, rule.message.format(section=rule.section, id=source_id, kinds=rule.kinds)
    )


def _citation_rule(
    output: Mapping[str, Any], catalogue: Catalogue, rule: CitationRule
) -> list[Violation]:
    found: list[Violation] = []
    for at, statement in _section_statements(output, rule.section):
        for i, source_id in enumerate(statement["source_ids"]):
            if not rule.admits(catalogue, source_id):
                where = at if rule.per_statement else f"{at}/source_ids/{i}"
                found.append(_citation_violation(rule, where, source_id))
    return found


def _required_rules(
    output: Mapping[str, Any], catalogue: Catalogue, rules: RuleTable
) -> list[Violation]:
    found: list[Violation] = []
    for section in dict.fromkeys(rule.section for rule in rules.required):
        for at, statement in _section_statements(output, section):
            for rule in rules.requirements(section):
                if not any(rule.admits(catalogue, s) for s in statement["source_ids"]):
                    found.append(Violation(rule.code, at, rule.message.format(section=section)))
    return found


def _statement_rules(
    output: Mapping[str, Any], catalogue: Catalogue, rules: RuleTable
) -> list[Violation]:
    """Distinct-source rules and per-statement citation rules (contradictions), statement
    by statement."""
    found: list[Violation] = []
    per_statement = [rule for rule in rules.citations if rule.per_statement]
    sections = dict.fromkeys(
        [r.section for r in rules.distinct] + [r.section for r in per_statement]
    )
    for section in sections:
        for at, statement in _section_statements(output, section):
            for count_rule in rules.distinct:
                if count_rule.section != section:
                    continue
                if len(set(statement["source_ids"])) < count_rule.count:
                    found.append(Violation(count_rule.code, at, count_rule.message))
            for source_id in statement["source_ids"]:
                for rule in per_statement:
                    if rule.section == section and not rule.admits(catalogue, source_id):
                        found.append(_citation_violation(rule, at, source_id))
    return found


def _completeness_rule(
    output: Mapping[str, Any], catalogue: Catalogue, rules: RuleTable
) -> list[Violation]:
    rule = rules.completeness
    if catalogue.completeness() == COMPLETE:
        return []
    if any(rule.source_id in statement["source_ids"] for statement in output[rule.section]):
        return []
    return [
        Violation(
            rule.code,
            f"/{rule.section}",
            f"intended behaviour is {catalogue.completeness()}; "
            f"an unknown must cite {rule.source_id}",
        )
    ]


def validate_output(output: Any, catalogue: Catalogue) -> list[Violation]:
    """Schema first; the reference rules only run on a schema-valid answer."""
    problems = schema_violations(output)
    if problems:
        return problems
    return reference_violations(output, catalogue)
