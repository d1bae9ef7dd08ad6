"""CaseBuilder: records, provenance, revisions, idempotence, limits, bad intake."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from viano_helpers import INTAKE, intake_package, members

from viano_bug_analysis.case import (
    CaseBuilder,
    CaseBuilderLimits,
    load_canonical_case,
    raw_input_fingerprint,
)
from viano_bug_analysis.errors import IntakeError, LimitExceeded
from viano_bug_analysis.packages import PackageReader, PackageStore, canonical_json


def _case(store: PackageStore, case_id: str = "demo-case") -> dict[str, Any]:
    with store.current(case_id, "supplied").open() as r:
        return load_canonical_case(r.read(r.require_manifest().pointers["canonical_case"]))


def _by_kind(case: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for r in case["records"] if r["kind"] == kind]


def test_native_intake_records_and_provenance(store: PackageStore, tmp_path: Path) -> None:
    store.add(intake_package(tmp_path / "in.zip"))
    result = CaseBuilder(store).build("demo-case", "supplied")
    assert (result.status, result.analysis_revision, result.package_generation) == ("built", 1, 2)
    case = _case(store)
    ids = [r["id"] for r in case["records"]]
    assert len(ids) == len(set(ids))
    titles = [r for r in _by_kind(case, "report") if r["role"] == "title"]
    assert titles[0]["id"] == "B0001"
    assert titles[0]["provenance"]["json_pointer"] == "/title"
    assert [s["text"] for s in _by_kind(case, "step")] == ["Open /reports", "Click Export"]
    (exp,) = _by_kind(case, "expectation")
    assert exp["explicit"] is True and "CSV file" in exp["text"]
    assert exp["provenance"]["author"] == "rita"
    (q,) = _by_kind(case, "expected_behavior_completeness")
    assert (q["id"], q["value"], q["cites"]) == ("Q0001", "complete", [exp["id"]])
    hyps = _by_kind(case, "tester_hypothesis")
    assert {h["provenance"]["author"] for h in hyps} == {"tom"}
    assert all(h["provenance"]["origin"] == "tester" for h in hyps)
    assert any("export endpoint times out" in h["text"] for h in hyps)
    facts = {f["name"]: f for f in _by_kind(case, "fact")}
    assert facts["http_status"]["value"] == "504" and facts["http_status"]["inline"]
    ref = facts["server log"]
    assert ref["inline"] is False and "value" not in ref
    x = next(r for r in case["records"] if r["id"] == ref["value_ref"])
    log = b"ERROR worker timeout\n" * 50
    assert x["unread"] and x["size"] == len(log)
    assert x["sha256"] == hashlib.sha256(log).hexdigest()
    assert "ERROR worker" not in json.dumps(case)  # the attachment stays unread
    research = [
        r for r in _by_kind(case, "unread_reference") if r["ref_kind"] == "external_research"
    ]
    assert research[0]["provenance"]["origin"] == "external_research"
    codes = {d["code"] for d in _by_kind(case, "data_quality")}
    assert "empty_comment" in codes and "missing_expected_behavior" not in codes
    entities = {(n["entity_type"], n["value"]) for n in _by_kind(case, "entity")}
    assert ("endpoint", "https://example.org/csv-spec") not in entities  # unread reference
    assert any(t == "version" and "2.3.1" in v for t, v in entities)


def test_checkpoint_pointer_and_hashes(store: PackageStore, tmp_path: Path) -> None:
    store.add(intake_package(tmp_path / "in.zip"))
    CaseBuilder(store).build("demo-case", "supplied")
    with store.current("demo-case", "supplied").open() as r:
        m = r.require_manifest()
        assert m.phase == "CASE_BUILT" and m.analysis_revision == 1
        data = r.read(m.pointers["canonical_case"])
        cp_entry = m.latest_checkpoint("case-built")
        assert cp_entry is not None and cp_entry.analysis_revision == 1
        cp = json.loads(r.read(cp_entry.path))
        assert cp["case_sha256"] == hashlib.sha256(data).hexdigest()
        assert cp["raw_input_fingerprint"] == raw_input_fingerprint(r)
        assert cp["canonical_case"] == m.pointers["canonical_case"]
        assert canonical_json(json.loads(data)) == data  # canonical serialisation


def test_same_inputs_no_new_revision_changed_inputs_new_revision(
    store: PackageStore, tmp_path: Path
) -> None:
    store.add(intake_package(tmp_path / "in.zip"))
    builder = CaseBuilder(store)
    first = builder.build("demo-case", "supplied")
    again = builder.build("demo-case", "supplied")
    assert again.status == "unchanged" and again.package_generation == first.package_generation
    rev1 = members(store.current("demo-case", "supplied").path)
    changed = copy.deepcopy(INTAKE)
    changed["expected_behavior"] = None
    status = store.add(intake_package(tmp_path / "in2.zip", changed), replace_inputs=True)[1]
    assert status == "resupplied"
    second = builder.build("demo-case", "supplied")
    assert (second.status, second.analysis_revision) == ("built", 2)
    after = members(store.current("demo-case", "supplied").path)
    for name, data in rev1.items():
        if name.startswith("analysis/revisions/0001/"):
            assert after[name] == data  # old revisions never change
    case = _case(store)
    assert case["completeness"]["expected_behavior"] == "missing"
    assert "missing_expected_behavior" in {d["code"] for d in _by_kind(case, "data_quality")}


def test_build_is_deterministic(tmp_path: Path) -> None:
    hashes = []
    for i in range(2):
        store = PackageStore.init(tmp_path / f"s{i}")
        store.add(intake_package(tmp_path / f"in{i}.zip"))
        hashes.append(CaseBuilder(store).build("demo-case", "supplied").case_sha256)
    assert hashes[0] == hashes[1]


def test_long_log_in_text_becomes_unread_reference(store: PackageStore, tmp_path: Path) -> None:
    intake = copy.deepcopy(INTAKE)
    trace = "\n".join(f"    at fn{i} (src/mod{i}.js:{i}:7)" for i in range(60))
    intake["observations"] = [f"It crashes:\n```\nTypeError: x is undefined\n{trace}\n```\nEnd."]
    store.add(intake_package(tmp_path / "in.zip", intake))
    CaseBuilder(store).build("demo-case", "supplied")
    case = _case(store)
    (obs,) = _by_kind(case, "observation")
    assert "fn59" not in obs["text"] and obs["unread_refs"]
    x = next(r for r in case["records"] if r["id"] == obs["unread_refs"][0])
    assert x["ref_kind"] == "stack_trace" and x["line_count"] >= 60
    assert x["provenance"]["json_pointer"] == "/observations/0"
    start, end = x["provenance"]["span"]
    text = obs_source_text = intake["observations"][0]
    assert text[start:end].startswith("```") and obs_source_text[start:end].endswith("```")
    assert x["sha256"] == hashlib.sha256(text[start:end].encode()).hexdigest()


@pytest.mark.parametrize(
    ("limits", "code"),
    [
        (CaseBuilderLimits(max_records=5), "limit.max_records"),
        (CaseBuilderLimits(max_raw_input_bytes=100), "limit.max_raw_input_bytes"),
        (CaseBuilderLimits(max_record_text_bytes=20), "limit.max_record_text_bytes"),
        (CaseBuilderLimits(max_original_members=1), "limit.max_original_members"),
        (CaseBuilderLimits(max_case_bytes=1000), "limit.max_case_bytes"),
    ],
)
def test_limits_raise_typed_errors_and_write_nothing(
    store: PackageStore, tmp_path: Path, limits: CaseBuilderLimits, code: str
) -> None:
    store.add(intake_package(tmp_path / "in.zip"))
    with pytest.raises(LimitExceeded) as info:
        CaseBuilder(store, limits).build("demo-case", "supplied")
    assert info.value.code == code
    assert store.generations("demo-case", "supplied") == [1]


@pytest.mark.parametrize(
    ("intake", "code"),
    [
        (b"{not json", "intake.invalid_json"),
        (b"\xff\xfe", "intake.invalid_json"),
        (b"[]", "intake.invalid_json"),
        (json.dumps({"intake_format": "viano-intake/1"}).encode(), "intake.invalid"),
        (json.dumps({**INTAKE, "surprise": 1}).encode(), "intake.invalid"),
        (
            json.dumps(
                {**INTAKE, "facts": [{"name": "x", "value": "1", "value_ref": {}}]}
            ).encode(),
            "intake.invalid",
        ),
        (json.dumps({**INTAKE, "steps": [3]}).encode(), "intake.invalid"),
    ],
)
def test_invalid_intake_is_refused_and_nothing_written(
    store: PackageStore, tmp_path: Path, intake: bytes, code: str
) -> None:
    from viano_helpers import write_package

    store.add(write_package(tmp_path / "in.zip", {"original/intake.json": intake}))
    with pytest.raises(IntakeError) as info:
        CaseBuilder(store).build("demo-case", "supplied")
    assert info.value.code == code
    assert store.generations("demo-case", "supplied") == [1]
    with PackageReader(store.current("demo-case", "supplied").path) as r:
        assert r.require_manifest().analysis_revision == 0


def test_new_revision_drops_interpretation_pointers(store: PackageStore, tmp_path: Path) -> None:
    from viano_bug_analysis.packages import PackageWriter

    store.add(intake_package(tmp_path / "in.zip"))
    CaseBuilder(store).build("demo-case", "supplied")
    with store.lock("demo-case", "supplied") as op, op.current().open() as r:
        w = PackageWriter(r)
        w.add_bytes("analysis/interpretations/0001/context.json", b"{}")
        w.set_pointer("interpretation_context", "analysis/interpretations/0001/context.json")
        w.update_manifest(phase="INTERPRETING_CASE")
        op.publish(w)
    changed = copy.deepcopy(INTAKE)
    changed["title"] = "A different title"
    store.add(intake_package(tmp_path / "in2.zip", changed), replace_inputs=True)
    CaseBuilder(store).build("demo-case", "supplied")
    with store.current("demo-case", "supplied").open() as r:
        m = r.require_manifest()
        assert set(m.pointers) == {"canonical_case"}
        assert "analysis/interpretations/0001/context.json" in r
        assert m.analysis_revision == 2


def test_build_streams_large_attachments(store: PackageStore, tmp_path: Path) -> None:
    """Peak traced memory stays well under twice the largest member (16 MiB attachment)."""
    import os
    import tracemalloc

    big = os.urandom(16 << 20)
    from viano_helpers import write_package

    pkg = tmp_path / "big.zip"
    write_package(
        pkg,
        {"original/intake.json": json.dumps(INTAKE).encode(), "original/attachments/core.bin": big},
    )
    del big
    store.add(pkg)
    tracemalloc.start()
    try:
        CaseBuilder(store).build("demo-case", "supplied")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * (16 << 20), peak
    case = _case(store)
    (x,) = [r for r in case["records"] if r.get("member") == "original/attachments/core.bin"]
    with PackageReader(store.current("demo-case", "supplied").path) as r:
        assert x["sha256"] == r.sha256("original/attachments/core.bin")


def test_dots_inside_urls_versions_and_file_names_do_not_end_a_sentence(
    store: PackageStore, tmp_path: Path
) -> None:
    """A sentence ends at a newline or at ``.!?`` followed by white space or the end, so a
    hypothesis quoting a link, a version or a file name stays whole, and its T record
    mentions the same entities as the comment it comes from."""
    url = "https://example.org/acme/editor/blob/main/src/save.ts#L40"
    first = f"I think the save in [this line]({url}) drops the draft."
    second = "Maybe the TypeError from Editor 2.4.1 in save.ts is the cause?!"
    intake = {
        "intake_format": "viano-intake/1",
        "case_id": "cut-case",
        "title": "Save loses the draft",
        "comments": [{"author": "tom", "text": f"{first} {second}\nIt works in 2.3.0."}],
    }
    store.add(intake_package(tmp_path / "in.zip", intake))
    CaseBuilder(store).build("cut-case", "supplied")
    case = _case(store, "cut-case")
    (comment,) = _by_kind(case, "comment")
    hyps = _by_kind(case, "tester_hypothesis")
    assert [h["text"] for h in hyps] == [first, second]
    assert [h["provenance"]["span"] for h in hyps] == [
        [0, len(first)],
        [len(first) + 1, len(first) + 1 + len(second)],
    ]
    mentions = {n["value"]: n["mentions"] for n in _by_kind(case, "entity")}
    assert mentions[url] == [comment["id"], hyps[0]["id"]]
    assert mentions["TypeError"] == [comment["id"], hyps[1]["id"]]
    assert mentions["Editor 2.4.1"] == [comment["id"], hyps[1]["id"]]
    assert mentions["save.ts"] == [comment["id"], hyps[1]["id"]]
    assert mentions["2.3.0"] == [comment["id"]]
    assert "https://example" not in mentions


def test_quoted_lines_are_no_hypotheses_of_the_one_who_quotes(
    store: PackageStore, tmp_path: Path
) -> None:
    """A reply that quotes a hypothesis (Markdown ``>``, Bugzilla's "In reply to") does not
    make it the replier's: only the quoting comment's own suspicion is a T record, and
    the quoted one stays the T record of the comment that stated it."""
    stated = "I think the worker queue drops the export job."
    reply = "Maybe the retry timer is the cause of the lost job."
    intake = {
        "intake_format": "viano-intake/1",
        "case_id": "quote-case",
        "title": "Export never finishes",
        "comments": [
            {"author": "ana", "text": stated},
            {"author": "ben", "text": f"(In reply to ana)\n> {stated}\n  > > {stated}\n{reply}"},
        ],
    }
    store.add(intake_package(tmp_path / "in.zip", intake))
    CaseBuilder(store).build("quote-case", "supplied")
    case = _case(store, "quote-case")
    hyps = _by_kind(case, "tester_hypothesis")
    assert [(h["text"], h["provenance"]["author"]) for h in hyps] == [
        (stated, "ana"),
        (reply, "ben"),
    ]


def test_a_question_about_the_intended_behaviour_states_none(
    store: PackageStore, tmp_path: Path
) -> None:
    """A reporter's question with an expectation word ("Is this expected?") gives no E
    record; a statement of the same report does."""
    intake = {
        "intake_format": "viano-intake/1",
        "case_id": "question-case",
        "title": "Export writes an empty file",
        "observations": ["The export file is empty. Is this expected? Should I add a sample?"],
    }
    store.add(intake_package(tmp_path / "in.zip", intake))
    CaseBuilder(store).build("question-case", "supplied")
    case = _case(store, "question-case")
    assert _by_kind(case, "expectation") == []
    assert case["completeness"]["expected_behavior"] == "missing"
    stated = copy.deepcopy(intake)
    stated["case_id"] = "stated-case"
    stated["observations"] = ["The export file is empty. It should hold every row."]
    store.add(intake_package(tmp_path / "in2.zip", stated))
    CaseBuilder(store).build("stated-case", "supplied")
    (exp,) = _by_kind(_case(store, "stated-case"), "expectation")
    assert exp["text"] == "It should hold every row."


def test_an_expected_section_of_template_questions_states_no_expectation(
    store: PackageStore, tmp_path: Path
) -> None:
    intake = {
        "intake_format": "viano-intake/1",
        "case_id": "template-case",
        "title": "Crash on start",
        "observations": ["The app crashes on start."],
        "expected_behavior": "Which versions are you using? Did this work before?",
    }
    store.add(intake_package(tmp_path / "in.zip", intake))
    CaseBuilder(store).build("template-case", "supplied")
    case = _case(store, "template-case")
    assert _by_kind(case, "expectation") == []
    (empty,) = [d for d in _by_kind(case, "data_quality") if d["code"] == "empty_expected_behavior"]
    assert "only questions" in empty["text"]


def test_as_expected_states_no_intended_behaviour(store: PackageStore, tmp_path: Path) -> None:
    intake = {
        "intake_format": "viano-intake/1",
        "case_id": "works-case",
        "title": "Cached files",
        "observations": [
            "Compression works as expected. Scripts are not cached. Files should be cached."
        ],
    }
    store.add(intake_package(tmp_path / "in.zip", intake))
    CaseBuilder(store).build("works-case", "supplied")
    (exp,) = _by_kind(_case(store, "works-case"), "expectation")
    assert exp["text"] == "Files should be cached."
