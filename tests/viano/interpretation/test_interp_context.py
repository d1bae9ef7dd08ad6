"""PromptBuilder: deterministic, bounded context; aliases scoped; unread stays unread."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest
from interp_support import (
    BASIC_INTAKE,
    CASE_ID,
    EXTRA_MEMBERS,
    PACKAGE_ID,
    built_store,
    prepared_context,
)

from viano_bug_analysis.analysis import (
    InterpretationError,
    InterpretationLimits,
    PromptBuilder,
)
from viano_bug_analysis.analysis.case_access import verify_built_case
from viano_bug_analysis.analysis.prompt_builder import PROMPT_VERSION, system_prompt
from viano_bug_analysis.case import CaseBuilderLimits


def test_defaults_match_the_specification() -> None:
    limits = InterpretationLimits()
    assert limits.max_case_bytes == 8 * 1024 * 1024
    assert limits.max_context_bytes == 512 * 1024
    assert limits.max_catalogue_entries == 2048
    assert limits.max_output_bytes == 2 * 1024 * 1024
    assert limits.max_markdown_bytes == 2 * 1024 * 1024


def test_context_and_request_are_deterministic(tmp_path: Path) -> None:
    one = prepared_context(built_store(tmp_path / "a"))
    two = prepared_context(built_store(tmp_path / "b"))
    assert one.context_bytes == two.context_bytes
    assert one.context_sha256 == two.context_sha256
    builder = PromptBuilder()
    r1, r2 = builder.request(one, 4096), builder.request(two, 4096)
    assert one.request_fingerprint(r1) == two.request_fingerprint(r2)
    assert r1.prompt_version == PROMPT_VERSION == "case_interpretation_v1"
    assert r1.messages[0].content == system_prompt().text


def test_record_ids_kept_and_aliases_scoped_to_the_case_hash(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    context = prepared_context(store)
    with store.current(CASE_ID, PACKAGE_ID).open() as reader:
        case = json.loads(reader.read(reader.require_manifest().pointers["canonical_case"]))
    entries = context.context["catalogue"]
    assert len(entries) == len(case["records"])
    for index, (entry, record) in enumerate(zip(entries, case["records"], strict=True)):
        assert entry["pointer"] == f"/records/{index}"
        if record["id"][0] in "OCTEFR":
            assert entry["id"] == record["id"]
        assert entry.get("record_id", entry["id"]) == record["id"]
    scope = context.context["alias_scope"]
    assert scope["case_sha256"] == context.context["case_sha256"]
    assert {e["id"][0] for e in entries} >= set("BSOECTFNQX")


def test_unread_payloads_stay_unread(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    context = prepared_context(store)
    text = context.context_bytes.decode("utf-8")
    assert "save failed" not in text  # the log's content never enters the context
    x_entries = [e for e in context.context["catalogue"] if e["id"].startswith("X")]
    assert x_entries and all(e["unread"] and not e["inline"] for e in x_entries)
    assert any(e["data"].get("member") == "original/server.log" for e in x_entries)
    log_fact = next(
        e for e in context.context["catalogue"] if e["data"].get("name") == "server_log"
    )
    assert log_fact["unread"] and not log_fact["inline"]
    assert log_fact["data"]["value_ref"].startswith("X")
    assert not context.catalogue.is_local_inline_fact(log_fact["id"])


def test_inline_facts_and_comments_keep_authors_and_timestamps(tmp_path: Path) -> None:
    context = prepared_context(built_store(tmp_path))
    comment = context.catalogue.get("C0001")
    assert comment is not None
    assert (comment["author"], comment["timestamp"]) == ("tester-b", "2024-03-02T09:00:00Z")
    fact = next(e for e in context.catalogue.entries if e["data"].get("name") == "app_version")
    assert fact["inline"] and fact["origin"] == "original" and fact["author"] == "reporter-a"


def test_long_text_is_kept_whole_when_the_context_fits(tmp_path: Path) -> None:
    intake = copy.deepcopy(BASIC_INTAKE)
    long_text = "word " * 2000
    intake["comments"] = [{"text": long_text, "author": "tester-b"}]
    context = prepared_context(built_store(tmp_path, intake))
    comment = context.catalogue.get("C0001")
    assert comment is not None
    assert comment["data"]["text"] == long_text  # 10000 characters, whole
    assert "shortened" not in comment
    assert all("shortened" not in e for e in context.context["catalogue"])


def test_only_an_oversized_context_shortens_its_longest_texts(tmp_path: Path) -> None:
    intake = copy.deepcopy(BASIC_INTAKE)
    intake["comments"] = [
        {"text": "alpha " * 3000, "author": "tester-b"},
        {"text": "beta " * 800, "author": "tester-c"},
        {"text": "A short comment stays as it is.", "author": "tester-d"},
    ]
    store = built_store(tmp_path, intake)
    whole = prepared_context(store)
    with store.current(CASE_ID, PACKAGE_ID).open() as reader:
        case = json.loads(reader.read(reader.require_manifest().pointers["canonical_case"]))
    limit = len(whole.context_bytes) - 10_000
    limits = InterpretationLimits(max_context_bytes=limit)
    cut = prepared_context(store, limits=limits)
    again = prepared_context(store, limits=limits)
    assert cut.context_bytes == again.context_bytes  # deterministic
    assert len(cut.context_bytes) <= limit
    shortened = [e for e in cut.context["catalogue"] if "shortened" in e]
    assert shortened and shortened[0]["id"] == "C0001"
    for entry in shortened:
        record = case["records"][int(entry["pointer"].rsplit("/", 1)[1])]
        for mark in entry["shortened"]:
            field = mark["field"].lstrip("/").split("/")
            original = record
            for token in field:
                original = original[int(token)] if isinstance(original, list) else original[token]
            assert mark["chars"] == len(original)
            assert mark["sha256"] == hashlib.sha256(original.encode("utf-8")).hexdigest()
            kept = entry["data"]
            for token in field:
                kept = kept[int(token)] if isinstance(kept, list) else kept[token]
            assert kept.endswith(f" [cut: {len(original)} characters in all]")
            assert original.startswith(kept[: kept.rindex(" [cut: ")])
    short = next(
        e for e in cut.context["catalogue"] if e["data"].get("text", "").startswith("A short")
    )
    assert "shortened" not in short
    assert short["data"]["text"] == "A short comment stays as it is."
    # everything that is not shortened is the same as in the whole context
    for before, after in zip(whole.context["catalogue"], cut.context["catalogue"], strict=True):
        if "shortened" not in after:
            assert before == after


def _case(tmp_path: Path, intake: dict | None = None):  # type: ignore[no-untyped-def]
    store = built_store(tmp_path, intake)
    with store.current(CASE_ID, PACKAGE_ID).open() as reader:
        return verify_built_case(
            reader, CASE_ID, PACKAGE_ID, InterpretationLimits(), CaseBuilderLimits()
        )


@pytest.mark.parametrize(
    ("limits", "code"),
    [
        (InterpretationLimits(max_context_bytes=2000), "interpretation.limit.max_context_bytes"),
        (
            InterpretationLimits(max_catalogue_entries=5),
            "interpretation.limit.max_catalogue_entries",
        ),
    ],
)
def test_bounded_context(tmp_path: Path, limits: InterpretationLimits, code: str) -> None:
    case = _case(tmp_path)
    with pytest.raises(InterpretationError) as info:
        PromptBuilder(limits).prepare(case)
    assert info.value.code == code


def test_case_larger_than_the_limit_is_refused_before_reading(tmp_path: Path) -> None:
    store = built_store(tmp_path)
    with (
        store.current(CASE_ID, PACKAGE_ID).open() as reader,
        pytest.raises(InterpretationError) as info,
    ):
        verify_built_case(
            reader,
            CASE_ID,
            PACKAGE_ID,
            InterpretationLimits(max_case_bytes=100),
            CaseBuilderLimits(),
        )
    assert info.value.code == "interpretation.limit.max_case_bytes"


def test_extra_members_are_metadata_only(tmp_path: Path) -> None:
    extra = dict(EXTRA_MEMBERS)
    extra["original/db-dump.sql"] = b"INSERT INTO secrets VALUES ('do-not-read');\n"
    store = built_store(tmp_path, extra=extra)
    text = prepared_context(store).context_bytes.decode("utf-8")
    assert "do-not-read" not in text and "original/db-dump.sql" in text
