"""The result card's view helpers: its headline (:func:`result_headline`, the API's), its
words for people (:func:`result_summary`: the one reason that applies, or that a person
decided, from :mod:`trace_app.glossary`), what a press of Investigate did
(:func:`check_outcome`), and the report text cut into pieces, each marked with its cue
kind (:func:`cue_segments`).

Cues of different kinds may overlap ("people are saying" is hearsay and holds the relay
verb "saying"); each character is shown under one kind, the one that matters most to a
responder: an instruction, then a relay, then hearsay, then a first-hand cue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from trace_app import glossary
from trace_app.domain.reviews import ReviewValue
from trace_app.investigation.attribution_cues import Cue, CueKind
from trace_app.investigation.outcome import InvestigationResult
from trace_app.investigation.review_queue import card_headline
from trace_app.investigation.vocabulary import Mode, Status

NO_SOURCE = "NONE"  # the model's "no source named" (trace_app.investigation.answers)

SHOWN_FIRST = (CueKind.INSTRUCTION, CueKind.RELAY, CueKind.HEARSAY, CueKind.FIRST_HAND)


@dataclass(frozen=True, slots=True)
class Segment:
    text: str
    kind: CueKind | None


def cue_segments(text: str, cues: Sequence[Cue]) -> list[Segment]:
    """``text`` as consecutive segments; a cue whose span does not fit the text is ignored."""
    rank = {kind: index for index, kind in enumerate(SHOWN_FIRST)}
    owner: list[CueKind | None] = [None] * len(text)
    for cue in cues:
        if not (0 <= cue.start < cue.end <= len(text)) or text[cue.start : cue.end] != cue.words:
            continue
        for i in range(cue.start, cue.end):
            held = owner[i]
            if held is None or rank[cue.kind] < rank[held]:
                owner[i] = cue.kind
    segments: list[Segment] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or owner[i] != owner[start]:
            segments.append(Segment(text[start:i], owner[start]))
            start = i
    return segments


class ShownReview(Protocol):
    """What the headline needs of a report's current decision (the API's ``ReviewOut``)."""

    @property
    def decision(self) -> ReviewValue: ...

    @property
    def on_shown_run(self) -> bool: ...


def result_headline(result: InvestigationResult, review: ShownReview | None) -> str:
    """The card's headline: "Needs review", then "Reviewed: relay confirmed" once a person
    decided on this saved result (:func:`card_headline` has the rule). ``review`` belongs
    to the report's saved result, so a check that was not saved never counts as reviewed."""
    decided = review.decision if review is not None and review.on_shown_run else None
    return card_headline(result.status, decided if result.saved else None)


def is_decided(result: InvestigationResult, review: ShownReview | None) -> bool:
    """Whether a person decided on the saved result the card shows: it then looks
    decided (a tick, a neutral colour, who and when) instead of awaiting a person."""
    return (
        result.saved
        and result.status is Status.NEEDS_REVIEW
        and review is not None
        and review.on_shown_run
    )


def needs_review_reason_key(result: InvestigationResult) -> str:
    """Which one of :data:`glossary.NEEDS_REVIEW_REASONS` applies to a NEEDS_REVIEW result,
    read from what decided it (the evidence rule's cue, the model's labels), never from
    its reason's text."""
    if result.lowered_by:
        first = result.lowered_by[0]
        return f"cue_{first}" if first in ("instruction", "relay", "hearsay") else "no_first_hand"
    named = result.referenced_source not in (None, "", NO_SOURCE)
    if result.attribution == "RELAY":
        if named and result.support == "SUPPORTS":
            return "relay_agrees"
        if named and result.support == "DIFFERS":
            return "relay_differs"
        if named and result.support == "UNCLEAR":
            return "relay_compare_unclear"
        return "relay_named" if named else "relay_unnamed"
    if result.attribution == "UNCLEAR":
        return "unclear"
    if result.attribution == "DIRECT" and named:
        return "direct_names_source"
    return "other"


def _quoted_cue(result: InvestigationResult, kind: str) -> str:
    return next((cue.words for cue in result.evidence if cue.kind.value == kind), "")


def result_summary(result: InvestigationResult, review: ShownReview | None = None) -> str:
    """The card's first words for people: "Decided: Relay confirmed" once a person decided
    on the result shown; for a result that needs a person, the one reason that applies
    ("Needs a person to check: the report passes on what Nepal Police Demo said"); else
    the status in plain words."""
    if review is not None and is_decided(result, review):
        decision = glossary.phrase("review_decision", review.decision.value)
        return glossary.DECIDED_HEADLINE.format(decision=decision)
    if result.status is not Status.NEEDS_REVIEW:
        return glossary.phrase("check_status", result.status.value)
    key = needs_review_reason_key(result)
    words = _quoted_cue(result, key.removeprefix("cue_")) if key.startswith("cue_") else ""
    if key.startswith("cue_") and not words:
        key = "other"
    return glossary.NEEDS_REVIEW_REASONS[key].format(
        source=result.referenced_source or "", words=words
    )


def check_outcome(
    result: InvestigationResult,
    *,
    typed: bool,
    passphrase_ok: bool,
    live_enabled: bool,
    allowed: bool = True,
    day: str = "",
) -> str:
    """What pressing Investigate did, in one sentence beside the button: a new check, a
    saved result shown again ("Checked earlier (2 Dec) with exactly this text, so nothing
    was sent"), a wrong passphrase (also when a saved result is shown: it is never
    silently ignored), a refusal or a failure. ``day``: the day of the run shown."""
    words = glossary.CHECK_OUTCOME
    if typed and live_enabled and not passphrase_ok:
        saved = result.mode is not None or result.latest_saved is not None
        return (
            words["saved_wrong_passphrase"].format(day=day) if saved else words["wrong_passphrase"]
        )
    if result.mode is Mode.CACHED:
        return words["saved"].format(day=day)
    if result.mode is Mode.REPLAYED:
        return words["replayed"]
    if result.status is Status.BUDGET_LIMIT:
        return words["budget"]
    if result.status is Status.UNAVAILABLE:
        if not allowed:
            return words["not_allowed"]
        if not live_enabled:
            return words["switched_off"]
        if not typed:
            return words["no_passphrase"]
        return words["refused"].format(reason=result.reason)
    if result.status is Status.PARTIAL:
        return words["stopped"].format(reason=result.reason)
    if result.status is Status.FAILED:
        return words["failed"].format(reason=result.reason)
    return words["live"] if result.saved else words["live_not_saved"]
