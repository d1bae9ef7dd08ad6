"""A gap needs a stated expectation (docs/decisions/0075).

Real reports, in kinds of wording, through the real flow (import, CaseBuilder, context,
the request schema, the gateway, validation, publication) with a provider that behaves
like a small constrained model: it fills every field the request's schema lets it fill,
so it states a behaviour gap whenever the schema allows one. A report whose
expectation is only a question, only implied, hedged, or a template left as "N/A" must
be published with no gap and no divergence, and with an unknown citing Q0001. The
control (a report that states its expectation) is published with the gap.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from interp_support import answer_for

from modelgate.providers import Provider
from modelgate.types import ModelRequest, ProviderResponse, Usage
from viano_bug_analysis.analysis import CaseInterpreter, OutcomeStatus
from viano_bug_analysis.analysis.catalogue import Catalogue
from viano_bug_analysis.analysis.rules import RULES
from viano_bug_analysis.case import CaseBuilder
from viano_bug_analysis.intake import import_file
from viano_bug_analysis.llm import GatewayConfig, LLMGateway
from viano_bug_analysis.packages import PackageStore

REPORTS = {
    "question": (
        "# Export drops the file name\n\n"
        "When I export the map the file is called untitled.svg. Is this the expected "
        "behaviour, or should the export keep the map's name?\n"
    ),
    "question-without-mark": (
        "# Sidebar collapses on reload\n\n"
        "The sidebar collapses every time the page reloads. Is it expected that it "
        "should remember its width\n"
    ),
    "implied": (
        "# Dialog closes on its own\n\n"
        "I open the settings dialog and type a name. The dialog closes after two "
        "seconds. It should stay open until I press Save.\n"
    ),
    "hedged": (
        "# Counter keeps counting\n\n"
        "The daily counter shows 143 on the morning after. I think it should reset at "
        "midnight, but I am not sure.\n"
    ),
    "wish": (
        "# Sorting is lost\n\n"
        "After adding a row the table is no longer sorted by date. It would be nice if "
        "the table should stay sorted.\n"
    ),
    "template-na": (
        "# Crash when printing\n\n"
        "## Steps to reproduce\n1. Open a document.\n2. Print it.\n\n"
        "## Expected behavior\nN/A\n\n"
        "## Actual behavior\nThe program closes. It should not crash like this.\n"
    ),
    # issue 39, item 6: the template's Expected section holds the same rule as free text
    "template-hedged-question": (
        "# Toolbar turns light\n\n"
        "## Steps to reproduce\n1. Switch to the dark theme.\n2. Open a new window.\n\n"
        "## Expected results\nIt should be dark throughout I think?\n\n"
        "## Actual results\nThe toolbar of the new window is light.\n"
    ),
    "template-hedged": (
        "# Counter keeps counting\n\n"
        "## Expected behavior\nProbably it should reset at midnight, not sure.\n\n"
        "## Actual behavior\nThe daily counter shows 143 on the morning after.\n"
    ),
    "template-wish": (
        "# Sorting is lost\n\n"
        "## Expected behavior\nIt would be nice if the table stayed sorted.\n\n"
        "## Actual behavior\nAfter adding a row the table is no longer sorted.\n"
    ),
}
STATED = (
    "# Reminder fires late\n\n"
    "## Expected behavior\nThe reminder fires at 09:00 local time.\n\n"
    "## Actual behavior\nThe reminder fires at 10:00 after the clocks change.\n"
)

CONFIG = GatewayConfig.from_mapping(
    {
        "providers": [
            {
                "name": "greedy",
                "base_url": "http://192.0.2.1:9/v1",
                "model": "greedy",
                "max_output_tokens": 2048,
                "structured_output": "json_schema",
            }
        ],
        "retry": {"max_attempts": 1},
    }
)


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _gap_if_allowed(schema: dict[str, Any], section: str) -> dict[str, Any] | None:
    """The gap a model fills in when the schema lets it: the first id of each required
    group the schema names for ``section``, or None where the schema says null."""
    node = schema["properties"][section]
    options = [_resolve(schema, o) for o in node.get("anyOf", [node])]
    statements = [o for o in options if o.get("type") == "object"]
    if not statements:
        return None
    source_ids = statements[0]["properties"]["source_ids"]
    forms = source_ids.get("anyOf", [source_ids])
    ids = [_resolve(schema, item)["enum"][0] for item in forms[0]["prefixItems"]]
    return {"text": "What happens differs from what was intended.", "source_ids": ids}


class GreedyModel(Provider):
    """Writes a valid answer for the context it is sent, and a gap and a divergence
    whenever the request's schema allows them (as a small constrained model does)."""

    name = "greedy"
    model = "greedy"
    timeout_s = 5.0

    async def complete(self, request: ModelRequest) -> ProviderResponse:
        user = request.messages[-1].content
        catalogue = Catalogue(json.loads(user[user.index("{") :])["catalogue"])
        schema = request.output_schema
        assert schema is not None
        answer = answer_for(catalogue)
        answer["behavior_gap"] = _gap_if_allowed(schema, "behavior_gap")
        answer["first_known_divergence"] = _gap_if_allowed(schema, "first_known_divergence")
        return ProviderResponse(
            text=json.dumps(answer),
            model=self.model,
            usage=Usage(prompt_tokens=10, completion_tokens=5, source="provider"),
        )


