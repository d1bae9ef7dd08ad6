"""The `viano` CLI (typer's CliRunner) and the importers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from viano_helpers import INTAKE

from viano_bug_analysis.cli import app
from viano_bug_analysis.errors import IntakeError
from viano_bug_analysis.intake import import_file
from viano_bug_analysis.packages import PackageReader

runner = CliRunner()

GH_CLI = {
    "number": 42,
    "title": "Crash when saving an empty draft",
    "body": "### Steps to reproduce\n1. Open the editor\n2. Press Save\n\n"
    "### Expected behavior\nThe empty draft is saved.\n\n### Actual behavior\nThe app crashes.",
    "author": {"login": "maria"},
    "createdAt": "2024-01-02T03:04:05Z",
    "labels": [{"name": "bug"}],
    "comments": [
        {
            "author": {"login": "dev1"},
            "body": "Probably the autosave timer fires twice.",
            "createdAt": "2024-01-03T00:00:00Z",
        },
    ],
    "url": "https://github.com/acme/editor/issues/42",
}

MARKDOWN = """# Search returns nothing for accented words

Searching for "café" in the catalogue shows an empty list.

## Steps to reproduce
1. Open the catalogue
2. Search for café

## Expected
Items named café are listed.

## Actual
The result list is empty.
"""


def _json(args: list[str]) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, [*args, "--json"])
    lines = [ln for ln in result.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stdout
    return result.exit_code, json.loads(lines[0])


def test_full_cli_flow_with_json(tmp_path: Path) -> None:
    src = tmp_path / "issue.json"
    src.write_text(json.dumps(GH_CLI))
    code, out = _json(["store", "init", str(tmp_path / "s")])
    assert code == 0 and out["status"] == "initialized"
    code, out = _json(["import", "github-issue", str(src), "-o", str(tmp_path / "p.zip")])
    assert code == 0 and out["packages"][0]["case_id"] == "gh-acme-editor-42"
    code, out = _json(["add", str(tmp_path / "s"), str(tmp_path / "p.zip")])
    assert (code, out["status"], out["package_generation"]) == (0, "added", 1)
    code, out = _json(["build", str(tmp_path / "s"), "gh-acme-editor-42", "supplied"])
    assert (code, out["status"], out["analysis_revision"], out["package_generation"]) == (
        0,
        "built",
        1,
        2,
    )
    assert out["record_counts"]["S"] == 2 and out["record_counts"]["E"] == 1
    code, out = _json(["build", str(tmp_path / "s"), "gh-acme-editor-42", "supplied"])
    assert out["status"] == "unchanged"
    code, out = _json(["show", str(tmp_path / "s"), "gh-acme-editor-42", "supplied", "--records"])
    assert code == 0 and out["case"]["completeness"]["expected_behavior"] == "complete"
    assert any(
        r["kind"] == "tester_hypothesis" and r["provenance"]["author"] == "dev1"
        for r in out["case"]["records"]
    )
    code, out = _json(
        ["export", str(tmp_path / "s"), "gh-acme-editor-42", "supplied", str(tmp_path / "out.zip")]
    )
    assert code == 0 and out["package_generation"] == 2
    with PackageReader(tmp_path / "out.zip") as r:
        assert r.require_manifest().pointers["canonical_case"].endswith("canonical_case.json")
        assert r.read("original/issue.json") == src.read_bytes()


def test_human_output_and_errors(tmp_path: Path) -> None:
    result = runner.invoke(app, ["store", "init", str(tmp_path / "s")])
    assert result.exit_code == 0
    result = runner.invoke(app, ["build", str(tmp_path / "s"), "nope", "supplied"])
    assert result.exit_code == 1
    code, out = _json(["build", str(tmp_path / "s"), "nope", "supplied"])
    assert (code, out["status"], out["error"]["code"]) == (1, "error", "store.not_found")
    assert out["case_id"] == "nope" and "package_generation" in out
    code, out = _json(["add", str(tmp_path / "missing-store"), str(tmp_path / "x.zip")])
    assert (code, out["error"]["code"]) == (1, "store.not_initialized")
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    code, out = _json(["add", str(tmp_path / "s"), str(bad)])
    assert (code, out["error"]["code"]) == (1, "package.not_zip")


def test_import_invalid_json_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "issue.json"
    src.write_text('{"title": "x", ')
    code, out = _json(["import", "github-issue", str(src), "-o", str(tmp_path / "p.zip")])
    assert (code, out["error"]["code"]) == (1, "intake.invalid_json")
    assert not (tmp_path / "p.zip").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["issue.json"]


def test_jsonl_with_one_bad_line_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "issues.jsonl"
    src.write_bytes(json.dumps(GH_CLI).encode() + b"\n" + b'{"title": 3}\n')
    with pytest.raises(IntakeError) as info:
        import_file("github-issue", src, tmp_path / "out")
    assert info.value.code == "intake.invalid"
    assert not (tmp_path / "out").exists()


def test_jsonl_each_record_its_own_package(tmp_path: Path) -> None:
    second = {**GH_CLI, "number": 43, "url": "https://github.com/acme/editor/issues/43"}
    lines = [json.dumps(GH_CLI).encode(), json.dumps(second).encode()]
    src = tmp_path / "issues.jsonl"
    src.write_bytes(lines[0] + b"\r\n" + lines[1] + b"\r\n")
    results = import_file("github-issue", src, tmp_path / "out")
    assert [r.case_id for r in results] == ["gh-acme-editor-42", "gh-acme-editor-43"]
    for r, line in zip(results, lines, strict=True):
        with PackageReader(r.path) as reader:
            assert reader.read(r.member) == line  # the line without its terminator
            assert reader.require_manifest().source["line"] == r.line


def test_markdown_import_and_native_intake(tmp_path: Path) -> None:
    from viano_bug_analysis.case import CaseBuilder, load_canonical_case
    from viano_bug_analysis.packages import PackageStore

    md = tmp_path / "report.md"
    md.write_text(MARKDOWN, encoding="utf-8")
    intake = tmp_path / "intake.json"
    intake.write_text(json.dumps(INTAKE))
    store = PackageStore.init(tmp_path / "s")
    (r1,) = import_file("markdown", md, tmp_path / "md.zip", case_id="md-case")
    (r2,) = import_file("viano-intake", intake, tmp_path / "in.zip")
    for r in (r1, r2):
        store.add(r.path)
        CaseBuilder(store).build(r.case_id, r.package_id)
    with store.current("md-case", "supplied").open() as reader:
        case = load_canonical_case(
            reader.read(reader.require_manifest().pointers["canonical_case"])
        )
    kinds = {(r["kind"], r.get("text")) for r in case["records"]}
    assert ("report", "Search returns nothing for accented words") in kinds
    assert ("step", "Search for café") in kinds
    assert ("expectation", "Items named café are listed.") in kinds
    assert ("observation", "The result list is empty.") in kinds
    step = next(r for r in case["records"] if r.get("text") == "Search for café")
    start, end = step["provenance"]["span"]
    assert MARKDOWN[start:end].endswith("Search for café")
    assert step["provenance"]["json_pointer"] is None


def test_importer_output_is_deterministic(tmp_path: Path) -> None:
    src = tmp_path / "issue.json"
    src.write_text(json.dumps(GH_CLI))
    import_file("github-issue", src, tmp_path / "a.zip")
    import_file("github-issue", src, tmp_path / "b.zip")
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()


def test_deeply_nested_json_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "deep.json"
    src.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    code, out = _json(["import", "github-issue", str(src), "-o", str(tmp_path / "p.zip")])
    assert (code, out["error"]["code"]) == (1, "intake.invalid_json")
    assert not (tmp_path / "p.zip").exists()


def test_every_format_of_the_table_has_its_command_parser_and_docs_row() -> None:
    """The import formats are one table (intake/formats.py): the CLI's commands, the
    parser lookup, the importers and docs/intake-format.md follow it."""
    from viano_bug_analysis.intake import FORMATS, IMPORT_FORMATS, parser_for

    docs = (Path(__file__).resolve().parents[2] / "docs" / "intake-format.md").read_text()
    help_text = runner.invoke(app, ["import", "--help"]).output
    assert IMPORT_FORMATS == tuple(FORMATS)
    for fmt in FORMATS.values():
        assert parser_for(fmt.name) is fmt.parse
        assert fmt.command in help_text
        assert f"| `{fmt.name}` |" in docs
        assert f"`viano import {fmt.command} FILE -o OUT`" in docs
    with pytest.raises(IntakeError) as info:
        parser_for("yaml")
    assert info.value.code == "intake.unknown_format"
