"""Regression on a real public bug report with a long log and no stated expected
behaviour (../shared/data/bug_reports/inex_bug, issue 6255 of ember-cli): imported,
built and interpreted with a scripted provider; the supplied package is preserved byte
for byte."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from interp_support import answer_for, prepared_context, reply, scripted_gateway

from viano_bug_analysis.analysis import CaseInterpreter, OutcomeStatus
from viano_bug_analysis.case import CaseBuilder
from viano_bug_analysis.intake.importers import import_file
from viano_bug_analysis.packages import PackageReader, PackageStore, PackageWriter

pytestmark = pytest.mark.realdata
ISSUE_NUMBER = 6255
REPEATED_LOG_LINE = "Possible EventEmitter memory leak detected. 11 error listeners added"


def _data_dir() -> Path:
    env = os.environ.get("REAL_DATA_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[4] / "shared" / "data"


def _issue_line() -> bytes:
    path = _data_dir() / "bug_reports" / "inex_bug" / "msrv3_closed.subset.jsonl"
    if not path.exists():
        pytest.skip(f"real data not found at {path} (set REAL_DATA_DIR)")
    for line in path.read_bytes().split(b"\n"):
        if line.strip() and json.loads(line)["number"] == ISSUE_NUMBER:
            return line
    pytest.skip(f"issue {ISSUE_NUMBER} is not in {path}")


async def test_real_report_with_long_log_and_no_expectation(tmp_path: Path) -> None:
    line = _issue_line()
    source = tmp_path / "issue-6255.json"
    source.write_bytes(line)
    imported = import_file("github-issue", source, tmp_path / "imported.zip")[0]
    # add a file the package format does not know; it must survive byte-identical
    supplied = tmp_path / "supplied.zip"
    unknown = {"vendor/notes.bin": bytes(range(256)) * 4}
    with PackageReader(imported.path) as reader:
        writer = PackageWriter.new(reader.require_manifest())
        for name in reader.names():
            if name != "manifest.json":
                writer.add_bytes(name, reader.read(name))
        for name, data in unknown.items():
            writer.add_bytes(name, data)
        with open(supplied, "wb") as out:
            writer.write(out)
    with PackageReader(supplied) as reader:
        supplied_members = {n: reader.read(n) for n in reader.names() if n != "manifest.json"}
    assert supplied_members[imported.member] == line

    store = PackageStore.init(tmp_path / "store")
    store.add(supplied)
    case_id, package_id = imported.case_id, imported.package_id
    CaseBuilder(store).build(case_id, package_id)
    context = prepared_context(store, case_id)
    catalogue = context.catalogue
    assert catalogue.completeness() in ("missing", "incomplete")
    # the long log in the body is one unread X entry (metadata only), not the issue-page X
    logs = [
        e
        for e in catalogue.entries
        if e["id"].startswith("X")
        and e["data"].get("ref_kind") in {"code", "log", "stack_trace"}
        and e["provenance"].get("json_pointer") == "/body"
        and e["data"].get("size", 0) > 30_000
    ]
    assert logs and all(e["unread"] and not e["inline"] for e in logs)
    assert line.count(REPEATED_LOG_LINE.encode()) > 40  # the raw report repeats it
    assert context.context_bytes.count(REPEATED_LOG_LINE.encode()) <= 1
    assert all("shortened" not in e for e in catalogue.entries)  # nothing was cut
    answer = answer_for(catalogue, summary="Installing ember-cli prints repeated warnings.")
    gateway, provider = scripted_gateway(reply(answer))
    result = await CaseInterpreter(store, gateway).interpret(case_id, package_id)
    assert result.status is OutcomeStatus.COMPLETED, result.violations
    assert len(provider.requests) == 1

    # the supplied ZIP itself is kept byte for byte as generation 1
    first = store.generation(case_id, package_id, 1)
    assert hashlib.sha256(first.path.read_bytes()).hexdigest() == (
        hashlib.sha256(supplied.read_bytes()).hexdigest()
    )
    final = store.current(case_id, package_id)
    with final.open() as reader:
        for name, data in supplied_members.items():
            assert reader.read(name) == data  # original/ and unknown files byte-identical
        wrapper = json.loads(reader.read(final.manifest.pointers["case_interpretation"]))
        markdown = reader.read(final.manifest.pointers["case_interpretation_summary"])
    assert wrapper["expected_behavior_status"]["completeness"] == catalogue.completeness()
    assert any("Q0001" in u["source_ids"] for u in wrapper["interpretation"]["unknowns"])
    assert b"Installing ember\\-cli prints repeated warnings\\." in markdown
