"""The shortening search computes candidate sizes instead of serialising candidates:
its bytes are compared with the straightforward search (shortening_reference) on
generated cases, on the benchmark's shapes and on non-ASCII and escaped texts."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shortening_reference import built_case, fast_shortened, reference_shortened, whole_context

from viano_bug_analysis.analysis import prompt_builder, shortening
from viano_bug_analysis.packages import canonical_json

_PROV = {"origin": "original", "member": "original/intake.json", "json_pointer": "/x"}
_ALPHABET = st.sampled_from(
    ["a", "b", " ", "é", "漢", "😀", '"', "\\", "\n", "\x01", "\u2028", "/", "~", "0"]
)
_TEXTS = st.lists(_ALPHABET, max_size=60).map("".join) | st.builds(
    lambda c, n: c * n, _ALPHABET, st.integers(0, 400)
)
_SCALARS = _TEXTS | st.integers(-(2**40), 2**40) | st.booleans() | st.none()
_KEYS = st.sampled_from(["text", "value", "a/b", "t~1", "é", "name", "cites", "steps"])
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=12,
)


def _document(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "case_format": "viano-canonical-case/1",
        "case_id": "c",
        "package_id": "p",
        "analysis_revision": 1,
        "raw_input_fingerprint": "0" * 64,
        "records": records,
    }


@st.composite
def _cases(draw: st.DrawFn) -> dict[str, Any]:
    records: list[dict[str, Any]] = []
    for n, letter in enumerate(draw(st.lists(st.sampled_from("OCBSNEF"), max_size=8)), 1):
        record: dict[str, Any] = {"id": f"{letter}{n:04d}", "kind": "k", "provenance": _PROV}
        record.update(draw(st.dictionaries(_KEYS, _VALUES, max_size=4)))
        if draw(st.booleans()) and records:
            record["cites"] = [records[0]["id"]]
        records.append(record)
    records.append(
        {"id": "Q0001", "kind": "q", "value": "complete", "text": "q", "provenance": _PROV}
    )
    return _document(records)


def _expected(context: dict[str, Any], limit: int) -> bytes | None:
    whole = canonical_json(context)
    return whole if len(whole) <= limit else reference_shortened(context, limit)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=_cases(), data=st.data())
def test_fast_search_gives_the_reference_bytes(document: dict[str, Any], data: Any) -> None:
    case = built_case(canonical_json(document), document)
    context = whole_context(case)
    whole = len(canonical_json(context))
    texts, measured = shortening._measured(context)  # by parts: the same size
    assert texts is not None and measured == whole
    floor = len(
        canonical_json(
            dict(context, catalogue=[shortening.shorten_entry(e, 0) for e in context["catalogue"]])
        )
    )
    limit = data.draw(st.integers(max(0, min(floor, whole) - 40), whole + 5), label="limit")
    with patch.object(shortening, "_candidate", wraps=shortening._candidate) as built:
        got = fast_shortened(case, limit)
    assert got == _expected(context, limit)
    assert built.call_count <= 1  # the computed sizes were exact: one serialisation


def _long_case(texts: list[str]) -> dict[str, Any]:
    records: list[dict[str, Any]] = [
        {"id": f"C{n:04d}", "kind": "comment", "text": t, "provenance": _PROV}
        for n, t in enumerate(texts, 1)
    ]
    records.append({"id": "Q0001", "kind": "q", "value": "complete", "provenance": _PROV})
    return _document(records)


@pytest.mark.parametrize(
    "texts",
    [
        ["plain words " * 3000, "more " * 900, "short"],  # ASCII: sizes by arithmetic
        ['é漢😀\n"\\ ' * 1500, "x" * 7000, "\u2028\x02" * 2000],  # escapes, multi-byte
        [f"{n}: " + "repeated paragraph " * (50 + n) for n in range(120)],  # many entries
    ],
)
@pytest.mark.parametrize("streamed", [False, True])  # True: measured by parts
def test_fast_search_gives_the_reference_bytes_on_long_texts(
    texts: list[str], streamed: bool
) -> None:
    document = _long_case(texts)
    case = built_case(canonical_json(document), document)
    context = whole_context(case)
    whole = len(canonical_json(context))
    stream_from = 0 if streamed else prompt_builder.STREAM_CASE_BYTES
    for limit in (whole - 1, whole * 3 // 4, whole // 2, whole // 5, whole // 20, 3000):
        with (
            patch.object(shortening, "_candidate", wraps=shortening._candidate) as built,
            patch.object(prompt_builder, "STREAM_CASE_BYTES", stream_from),
            patch.object(shortening, "_measured", wraps=shortening._measured) as measured,
        ):
            got = fast_shortened(case, limit)
        assert measured.call_count == streamed
        assert got == _expected(context, limit)
        assert built.call_count == 1
        assert got is None or len(got) <= limit


def test_a_missed_size_falls_back_to_the_exact_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were a computed size ever wrong, the result is still the reference's."""
    document = _long_case(["alpha " * 2000, "beta " * 500])
    case = built_case(canonical_json(document), document)
    context = whole_context(case)
    limit = len(canonical_json(context)) // 3
    real = shortening._size_function

    def off_by_one(whole_size: int, entries: list[dict[str, Any]], *listed: Any) -> Any:
        size, texts = real(whole_size, entries, *listed)
        return (lambda cap: size(cap) + 1), texts

    monkeypatch.setattr(shortening, "_size_function", off_by_one)
    assert fast_shortened(case, limit) == reference_shortened(context, limit)


def test_texts_hashed_in_two_threads_give_the_same_marks() -> None:
    """Past the parallel threshold half of the cut texts are hashed in the background
    pool; the marks are the reference's."""
    texts = [f"{n} " + "long text with é " * 4000 for n in range(40)]  # ~2.7 M characters
    document = _long_case(texts)
    case = built_case(canonical_json(document), document)
    context = whole_context(case)
    assert sum(map(len, texts)) > shortening._PARALLEL_HASH_CHARS
    limit = len(canonical_json(context)) // 10
    with patch.object(shortening, "_hash_all", wraps=shortening._hash_all) as hashed:
        got = fast_shortened(case, limit)
    assert hashed.call_count == 2
    assert got == reference_shortened(context, limit)
