"""The straightforward shortening search (the code before the computed-size search):
every candidate context is built and serialised. Tests compare PromptBuilder's fast
search against it byte for byte."""

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
