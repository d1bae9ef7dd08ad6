"""The reference rules as data: one table read by the validator and by the schema
derivation, so that the two cannot disagree.

Every rule says which catalogue ids a part of the answer may cite, or what a statement
must cite, as a predicate on ``(catalogue, id)``. ``validation.reference_violations``
checks an answer against the table; ``request_schema.derive_schema`` writes the same
table into the JSON schema sent with one request (an ``enum`` of the admitted ids per
section, ``maxItems: 0`` or ``null`` where nothing can be cited, ``minItems`` where a
statement needs several ids). What JSON Schema cannot say portably (a statement cites
*both* an E record and an observation, two *distinct* sources, *some* unknown cites
Q0001, an entity listed once) stays in the validator alone; the derived schema only
makes those easier to meet (see docs/decisions/0055-derived-request-schema.md).

A test can build a changed table (``dataclasses.replace``) and pass it to both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from viano_bug_analysis.analysis.catalogue import COMPLETENESS_ID, Catalogue

Admits = Callable[[Catalogue, str], bool]


def letters(allowed: str) -> Admits:
    """Ids whose letter (their kind) is one of ``allowed``. Reads the id only, so an id
    of another kind breaks the rule whether or not it is in the catalogue."""
    kinds = frozenset(allowed)

    def admits(_catalogue: Catalogue, source_id: str) -> bool:
        return source_id[:1] in kinds

    admits.__name__ = f"letters_{''.join(sorted(kinds))}"
    return admits


def local_inline_fact(catalogue: Catalogue, source_id: str) -> bool:
    """An inline F fact of the supplied (original) data. An id outside the catalogue is
    left to ``unknown_source``."""
    return source_id not in catalogue or catalogue.is_local_inline_fact(source_id)


def stated_expectation(catalogue: Catalogue, source_id: str) -> bool:
    """An E record that the report states (``explicit``), not one CaseBuilder derived
    from wording that only implies it."""
    return source_id[:1] == "E" and not catalogue.is_implicit_expectation(source_id)


def not_implied_expectation(catalogue: Catalogue, source_id: str) -> bool:
    """Anything but an implied (not explicit) expectation."""
    return not catalogue.is_implicit_expectation(source_id)


def readable(catalogue: Catalogue, source_id: str) -> bool:
    """Not an unread payload (X entries, unread entries, facts given by reference)."""
    return not catalogue.is_unread(source_id)


@dataclass(frozen=True, slots=True)
class CitationRule:
    """Every id cited by the statements of ``section`` must be admitted.

    ``message`` is formatted with ``section``, ``id`` and ``kinds``; ``per_statement``
    reports the violation at the statement instead of at the id."""

    section: str
    code: str
    admits: Admits
    kinds: str
    message: str
    per_statement: bool = False


@dataclass(frozen=True, slots=True)
class RequiredCitation:
    """A (non-null) statement of ``section`` must cite at least one admitted id."""

    section: str
    code: str
    admits: Admits
    message: str


@dataclass(frozen=True, slots=True)
class DistinctSources:
    """Each statement of ``section`` cites at least ``count`` distinct ids."""

    section: str
    code: str
    count: int
    message: str


@dataclass(frozen=True, slots=True)
class CompletenessRule:
    """Unless intended behaviour is complete, some statement of ``section`` cites
    ``source_id``."""

    section: str
    code: str
    source_id: str


@dataclass(frozen=True, slots=True)
class EntityRule:
    """``relevant_entities`` name admitted entries of the catalogue, each at most once."""

    code: str
    duplicate_code: str
    admits: Admits


@dataclass(frozen=True, slots=True)
class RuleTable:
    citations: tuple[CitationRule, ...]
    required: tuple[RequiredCitation, ...]
    distinct: tuple[DistinctSources, ...]
    completeness: CompletenessRule
    entities: EntityRule

    def citation(self, section: str) -> tuple[CitationRule, ...]:
        return tuple(rule for rule in self.citations if rule.section == section)

    def requirements(self, section: str) -> tuple[RequiredCitation, ...]:
        return tuple(rule for rule in self.required if rule.section == section)

    def admitted(self, catalogue: Catalogue, section: str, ids: list[str]) -> list[str]:
        """The ids of ``ids`` (catalogue ids) that every citation rule of ``section``
        admits, in the given order."""
        rules = self.citation(section)
        return [i for i in ids if all(rule.admits(catalogue, i) for rule in rules)]


DIVERGENCE_SECTIONS = ("behavior_gap", "first_known_divergence")

RULES = RuleTable(
    citations=(
        CitationRule(
            "expected_behavior",
            "expected_not_expectation",
            letters("E"),
            "E",
            "{section} may cite only {kinds} records, not {id}",
        ),
        CitationRule(
            "tester_assumptions",
            "assumption_not_tester",
            letters("TC"),
            "C/T",
            "{section} may cite only {kinds} records, not {id}",
        ),
        CitationRule(
            "confirmed_technical_facts",
            "fact_not_local_inline",
            local_inline_fact,
            "inline F",
            "{id} is not an inline fact from the supplied data",
        ),
        CitationRule(
            "contradictions",
            "contradiction_unread",
            readable,
            "read",
            "{id} is an unread payload",
            per_statement=True,
        ),
        *(
            # a gap needs a *stated* expectation: one only implied by the wording ("should
            # ... I think", a question, a wish) is no ground for one (docs/decisions/0075)
            CitationRule(
                section,
                "divergence_implied_expectation",
                not_implied_expectation,
                "stated E",
                "{section} may cite only stated expectations, and {id} is only implied",
            )
            for section in DIVERGENCE_SECTIONS
        ),
    ),
    required=tuple(
        rule
        for section in DIVERGENCE_SECTIONS
        for rule in (
            RequiredCitation(
                section,
                "divergence_without_intended",
                stated_expectation,
                "{section} cites no stated intended behaviour (explicit E)",
            ),
            RequiredCitation(
                section,
                "divergence_without_observed",
                letters("OBC"),
                "{section} cites no observation, report text or comment (O/B/C)",
            ),
        )
    ),
    distinct=(
        DistinctSources(
            "contradictions",
            "contradiction_too_few",
            2,
            "a contradiction needs two distinct sources",
        ),
    ),
    completeness=CompletenessRule("unknowns", "incompleteness_not_unknown", COMPLETENESS_ID),
    entities=EntityRule("entity_not_entity", "entity_duplicate", letters("N")),
)
