"""The context budget: a context fitted to the model's window, by fixed rules.

A provider configuration may name its model's context window
(``context_window_tokens``: prompt and answer together). The request (system prompt,
user message with the context) and the answer (``max_output_tokens``) must fit it, or
the server refuses the request (llama.cpp answers HTTP 400, an ERROR that costs a round).
PromptBuilder therefore fits the context *before* anything is sent:

1. **Measure.** The request's tokens are estimated from its UTF-8 bytes:
   ``ceil(bytes / BYTES_PER_TOKEN)`` plus ``TEMPLATE_TOKENS`` for the chat template.
   ``BYTES_PER_TOKEN`` is a stated conservative estimate (below what the embedded
   model's own tokenizer gives on real contexts: ``tests/integration`` checks it on
   every real report where the tokenizer is installed). A remote model's tokenizer is
   not available here, so the same estimate serves every provider; its window is only
   configured. The context may use ``ContextBudget.context_bytes(...)`` bytes.
2. **Long texts first.** Every text longer than one common cap is cut to it, the cap as
   large as fits (``shortening.shortened_context``: the longest texts, long comments and
   inline logs, go first), but not below ``MIN_TEXT_CHARS``.
3. **Then whole entries, oldest comments first.** With every text at
   ``MIN_TEXT_CHARS``, entries are left out until the context fits: the comments in
   case order (oldest first), then every other entry from the last in case order
   back, except the *minimum*: the first title, the first observation, the
   expectations (E) and the completeness entry (Q0001). A left-out entry stays in the
   catalogue under its own id as an unread reference: its ``kind``, its ``pointer``
   into the canonical case, ``inline: false``, ``unread: true`` and
   ``left_out: {"chars": N}`` (its texts' length); nothing else. So every id of
   the case is still in the catalogue, nothing is dropped silently, and an unread
   entry cannot ground a contradiction.
4. **Or refuse.** When even the minimum does not fit, preparation stops with
   ``interpretation.limit.context_window`` before anything is sent, counted or
   recorded (an ``InterpretationError``, not an outcome: the interpretation is not
   BLOCKED and can run under a larger window).

The result is deterministic: the same case, limits and budget give the same bytes.
The budget is part of the request fingerprint (``PreparedContext.request_fingerprint``),
so a different window or output limit is a different request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.analysis.catalogue import COMPLETENESS_ID
from viano_bug_analysis.analysis.errors import InterpretationError
from viano_bug_analysis.analysis.shortening import (
    _candidate,
    _size_function,
    shortened_context,
)
from viano_bug_analysis.packages import canonical_json

# Bytes of UTF-8 per token, a conservative (low) estimate: SmolLM2's tokenizer gives
# 2.53 to 3.47 bytes per token (median 3.04) on the whole requests of the 41 real
# reports of eval/viano_real and eval/viano_long, and 2.86 to 3.47 once fitted (the
# lowest: long logs with timestamps). Fewer bytes per token means more tokens counted,
# so the estimate errs on the side of fitting. Its limit: SmolLM2 reads every digit as
# a token, so a context made mostly of digits (1 byte per token) would not fit.
BYTES_PER_TOKEN = 2.5
TEMPLATE_TOKENS = 64  # chat template of two messages and the answer's start, generously
MIN_TEXT_CHARS = 240  # a text is not cut shorter before whole entries are left out
CONTEXT_WINDOW_CODE = "interpretation.limit.context_window"


@dataclass(frozen=True, slots=True)
class ContextBudget:
    """The model's window and the answer's share of it, in tokens."""

    window_tokens: int
    max_output_tokens: int
    bytes_per_token: float = BYTES_PER_TOKEN

    def estimate_tokens(self, byte_count: int) -> int:
        """The estimated tokens of ``byte_count`` bytes of request text."""
        return math.ceil(byte_count / self.bytes_per_token)

    def request_tokens(self, message_bytes: int) -> int:
        """The estimated tokens of a request whose messages hold ``message_bytes``."""
        return self.estimate_tokens(message_bytes) + TEMPLATE_TOKENS

    def fits(self, message_bytes: int) -> bool:
        return self.request_tokens(message_bytes) + self.max_output_tokens <= self.window_tokens

    def context_bytes(self, fixed_bytes: int) -> int:
        """The most bytes a context may have when the rest of the messages hold
        ``fixed_bytes`` (never negative)."""
        tokens = self.window_tokens - self.max_output_tokens - TEMPLATE_TOKENS
        return max(math.floor(tokens * self.bytes_per_token) - fixed_bytes, 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "window_tokens": self.window_tokens,
            "max_output_tokens": self.max_output_tokens,
            "bytes_per_token": self.bytes_per_token,
            "template_tokens": TEMPLATE_TOKENS,
            "min_text_chars": MIN_TEXT_CHARS,
        }


def _is_minimum(entry: dict[str, Any], first_title: str | None, first_o: str | None) -> bool:
    entry_id = str(entry["id"])
    return entry_id in (first_title, first_o, COMPLETENESS_ID) or entry_id[:1] == "E"


def _text_chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(_text_chars(v) for v in value)
    if isinstance(value, dict):
        return sum(_text_chars(v) for v in value.values())
    return 0


def left_out(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` as an unread reference, as small as it can be (many may be needed): its
    id, kind and pointer, ``inline: false``, ``unread: true`` and ``left_out.chars``, the
    characters of its (whole) texts. Its author, time and provenance stay in the case at
    ``pointer``."""
    stub: dict[str, Any] = {
        "id": entry["id"],
        "kind": entry["kind"],
        "pointer": entry["pointer"],
        "inline": False,
        "unread": True,
        "left_out": {"chars": _text_chars(entry["data"])},
    }
    if "record_id" in entry:
        stub["record_id"] = entry["record_id"]
    return stub


