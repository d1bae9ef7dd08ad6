"""Real public bug reports: every record imports and builds; five are checked by hand.

Data: ../shared/data/bug_reports (see SOURCES.md there), or REAL_DATA_DIR.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from viano_bug_analysis.case import CaseBuilder, load_canonical_case
from viano_bug_analysis.intake import import_file
from viano_bug_analysis.packages import PackageReader, PackageStore

pytestmark = pytest.mark.realdata

FILES = [
    ("github-issue", "bug_reports/inex_bug/msrv3_closed.subset.jsonl", 180),
    ("bugzilla", "bug_reports/bugbug/bugs.json", 58),
    ("github-issue", "bug_reports/bugbug/github_webcompat_web-bugs_issues.subset.json", 20),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Import every record of every file, add and build it once for the module."""
    from tests_conftest_shim import real_data

    root = real_data()
    tmp = tmp_path_factory.mktemp("real")
    store = PackageStore.init(tmp / "store")
    builder = CaseBuilder(store)
    cases: dict[str, dict[str, Any]] = {}
    lines: dict[tuple[str, int], str] = {}
    for fmt, rel, expected in FILES:
        results = import_file(fmt, root / rel, tmp / rel.replace("/", "_"))
        assert len(results) == expected
        raw_lines = (root / rel).read_bytes().split(b"\n")
        for r in results:
            store.add(r.path)
            result = builder.build(r.case_id, r.package_id)
            assert result.status == "built"
            with store.current(r.case_id, r.package_id).open() as reader:
                m = reader.require_manifest()
                case = load_canonical_case(reader.read(m.pointers["canonical_case"]))
                # the original member is the record's line, byte for byte
                assert r.line is not None
                assert reader.read(r.member) == raw_lines[r.line - 1].rstrip(b"\r")
            cases[r.case_id] = case
            lines[(rel, r.line)] = r.case_id
    return {"store": store, "cases": cases, "lines": lines}


def _kind(case: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for r in case["records"] if r["kind"] == kind]


def _case(built: dict[str, Any], rel: str, line: int) -> dict[str, Any]:
    return built["cases"][built["lines"][(rel, line)]]


INEX = "bug_reports/inex_bug/msrv3_closed.subset.jsonl"
BZ = "bug_reports/bugbug/bugs.json"
WEBCOMPAT = "bug_reports/bugbug/github_webcompat_web-bugs_issues.subset.json"


def test_every_record_builds(built: dict[str, Any]) -> None:
    assert len(built["cases"]) == 258
    for case in built["cases"].values():
        assert sum(1 for r in case["records"] if r["kind"] == "expected_behavior_completeness") == 1
        assert case["records"][0]["kind"] == "report"


def test_reporter_hypothesis_versions_and_missing_expectation(built: dict[str, Any]) -> None:
    """eslint-plugin-react #1717: the reporter suspects a rule interaction; no expectation."""
    case = _case(built, INEX, 1)
    assert case["case_id"] == "gh-jsx-eslint-eslint-plugin-react-1717"
    (title,) = [b for b in _kind(case, "report") if b["role"] == "title"]
    assert title["text"].startswith("Spaces get condensed by --fix")
    hyps = _kind(case, "tester_hypothesis")
    reporter = [t for t in hyps if t["provenance"]["author"] == "user_5"]
    assert reporter and reporter[0]["text"].startswith("I think I've traced down")
    assert reporter[0]["provenance"]["json_pointer"] == "/body"
    assert any(t["provenance"]["json_pointer"] == "/comments/0/body" for t in hyps)
    versions = {n["value"] for n in _kind(case, "entity") if n["entity_type"] == "version"}
    assert {"eslint@4.18.2", "eslint-plugin-react@7.7.0"} <= versions
    assert case["completeness"]["expected_behavior"] == "missing"
    assert _kind(case, "expectation") == []
    assert "missing_expected_behavior" in {d["code"] for d in _kind(case, "data_quality")}


