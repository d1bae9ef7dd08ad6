"""The result card's view helpers: its headline (:func:`result_headline`), and the report
text cut into pieces, each marked with its cue kind (:func:`cue_segments`).

Cues of different kinds may overlap ("people are saying" is hearsay and holds the relay
verb "saying"); each character is shown under one kind, the one that matters most to a
responder: an instruction, then a relay, then hearsay, then a first-hand cue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from trace_app.domain.reviews import ReviewValue
from trace_app.investigation.attribution_cues import Cue, CueKind
from trace_app.investigation.outcome import InvestigationResult
from trace_app.investigation.review_queue import card_headline

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