async def _interpret(tmp_path: Path, name: str, text: str) -> dict[str, Any]:
    report = tmp_path / f"{name}.md"
    report.write_text(text, encoding="utf-8")
    (imported,) = import_file("markdown", report, tmp_path / f"{name}.zip", case_id=name)
    store = PackageStore.init(tmp_path / f"{name}-store")
    store.add(imported.path)
    CaseBuilder(store).build(name, imported.package_id)
    gateway = LLMGateway(CONFIG, providers=[GreedyModel()])
    try:
        result = await CaseInterpreter(store, gateway).interpret(name, imported.package_id)
    finally:
        await gateway.aclose()
    assert result.status is OutcomeStatus.COMPLETED, result.violations
    with store.current(name, imported.package_id).open() as reader:
        published: dict[str, Any] = json.loads(reader.read(result.pointers["case_interpretation"]))
    return published


@pytest.mark.parametrize("kind", sorted(REPORTS))
async def test_no_gap_without_a_stated_expectation(tmp_path: Path, kind: str) -> None:
    published = await _interpret(tmp_path, kind, REPORTS[kind])
    body = published["interpretation"]
    assert body["behavior_gap"] is None
    assert body["first_known_divergence"] is None
    assert published["expected_behavior_status"]["completeness"] != "complete"
    assert any("Q0001" in u["source_ids"] for u in body["unknowns"])


async def test_a_stated_expectation_grounds_the_gap(tmp_path: Path) -> None:
    published = await _interpret(tmp_path, "stated", STATED)
    body = published["interpretation"]
    assert body["behavior_gap"] is not None
    assert body["behavior_gap"]["source_ids"][0].startswith("E")


def test_implied_and_hedged_expectations_are_recorded_but_not_stated(tmp_path: Path) -> None:
    """CaseBuilder keeps what the wording implies as an E record marked not explicit;
    a question or a wish gives none."""
    for kind, explicit_e in (("implied", 1), ("hedged", 1), ("question", 0), ("wish", 0)):
        report = tmp_path / f"{kind}.md"
        report.write_text(REPORTS[kind], encoding="utf-8")
        (imported,) = import_file("markdown", report, tmp_path / f"{kind}.zip", case_id=kind)
        store = PackageStore.init(tmp_path / f"{kind}-store")
        store.add(imported.path)
        built = CaseBuilder(store).build(kind, imported.package_id)
        assert built.record_counts.get("E", 0) == explicit_e, kind


def test_the_rule_table_never_admits_an_implied_expectation_in_a_gap() -> None:
    catalogue = Catalogue(
        [
            {"id": "E0001", "kind": "expectation", "data": {"explicit": False}},
            {"id": "E0002", "kind": "expectation", "data": {"explicit": True}},
            {"id": "O0001", "kind": "observation", "data": {}},
        ]
    )
    for section in ("behavior_gap", "first_known_divergence"):
        admitted = RULES.admitted(catalogue, section, ["E0001", "E0002", "O0001"])
        assert admitted == ["E0002", "O0001"]
