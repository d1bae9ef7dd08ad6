"""The straightforward context (the code before the streamed context: project every
record, serialise the whole, hash it) and the straightforward shortening search (the
code before the computed-size search: every candidate context is built and
serialised). Tests compare PromptBuilder against them byte for byte."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.analysis import InterpretationLimits, PromptBuilder
from viano_bug_analysis.analysis.case_access import BuiltCase
from viano_bug_analysis.packages import canonical_json

REFERENCE_FIELDS = ("cites", "value_ref", "unread_refs", "mentions", "derived_from", "steps")


def _longest_text(value: Any, path: tuple[str, ...]) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return max((_longest_text(v, path) for v in value), default=0)
    if isinstance(value, Mapping):
        return max(
            (
                _longest_text(v, (*path, str(k)))
                for k, v in value.items()
                if not (not path and k in REFERENCE_FIELDS)
            ),
            default=0,
        )
    return 0


def _shorten_entry(entry: dict[str, Any], cap: int) -> dict[str, Any]:
    if _longest_text(entry["data"], ()) <= cap:
        return entry
    marks: list[dict[str, Any]] = []

    def walk(value: Any, path: tuple[str, ...]) -> Any:
        if isinstance(value, str):
            if len(value) <= cap:
                return value
            marks.append(
                {
                    "field": "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in path),
                    "chars": len(value),
                    "sha256": hashlib.sha256(value.encode("utf-8")).hexdigest(),
                }
            )
            return f"{value[:cap]} [cut: {len(value)} characters in all]"
        if isinstance(value, list):
            return [walk(v, (*path, str(i))) for i, v in enumerate(value)]
        if isinstance(value, Mapping):
            return {
                k: (v if not path and k in REFERENCE_FIELDS else walk(v, (*path, k)))
                for k, v in value.items()
            }
        return value

    return dict(entry, data=walk(entry["data"], ()), shortened=marks)


def reference_shortened(
    context: dict[str, Any], limit: int, cap: int | None = None
) -> bytes | None:
    """The bytes the reference search chooses, or None where it refuses the context
    (with ``cap``: the context shortened at that cap, no search)."""
    entries: list[dict[str, Any]] = context["catalogue"]
    longest = max((_longest_text(e["data"], ()) for e in entries), default=0)

    def attempt(cap: int) -> bytes:
        return canonical_json(dict(context, catalogue=[_shorten_entry(e, cap) for e in entries]))

    if cap is not None:
        return attempt(cap)
    best = attempt(0)
    if len(best) > limit:
        return None
    low, high = 0, longest
    while high - low > 1:
        middle = (low + high) // 2
        candidate = attempt(middle)
        if len(candidate) <= limit:
            low, best = middle, candidate
        else:
            high = middle
    return best


_PROVENANCE_KEEP = ("member", "json_pointer", "role", "span")
_ALIAS_LETTERS = "BSNDQX"


def _project(value: Any, ids: dict[str, str] | None) -> Any:
    if isinstance(value, str):
        if ids is not None and value in ids:
            return ids[value]
        return value
    if isinstance(value, list):
        return [_project(v, ids) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _project(v, ids) for k, v in value.items()}
    return value


def _entry(index: int, record: Mapping[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    rid = record["id"]
    provenance = record.get("provenance") or {}
    unread = rid[:1] == "X" or bool(record.get("unread")) or "value_ref" in record
    inline = bool(record.get("inline", True)) and not unread
    data = {
        key: _project(value, ids if key in REFERENCE_FIELDS else None)
        for key, value in record.items()
        if key not in ("id", "kind", "provenance", "inline", "unread")
    }
    entry: dict[str, Any] = {
        "id": ids[rid],
        "kind": record.get("kind"),
        "pointer": f"/records/{index}",
        "origin": provenance.get("origin"),
        "inline": inline,
        "unread": unread,
        "author": provenance.get("author"),
        "timestamp": provenance.get("timestamp"),
        "provenance": {k: provenance.get(k) for k in _PROVENANCE_KEEP if k in provenance},
        "data": data,
    }
    if ids[rid] != rid:
        entry["record_id"] = rid
    return entry


def reference_context(case: BuiltCase) -> tuple[dict[str, Any], bytes, str]:
    """The unshortened context of a valid ``case``, its bytes and SHA-256, built the
    straightforward way (no limits)."""
    records = case.document["records"]
    counters: dict[str, int] = {}
    ids: dict[str, str] = {}
    for record in records:
        rid = record["id"]
        if rid[:1] in _ALIAS_LETTERS:
            counters[rid[:1]] = counters.get(rid[:1], 0) + 1
            ids[rid] = f"{rid[:1]}{counters[rid[:1]]:04d}"
        else:
            ids[rid] = rid
    entries = [_entry(i, record, ids) for i, record in enumerate(records)]
    completeness = next(e for e in entries if e["id"] == "Q0001")
    data = completeness.get("data", {})
    context: dict[str, Any] = {
        "format": "viano-interpretation-context-v1",
        "case_id": case.case_id,
        "package_id": case.package_id,
        "analysis_revision": case.analysis_revision,
        "case_sha256": case.case_sha256,
        "alias_scope": {
            "case_sha256": case.case_sha256,
            "context_format": "viano-interpretation-context-v1",
        },
        "expected_behavior_status": {
            "completeness": data.get("value"),
            "provenance": data.get("expected_behavior_provenance", completeness.get("origin")),
            "origins": data.get("origins", []),
            "explicit": data.get("explicit"),
        },
        "catalogue": entries,
    }
    body = canonical_json(context)
    return context, body, hashlib.sha256(body).hexdigest()


def whole_context(case: BuiltCase) -> dict[str, Any]:
    """The unshortened context of ``case`` (limits raised out of the way)."""
    limits = InterpretationLimits(max_context_bytes=1 << 40, max_catalogue_entries=1 << 30)
    return PromptBuilder(limits).prepare(case).context


def fast_shortened(case: BuiltCase, limit: int) -> bytes | None:
    """PromptBuilder's bytes under ``max_context_bytes=limit``, or None where refused."""
    from viano_bug_analysis.analysis import InterpretationError

    limits = InterpretationLimits(max_context_bytes=limit, max_catalogue_entries=1 << 30)
    try:
        return PromptBuilder(limits).prepare(case).context_bytes
    except InterpretationError as exc:
        assert exc.code == "interpretation.limit.max_context_bytes"
        return None


def built_case(data: bytes, document: dict[str, Any]) -> BuiltCase:
    return BuiltCase(
        str(document.get("case_id", "c")),
        str(document.get("package_id", "p")),
        1,
        "m",
        data,
        hashlib.sha256(data).hexdigest(),
        "0" * 64,
        document,
    )