def _leave_out_order(entries: list[dict[str, Any]]) -> list[int]:
    """Indices of the entries that may be left out, in the order they are: comments
    oldest first, then the others from the last back; never the minimum."""
    first_title = next(
        (str(e["id"]) for e in entries if e["id"][:1] == "B" and e["data"].get("role") == "title"),
        None,
    )
    first_o = next((str(e["id"]) for e in entries if e["id"][:1] == "O"), None)
    optional = [i for i, e in enumerate(entries) if not _is_minimum(e, first_title, first_o)]
    comments = [i for i in optional if entries[i]["id"][:1] == "C"]
    others = [i for i in reversed(optional) if entries[i]["id"][:1] != "C"]
    return comments + others


def fit_context(context: dict[str, Any], body: bytes, limit: int) -> tuple[dict[str, Any], bytes]:
    """``context`` (serialised as ``body``) fitted to ``limit`` bytes by the rules of
    the module docstring. Raises ``interpretation.limit.context_window`` when even the
    minimum does not fit."""
    if len(body) <= limit:
        return context, body
    entries: list[dict[str, Any]] = context["catalogue"]
    size, _texts = _size_function(len(body), entries)
    if size(MIN_TEXT_CHARS) <= limit:
        shortened, shortened_body, _ = shortened_context(context, len(body), limit)
        if len(shortened_body) <= limit:
            return shortened, shortened_body
    capped, capped_body = _candidate(context, MIN_TEXT_CHARS)
    capped_entries: list[dict[str, Any]] = capped["catalogue"]
    total = len(capped_body)
    replaced: dict[int, dict[str, Any]] = {}
    for index in _leave_out_order(capped_entries):
        if total <= limit:
            break
        entry = capped_entries[index]
        stub = left_out(dict(entry, data=entries[index]["data"]))
        saved = len(canonical_json(entry)) - len(canonical_json(stub))
        if saved <= 0:
            continue
        replaced[index] = stub
        total -= saved
    fitted = dict(capped, catalogue=[replaced.get(i, e) for i, e in enumerate(capped_entries)])
    fitted_body = canonical_json(fitted)
    if len(fitted_body) > limit:
        raise InterpretationError(
            f"the context does not fit the model's window: {len(fitted_body)} bytes with "
            f"every optional entry left out and every text cut to {MIN_TEXT_CHARS} "
            f"characters, and the budget is {limit} bytes",
            code=CONTEXT_WINDOW_CODE,
            limit=limit,
            value=len(fitted_body),
        )
    return fitted, fitted_body
