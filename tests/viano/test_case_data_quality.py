"""Data-quality (D) records of native intake: one case per code, with what each cites,
and the provenance of builder-made records (D, Q are ``derived``, not supplied data)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from viano_helpers import INTAKE, intake_package

from viano_bug_analysis.case import CaseBuilder, load_canonical_case
from viano_bug_analysis.packages import PackageStore


def _built(tmp_path: Path, **changes: Any) -> dict[str, Any]:
    intake = copy.deepcopy(INTAKE)
    intake.update(changes)
    store = PackageStore.init(tmp_path / "store")
    store.add(intake_package(tmp_path / "in.zip", intake))
    CaseBuilder(store).build("demo-case", "supplied")
    with store.current("demo-case", "supplied").open() as r:
        return load_canonical_case(r.read(r.require_manifest().pointers["canonical_case"]))


def _records(case: dict[str, Any], letter: str) -> list[dict[str, Any]]:
    return [r for r in case["records"] if r["id"].startswith(letter)]


def _d(case: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [r for r in _records(case, "D") if r["code"] == code]


def _ids(case: dict[str, Any], letter: str) -> list[str]:
    return [r["id"] for r in _records(case, letter)]


def test_the_sample_intake_has_no_quality_issue_but_the_empty_comment(tmp_path: Path) -> None:
    case = _built(tmp_path)
    assert [r["code"] for r in _records(case, "D")] == ["empty_comment"]


def test_missing_steps(tmp_path: Path) -> None:
    case = _built(tmp_path, steps=[])
    (d,) = _d(case, "missing_steps")
    assert d["cites"] == [] and _ids(case, "S") == []


def test_conflicting_versions_cite_both_version_entities(tmp_path: Path) -> None:
    case = _built(
        tmp_path,
        summary="Clicking Export in Firefox 57.0 produces no file.",
        observations=["On Firefox 58.0 the spinner stops and no CSV is downloaded."],
    )
    (d,) = _d(case, "conflicting_versions")
    cited = {r["id"]: r for r in case["records"] if r["id"] in d["cites"]}
    assert len(cited) == 2
    assert all(r["kind"] == "entity" and r["entity_type"] == "version" for r in cited.values())
    assert {r["value"] for r in cited.values()} == {"Firefox 57.0", "Firefox 58.0"}


def test_the_same_version_twice_is_no_conflict(tmp_path: Path) -> None:
    case = _built(
        tmp_path,
        summary="Clicking Export in Firefox 57.0 produces no file.",
        observations=["On Firefox 57.0 the spinner stops and no CSV is downloaded."],
    )
    assert _d(case, "conflicting_versions") == []


def test_words_such_as_version_or_since_name_no_component(tmp_path: Path) -> None:
    """ "Version 0.27.2" and "Patch 0.2" name no product: their numbers are bare versions
    (or none), so two of them are no conflict between versions of a "version"."""
    case = _built(
        tmp_path,
        summary="Export fails in Version 0.27.2 and worked in Version 0.26.1.",
        observations=["Since 4.0 the spinner stops; Patch 0.2 did not help. Firefox 57.0 too."],
    )
    values = {r["value"] for r in _records(case, "N") if r["entity_type"] == "version"}
    assert {"0.27.2", "0.26.1", "Firefox 57.0"} <= values
    assert not [v for v in values if v.split()[0] in {"Version", "Since", "Patch"}]
    assert _d(case, "conflicting_versions") == []


def test_conflicting_expected_behavior_cites_every_explicit_expectation(tmp_path: Path) -> None:
    case = _built(
        tmp_path,
        expected_behavior=[
            {"text": "A CSV file with the visible rows is downloaded."},
            {"text": "An XLSX workbook is offered for download.", "origin": "external_research"},
        ],
    )
    (d,) = _d(case, "conflicting_expected_behavior")
    assert d["cites"] == _ids(case, "E") and len(d["cites"]) == 2
    (q,) = _records(case, "Q")
    assert q["value"] == "conflicting"
    assert q["expected_behavior_provenance"] == "combined"


def test_a_very_short_expectation_is_incomplete(tmp_path: Path) -> None:
    case = _built(tmp_path, expected_behavior="Works.")
    (d,) = _d(case, "incomplete_expected_behavior")
    assert d["cites"] == _ids(case, "E") and len(d["cites"]) == 1
    assert _records(case, "Q")[0]["value"] == "incomplete"


def test_an_implied_expectation_is_incomplete(tmp_path: Path) -> None:
    case = _built(
        tmp_path,
        expected_behavior=None,
        title="Export should download a CSV file of the report",
    )
    implied = [r for r in _records(case, "E") if r["explicit"] is False]
    assert implied
    (d,) = _d(case, "incomplete_expected_behavior")
    assert d["cites"] == [r["id"] for r in implied]


def test_an_empty_expected_behavior_section(tmp_path: Path) -> None:
    case = _built(tmp_path, expected_behavior="n/a")
    (d,) = _d(case, "empty_expected_behavior")
    assert d["cites"] == []
    assert d["provenance"]["json_pointer"] is not None  # where the empty section is
    assert [r["code"] for r in _d(case, "missing_expected_behavior")] == [
        "missing_expected_behavior"
    ]
    assert _records(case, "Q")[0]["value"] == "missing"


def test_builder_made_records_are_derived_not_supplied(tmp_path: Path) -> None:
    case = _built(tmp_path, steps=[], expected_behavior="n/a")
    made = _records(case, "D") + _records(case, "Q")
    assert len(made) >= 4
    for record in made:
        assert record["provenance"]["origin"] == "derived", record
        assert record["provenance"]["role"] == "system"
    supplied = [r for r in case["records"] if r["id"][0] in "BOECTFR"]
    assert supplied
    assert all(
        r["provenance"]["origin"] in {"original", "tester", "external_research", "combined"}
        for r in supplied
    )
