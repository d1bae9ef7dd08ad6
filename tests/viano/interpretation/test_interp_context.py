"""PromptBuilder: deterministic, bounded context; aliases scoped; unread stays unread."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from interp_support import (
    BASIC_INTAKE,
    CASE_ID,
    EXTRA_MEMBERS,
    PACKAGE_ID,
    built_store,
    prepared_context,
)
from shortening_reference import built_case, reference_context

from viano_bug_analysis.analysis import (
    InterpretationError,
    InterpretationLimits,
    PromptBuilder,
    prompt_builder,
)
from viano_bug_analysis.analysis.case_access import BackgroundSha256, verify_built_case
from viano_bug_analysis.analysis.prompt_builder import PROMPT_VERSION, system_prompt
from viano_bug_analysis.case import CaseBuilderLimits
from viano_bug_analysis.packages import canonical_json


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
    assert r1.prompt_version == PROMPT_VERSION == "case_interpretation_v1.1"
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


# The streamed context (prompt_builder._ContextStream): large cases are serialised and
# hashed in chunks while their records are projected; the bytes, hash, context and
# errors must be those of the straightforward build (shortening_reference).

_PROV = {"origin": "original", "member": "original/intake.json", "author": "a"}
_TEXTS = st.text(
    st.sampled_from(["a", " ", "é", "漢", "😀", '"', "\\", "\n", "\x01", "\u2028", "/"]),
    max_size=40,
)
_SCALARS = (
    _TEXTS
    | st.integers(-(2**70), 2**70)  # past 64 bits: the reference serialiser's
    | st.floats(allow_nan=False, allow_infinity=False)  # written by json.dumps
    | st.booleans()
    | st.none()
)
_KEYS = st.sampled_from(["text", "value", "name", "cites", "mentions", "steps", "é", "k"])
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def _documents(draw: st.DrawFn) -> dict[str, Any]:
    records: list[dict[str, Any]] = []
    letters = draw(st.lists(st.sampled_from("OCTBSNDEFX"), max_size=12))
    for n, letter in enumerate(letters, 1):
        record: dict[str, Any] = {"id": f"{letter}{n:04d}", "kind": "k", "provenance": _PROV}
        record.update(draw(st.dictionaries(_KEYS, _VALUES, max_size=3)))
        if records and draw(st.booleans()):
            record["cites"] = [records[0]["id"], "unknown"]
        records.append(record)
    q = {"id": "Q0001", "kind": "q", "value": "complete", "origins": ["original"]}
    records.insert(draw(st.integers(0, len(records))), dict(q, provenance=_PROV))
    return {"case_format": "c", "case_id": "c", "package_id": "p", "records": records}


def _streamed(chunk_bytes: int) -> contextlib.ExitStack:
    """Every case streamed, in chunks of one entry then about ``chunk_bytes``."""
    stack = contextlib.ExitStack()
    stack.enter_context(patch.object(prompt_builder, "STREAM_CASE_BYTES", 0))
    stack.enter_context(patch.object(prompt_builder, "_FIRST_CHUNK_ENTRIES", 1))
    stack.enter_context(patch.object(prompt_builder, "_CHUNK_BYTES", chunk_bytes))
    return stack


def _outcome(builder: PromptBuilder, case: Any) -> tuple[Any, ...]:
    try:
        prepared = builder.prepare(case)
    except Exception as exc:  # compared: type, message, code
        return ("error", type(exc), str(exc), getattr(exc, "code", None))
    return prepared.context, prepared.context_bytes, prepared.context_sha256


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=_documents(), chunk_bytes=st.integers(1, 400), data=st.data())
def test_streamed_context_is_the_reference(
    document: dict[str, Any], chunk_bytes: int, data: Any
) -> None:
    case = built_case(canonical_json(document), document)
    context, body, digest = reference_context(case)
    unlimited = PromptBuilder(InterpretationLimits(max_context_bytes=1 << 40))
    with (
        _streamed(chunk_bytes),
        patch.object(
            prompt_builder._ContextStream,
            "hexdigest",
            autospec=True,
            side_effect=prompt_builder._ContextStream.hexdigest,
        ) as streamed_digest,
    ):
        assert _outcome(unlimited, case) == (context, body, digest)
    assert streamed_digest.call_count == 1  # the hash came from the stream
    # under any limit (shortened or refused) the same outcome as without the stream
    limit = data.draw(st.integers(1, len(body) + 10), label="limit")
    limited = PromptBuilder(InterpretationLimits(max_context_bytes=limit))
    with _streamed(chunk_bytes):
        streamed = _outcome(limited, case)
    assert streamed == _outcome(limited, case)


@pytest.mark.parametrize(
    "bad",
    [
        float("nan"),  # canonical_json refuses it (ValueError)
        "\ud800",  # a lone surrogate: not UTF-8 (UnicodeEncodeError, with its position)
        {1.5: "x", "y": {2}},  # a set: not JSON (TypeError)
    ],
)
@pytest.mark.parametrize("with_q", [True, False])
@pytest.mark.parametrize("limit", [1 << 40, 5000])  # 5000: over it before the bad record
def test_streamed_context_fails_as_the_whole_did(bad: Any, with_q: bool, limit: int) -> None:
    records: list[dict[str, Any]] = [
        {"id": f"C{n:04d}", "kind": "comment", "text": "t" * 3000, "provenance": _PROV}
        for n in range(1, 6)
    ]
    records[3]["value"] = bad
    if with_q:
        records.append({"id": "Q0001", "kind": "q", "value": "complete", "provenance": _PROV})
    document = {"case_format": "c", "case_id": "c", "package_id": "p", "records": records}
    case = built_case(b"{}", document)
    builder = PromptBuilder(InterpretationLimits(max_context_bytes=limit))
    with _streamed(1):
        streamed = _outcome(builder, case)
    assert streamed[0] == "error"
    assert streamed == _outcome(builder, case)
    assert with_q or streamed[3] == "interpretation.case_invalid"  # checked first
    _no_hashing_threads_left()


def _no_hashing_threads_left() -> None:
    for _ in range(200):
        if not [t for t in threading.enumerate() if t.name == "viano-sha256"]:
            return
        time.sleep(0.01)
    raise AssertionError("a viano-sha256 thread is still running")


def test_background_sha256_hashes_pieces_in_order() -> None:
    pieces = [b"{", b"x" * 5000, b",", memoryview(b"[" + b"y" * 70000 + b"]")[1:-1], b"}"]
    hasher = BackgroundSha256()
    hasher.feed(pieces[0], pieces[1])
    hasher.feed(pieces[2])
    hasher.feed(pieces[3], pieces[4])
    assert hasher.hexdigest() == hashlib.sha256(b"".join(pieces)).hexdigest()
    closed = BackgroundSha256()
    closed.feed(b"z" * 10000)
    closed.close()
    with pytest.raises(RuntimeError):
        closed.hexdigest()
    _no_hashing_threads_left()
