"""The output schema of one request, derived from its context's catalogue.

``derive_schema(catalogue)`` narrows ``case-interpretation-output-v1.schema.json`` (the
published contract, which stays the file every answer is checked against) to what the
reference rules (``rules.RULES``, the table the validator reads) let this context
cite:

- every ``source_ids`` item is an ``enum`` of exactly the catalogue ids its section may
  cite: any id of the catalogue for observations, failure stage, gaps, unknowns,
  directions and the summary; E records for intended behaviour; T and C records for
  tester assumptions; inline facts of the supplied data for confirmed facts; readable
  entries for contradictions; ``entity_id`` an ``enum`` of the N aliases;
- a list whose section can cite nothing here gets ``maxItems: 0`` (intended behaviour
  without E records, for example), and a gap or divergence whose required citations
  cannot be met here (no E record, or no O/B/C entry) must be ``null``;
- a contradiction's ``source_ids`` need ``minItems`` of the distinct count (and the
  list is empty when fewer readable ids exist); ``unknowns`` need at least one statement
  while intended behaviour is not complete; lists of ids hold at most as many items as
  there are ids to cite; ``relevant_entities`` at most one item per N alias.

What JSON Schema cannot say portably (both an E and an O/B/C id in one gap, distinct
ids, Q0001 among the unknowns, an entity listed once) stays in the validator. Each id
set is written once under ``$defs`` and referenced, so a grammar built from the schema
(llama.cpp) holds each set once. The schema is deterministic for a catalogue (catalogue
order, no time, no randomness): it is part of the request and so of its fingerprint.

Every instance of a derived schema is an instance of the static file (a property test
checks it with generated catalogues and answers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.analysis.catalogue import COMPLETE, Catalogue
from viano_bug_analysis.analysis.rules import RULES, RuleTable
from viano_bug_analysis.analysis.schema_file import shipped_schema
from viano_bug_analysis.analysis.validation import OPTIONAL_STATEMENTS, STATEMENT_LISTS

DERIVED_TITLE = "Viano case interpretation output, version 1, narrowed to one context"
ANY = "any"


@dataclass(frozen=True, slots=True)
class AnswerBounds:
    """Upper bounds the derived schema puts on one answer: statements per list (and
    entities), ids per statement, characters per text (and role)."""

    items: int
    ids: int
    chars: int

    def worst_chars(self) -> int:
        """A generous size of the largest answer these bounds allow: 7 lists and 4 single
        statements, each statement its text, its ids and its JSON punctuation; the
        entities; the section keys."""
        statement = self.chars + 24 + 10 * self.ids
        return (7 * self.items + 4) * statement + self.items * (self.chars + 40) + 400


# where a rule needs citations first (ordered forms), how many more items may follow
ORDERED_EXTRA = 3
# from the static file's own bounds down; the first that fits the output limit is used
BOUNDS_LADDER = (
    AnswerBounds(256, 64, 8000),
    AnswerBounds(32, 16, 2000),
    AnswerBounds(16, 8, 1000),
    AnswerBounds(8, 6, 480),
    AnswerBounds(6, 4, 240),
    AnswerBounds(4, 4, 200),
    AnswerBounds(3, 3, 160),
    AnswerBounds(2, 3, 120),
    AnswerBounds(2, 2, 80),
    AnswerBounds(1, 2, 60),
)
# output tokens are counted as this many characters of answer (JSON, ids and escapes
# make the characters per token of an answer lower than in prose)
CHARS_PER_TOKEN = 2.5


def answer_bounds(max_output_tokens: int | None) -> AnswerBounds:
    """The largest bounds of :data:`BOUNDS_LADDER` whose largest answer fits
    ``max_output_tokens`` (None: the static file's bounds). An answer cut off by the
    output limit is not JSON and is lost, so the schema keeps every answer inside it."""
    if max_output_tokens is None:
        return BOUNDS_LADDER[0]
    budget = max_output_tokens * CHARS_PER_TOKEN
    for bounds in BOUNDS_LADDER:
        if bounds.worst_chars() <= budget:
            return bounds
    return BOUNDS_LADDER[-1]


class _Builder:
    """Collects the ``$defs`` of one derived schema (each id set and statement once)."""

    def __init__(self, static: dict[str, Any], bounds: AnswerBounds) -> None:
        defs = static["$defs"]
        self.bounds = bounds
        self.text = _capped(defs["statement"]["properties"]["text"], "maxLength", bounds.chars)
        self.source_ids = _capped(
            defs["statement"]["properties"]["source_ids"], "maxItems", bounds.ids
        )
        self.statements = _capped(defs["statements"], "maxItems", bounds.items)
        self.entity = defs["entity_reference"]
        self.role = _capped(self.entity["properties"]["role"], "maxLength", bounds.chars)
        self.entities = _capped(static["properties"]["relevant_entities"], "maxItems", bounds.items)
        self.defs: dict[str, Any] = {}
        self._id_sets: dict[tuple[str, ...], str] = {}

    def id_set(self, name: str, ids: list[str]) -> str:
        key = tuple(ids)
        known = self._id_sets.get(key)
        if known is not None:
            return known
        ref = f"ids_{name}"
        self.defs[ref] = {"type": "string", "enum": list(ids)}
        self._id_sets[key] = ref
        return ref

    def statement(self, ids_ref: str, count: int, min_ids: int) -> dict[str, Any]:
        """A reference to the statement citing 1..64 (at least ``min_ids``, at most
        ``count``) ids of ``ids_ref``."""
        low = max(self.source_ids["minItems"], min_ids)
        high = min(self.source_ids["maxItems"], max(count, low))
        name = f"statement_{ids_ref[4:]}" + (f"_min{low}" if low > 1 else "")
        if name not in self.defs:
            self.defs[name] = {
                "type": "object",
                "additionalProperties": False,
                "required": ["text", "source_ids"],
                "properties": {
                    "text": dict(self.text),
                    "source_ids": {
                        "type": "array",
                        "minItems": low,
                        "maxItems": high,
                        "items": {"$ref": f"#/$defs/{ids_ref}"},
                    },
                },
            }
        return {"$ref": f"#/$defs/{name}"}

    def statement_with(self, source_ids: dict[str, Any], name: str) -> dict[str, Any]:
        """A reference to a statement whose ``source_ids`` schema is given."""
        if name not in self.defs:
            self.defs[name] = {
                "type": "object",
                "additionalProperties": False,
                "required": ["text", "source_ids"],
                "properties": {"text": dict(self.text), "source_ids": source_ids},
            }
        return {"$ref": f"#/$defs/{name}"}

    def statements_list(
        self, item: dict[str, Any], *, low: int = 0, high: int | None = None
    ) -> dict[str, Any]:
        limit = self.statements["maxItems"] if high is None else high
        out: dict[str, Any] = {"type": "array", "maxItems": limit, "items": item}
        if low:
            out["minItems"] = low
        return out


def _capped(node: dict[str, Any], key: str, bound: int) -> dict[str, Any]:
    """A copy of ``node`` whose ``key`` is at most ``bound`` (never raised)."""
    return {**node, key: min(node[key], bound)}


def leading(first: list[dict[str, Any]], rest: dict[str, Any], extra: int) -> dict[str, Any]:
    """Arrays that start with one item of each schema of ``first`` and go on with up to
    ``extra`` items of ``rest``: one exact tuple per length (``prefixItems`` with
    ``items: false``, which llama.cpp's converter and JSON Schema read alike)."""
    options = [
        {
            "type": "array",
            "minItems": len(first) + n,
            "prefixItems": [*first, *([rest] * n)],
            "items": False,
        }
        for n in range(extra + 1)
    ]
    return options[0] if len(options) == 1 else {"anyOf": options}


def _valid_ids(catalogue: Catalogue, pattern: str) -> list[str]:
    match = re.compile(pattern).match
    return [str(e["id"]) for e in catalogue.entries if match(str(e["id"]))]


def derive_schema(
    catalogue: Catalogue,
    rules: RuleTable = RULES,
    *,
    max_output_tokens: int | None = None,
    distinct_ids: bool = True,
) -> dict[str, Any]:
    """The JSON schema (Draft 2020-12) sent with a request for this catalogue, bounded
    (``answer_bounds``) so that its largest answer fits ``max_output_tokens``.

    ``distinct_ids=False`` says the provider's grammar cannot hold two ids of one list
    apart (llama.cpp ignores ``uniqueItems``): a list whose statements need several
    distinct ids (contradictions) is then left out (``maxItems: 0``), so the answer
    space cannot hold what the validator would reject (ADR 0103)."""
    static = shipped_schema()
    build = _Builder(static, answer_bounds(max_output_tokens))
    # an ordered form is one exact tuple per length: a few lengths only
    extra = min(ORDERED_EXTRA, build.bounds.items - 1)
    extra_ids = min(ORDERED_EXTRA, build.source_ids["maxItems"] - 1)
    ids = _valid_ids(catalogue, static["$defs"]["source_id"]["pattern"])
    any_ref = build.id_set(ANY, ids)
    properties: dict[str, Any] = {}

    def cited(section: str) -> tuple[str, list[str]]:
        if not rules.citation(section):
            return any_ref, ids
        allowed = rules.admitted(catalogue, section, ids)
        return (build.id_set(section, allowed) if allowed else ""), allowed

    for section in STATEMENT_LISTS:
        ref, allowed = cited(section)
        min_ids = max([r.count for r in rules.distinct if r.section == section], default=1)
        if not ref or len(set(allowed)) < min_ids or (min_ids > 1 and not distinct_ids):
            properties[section] = build.statements_list(build.statement(any_ref, 1, 1), high=0)
            continue
        item = build.statement(ref, len(allowed), min_ids)
        need = rules.completeness.source_id
        if (
            section == rules.completeness.section
            and catalogue.completeness() != COMPLETE
            and need in allowed
        ):
            # the first statement cites the completeness entry first
            first_ids = leading(
                [{"$ref": f"#/$defs/{build.id_set('completeness', [need])}"}],
                {"$ref": f"#/$defs/{ref}"},
                min(extra_ids, len(allowed) - 1),
            )
            first = build.statement_with(first_ids, f"statement_{section}_first")
            properties[section] = leading([first], item, extra)
            continue
        properties[section] = build.statements_list(item)

    for section in OPTIONAL_STATEMENTS:
        ref, allowed = cited(section)
        groups = [
            [i for i in allowed if rule.admits(catalogue, i)]
            for rule in rules.requirements(section)
        ]
        if not ref or any(not group for group in groups):
            properties[section] = {"type": "null"}
            continue
        if not groups:
            properties[section] = {
                "anyOf": [build.statement(ref, len(allowed), 1), {"type": "null"}]
            }
            continue
        # one id of each required group first, in the table's order, then any allowed ids
        refs = [
            build.id_set(rule.code, group)
            for rule, group in zip(rules.requirements(section), groups, strict=True)
        ]
        source_ids = leading(
            [{"$ref": f"#/$defs/{r}"} for r in refs],
            {"$ref": f"#/$defs/{ref}"},
            max(0, min(extra_ids + 1, build.source_ids["maxItems"], len(allowed)) - len(refs)),
        )
        name = "statement_" + "_".join(r[4:] for r in refs)
        properties[section] = {"anyOf": [build.statement_with(source_ids, name), {"type": "null"}]}

    ref, allowed = cited("interpretation_summary")
    properties["interpretation_summary"] = build.statement(ref or any_ref, len(allowed), 1)

    entity_ids = [i for i in ids if rules.entities.admits(catalogue, i)]
    entity_item: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "required": ["entity_id", "role"],
        "properties": {
            "entity_id": (
                {"$ref": f"#/$defs/{build.id_set('entities', entity_ids)}"}
                if entity_ids
                else dict(build.entity["properties"]["entity_id"])
            ),
            "role": dict(build.role),
        },
    }
    properties["relevant_entities"] = {
        "type": "array",
        "maxItems": min(build.entities["maxItems"], len(entity_ids)),
        "items": entity_item,
    }
    return {
        "$schema": static["$schema"],
        "title": DERIVED_TITLE,
        "type": "object",
        "additionalProperties": False,
        "required": list(static["required"]),
        "properties": {name: properties[name] for name in static["required"]},
        "$defs": build.defs,
    }
