"""The report text cut into pieces for the result card, each marked with its cue kind.

Cues of different kinds may overlap ("people are saying" is hearsay and holds the relay
verb "saying"); each character is shown under one kind, the one that matters most to a
responder: an instruction, then a relay, then hearsay, then a first-hand cue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trace_app.investigation.attribution_cues import Cue, CueKind

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