def test_a_bare_i_think_is_no_tester_hypothesis(built: dict[str, Any]) -> None:
    """eslint-plugin-react #1717, third comment: a claim ("It looks like ... is
    erroneously warning ...") followed by a bare "I think 🤔". Only the claim is a T
    record; the bare hint is not."""
    case = _case(built, INEX, 1)
    raw = json.loads((_data_root() / INEX).read_bytes().split(b"\n")[0].rstrip(b"\r"))
    comment = raw["comments"][2]["body"]
    assert "I think \U0001f914" in comment  # the data holds the bare hint
    from_comment = [
        t
        for t in _kind(case, "tester_hypothesis")
        if t["provenance"]["json_pointer"] == "/comments/2/body"
    ]
    assert [t["text"][:13] for t in from_comment] == ["It looks like"]
    assert all("\U0001f914" not in t["text"] for t in _kind(case, "tester_hypothesis"))


def test_sentence_records_are_whole_and_mention_only_their_sources_entities(
    built: dict[str, Any],
) -> None:
    """A T or implied E record is a sentence of its source record's text, not on a quoted
    line: the source holds it at its span, and every entity it mentions is one its
    source mentions too (before sentences ended at any dot, links in real comments were
    cut into entities such as ``https://github``; 44 real T records were quotes)."""
    sentences = 0
    for case in built["cases"].values():
        by_id = {r["id"]: r for r in case["records"]}
        mentioned_by: dict[str, set[str]] = {}
        for n in _kind(case, "entity"):
            for rid in n["mentions"]:
                mentioned_by.setdefault(rid, set()).add(n["value"])
        for rec in case["records"]:
            source_id = rec.get("derived_from")
            if source_id is None:
                continue
            sentences += 1
            source = by_id[source_id]
            assert rec["text"] in source["text"]
            span = rec["provenance"].get("span")
            if (
                span is not None
                and "unread_refs" not in source
                and "span" not in source["provenance"]
            ):
                assert source["text"][span[0] : span[1]] == rec["text"]
            assert mentioned_by.get(rec["id"], set()) <= mentioned_by.get(source_id, set())
            assert not re.search(r"https?://[\w-]+$", rec["text"]), rec["text"]
            at = source["text"].find(rec["text"])
            line = source["text"][source["text"].rfind("\n", 0, at) + 1 :]
            assert not line.lstrip(" \t").startswith(">"), rec["text"]  # not a quote
    assert sentences > 300


def test_stack_trace_in_body_stays_unread(built: dict[str, Any]) -> None:
    """eslint-plugin-react #1021: a TypeError stack trace in the body, no expectation."""
    case = _case(built, INEX, 21)
    assert case["case_id"] == "gh-jsx-eslint-eslint-plugin-react-1021"
    traces = [x for x in _kind(case, "unread_reference") if x["ref_kind"] == "stack_trace"]
    assert traces and traces[0]["provenance"]["json_pointer"] == "/body"
    body = json.loads((_data_root() / INEX).read_bytes().split(b"\n")[20].rstrip(b"\r"))["body"]
    start, end = traces[0]["provenance"]["span"]
    assert hashlib.sha256(body[start:end].encode()).hexdigest() == traces[0]["sha256"]
    assert "no-array-index-key.js:146" in body[start:end]
    # the title quotes the first frame; the trace's deeper frames are inline nowhere
    serialized = json.dumps([r.get("text") for r in case["records"]])
    assert "no-array-index-key.js:145:28" not in serialized
    assert "estraverse.js:397" not in serialized
    (obs,) = [o for o in _kind(case, "observation") if traces[0]["id"] in o.get("unread_refs", [])]
    assert f"[unread {traces[0]['id']}: stack_trace" in obs["text"]
    assert case["completeness"]["expected_behavior"] == "missing"


def test_explicit_expected_behaviour_in_github_issue(built: dict[str, Any]) -> None:
    """got #1287: the issue template states the expected behaviour."""
    case = _case(built, INEX, 86)
    (exp,) = [e for e in _kind(case, "expectation") if e["explicit"]]
    assert exp["text"].startswith("Request should either timeout or give correct response")
    assert exp["provenance"]["json_pointer"] == "/body"
    assert case["completeness"]["expected_behavior"] == "complete"


def test_bugzilla_steps_actual_expected_and_attachment(built: dict[str, Any]) -> None:
    """Bug 1388990: Back button disabled after customizing the toolbar."""
    case = built["cases"]["bz-1388990"]
    steps = _kind(case, "step")
    assert len(steps) == 4 and steps[0]["text"] == "Go to https://en.wikipedia.org/"
    assert all(s["provenance"]["json_pointer"] == "/comments/0/text" for s in steps)
    (obs,) = _kind(case, "observation")
    assert "becomes inactive" in obs["text"]
    (exp,) = _kind(case, "expectation")
    assert "should remain active" in exp["text"] and exp["explicit"]
    assert case["completeness"]["expected_behavior"] == "complete"
    comment_hyps = [
        t
        for t in _kind(case, "tester_hypothesis")
        if t["provenance"]["json_pointer"] == "/comments/9/text"
    ]
    assert any(t["text"].startswith("I think if we make a solution") for t in comment_hyps)
    facts = {f["name"]: f for f in _kind(case, "fact")}
    assert facts["component"]["value"] == "Toolbars and Customization"
    att = facts["attachment 8896569"]
    assert att["inline"] is False
    x = next(r for r in case["records"] if r["id"] == att["value_ref"])
    assert x["unread"] and x["media_type"] == "text/x-review-board-request"


def test_webcompat_report_without_expected_behaviour(built: dict[str, Any]) -> None:
    """webcompat: the template has steps but no expected-behaviour field."""
    case = _case(built, WEBCOMPAT, 1)
    assert case["completeness"]["expected_behavior"] == "missing"
    facts = {f["name"]: f["value"] for f in _kind(case, "fact")}
    assert facts["Browser / Version"] == "Firefox iOS 33.0"
    assert facts["browser"] == "Firefox iOS 33.0"  # from the HTML comment header
    assert _kind(case, "step")
    assert _kind(case, "comment") == []  # the REST object carries only a comment count


def test_supplied_original_is_byte_identical_after_build(built: dict[str, Any]) -> None:
    store: PackageStore = built["store"]
    gens = store.generations("bz-1388990", "supplied")
    first = store.generation("bz-1388990", "supplied", gens[0]).path
    last = store.current("bz-1388990", "supplied").path
    with PackageReader(first) as a, PackageReader(last) as b:
        for name in a.original_files():
            assert a.read(name) == b.read(name)


def _data_root() -> Path:
    from tests_conftest_shim import real_data

    return real_data()


def test_shortened_contexts_match_the_reference_search(built: dict[str, Any]) -> None:
    """Every real case's context, under limits just at and just above its size with
    its texts cut at 2000, 500 and 100 characters, is the straightforward search's bytes
    (the fast search computes sizes instead)."""
    from shortening_reference import built_case, fast_shortened, reference_shortened, whole_context

    from viano_bug_analysis.packages import canonical_json

    compared = 0
    for document in built["cases"].values():
        case = built_case(canonical_json(document), document)
        context = whole_context(case)
        whole = len(canonical_json(context))
        for cap in (2000, 500, 100):
            at_cap = len(reference_shortened(context, 1 << 40, cap=cap) or b"")
            for limit in (at_cap, at_cap + 7):
                if limit >= whole:
                    continue
                got = fast_shortened(case, limit)
                assert got == reference_shortened(context, limit)
                assert got is None or len(got) <= limit
                compared += got is not None
    # (None: even every text cut to nothing does not fit, and both searches refuse)
    assert compared >= 10  # the long real reports are shortened under these limits


def test_computed_context_sizes_are_exact(built: dict[str, Any]) -> None:
    """For every real case and several caps, the size the search computes is the length
    of the serialised shortened context."""
    from shortening_reference import built_case, reference_shortened, whole_context

    from viano_bug_analysis.analysis import shortening
    from viano_bug_analysis.packages import canonical_json

    for document in built["cases"].values():
        context = whole_context(built_case(canonical_json(document), document))
        size, _ = shortening._size_function(len(canonical_json(context)), context["catalogue"])
        for cap in (0, 1, 7, 40, 300, 2000, 50_000):
            assert size(cap) == len(reference_shortened(context, 1 << 40, cap=cap) or b"")
