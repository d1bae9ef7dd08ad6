"""Step 5: what the code decides after each model answer. The model only labels.

Every rule lives here, as a pure function of the typed answer and the evidence:

- DIRECT naming no source                     -> COMPLETED
- DIRECT naming a source (consistency rule)   -> NEEDS_REVIEW, whatever the model meant
- UNCLEAR                                     -> NEEDS_REVIEW
- RELAY naming NONE, or a source without
  exactly one report in the incident          -> NEEDS_REVIEW
- RELAY to a source with exactly one report   -> compare with that report (second call)
- any comparison answer                       -> NEEDS_REVIEW, both excerpts cited

and then the evidence rule (:func:`apply_evidence_rule`, ``docs/decisions/0060``), which
reads the attribution cues that code found in the text, never the model:

- COMPLETED stays COMPLETED only when the text holds at least one first-hand cue (the
  writer's own first-person account, found by grammar) and no relay, hearsay or
  instruction cue; otherwise it becomes NEEDS_REVIEW, with a reason
  that quotes the cue. The rule only ever lowers COMPLETED: it never raises a status,
  never asks the model and never changes how many calls are made.

``RULES_VERSION`` names this table; a saved run's decision is stored with
:func:`decision_version` (this table and the shipped cue words) and made again with the
current rules (:func:`redecide_saved`) when that differs (docs/decisions/0084). Change
``RULES_VERSION`` whenever a rule, or the code that finds cues, changes what is decided.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trace_app.investigation.answers import (
    NO_SOURCE,
    Attribution,
    AttributionResult,
    Support,
    SupportResult,
)
from trace_app.investigation.attribution_cues import (
    Cue,
    CueKind,
    caution_cues,
    first_hand_cues,
    shipped_lexicons_digest,
)
from trace_app.investigation.evidence import ReportEvidence
from trace_app.investigation.vocabulary import Status

RULES_VERSION = "trace-rules-4"
FIRST_HAND_REASON = "The report reads as first-hand."
# What lowered a COMPLETED: a cue kind, or this when the text shows no first-hand account.
NO_FIRST_HAND = "no_first_hand"


def decision_version() -> str:
    """What a stored decision was made with: the rules table and the shipped cue words."""
    return f"{RULES_VERSION}+cues-{shipped_lexicons_digest()}"


@dataclass(frozen=True, slots=True)
class Conclude:
    """Stop here with this status."""

    status: Status
    reason: str
    # set when the evidence rule lowered COMPLETED: the cue kinds (or NO_FIRST_HAND) it read
    lowered_by: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Compare:
    """Retrieve this report and ask the comparison question."""

    referenced: ReportEvidence


Decision = Conclude | Compare


def source_name(result: AttributionResult) -> str:
    value = result.referenced_source
    return str(getattr(value, "value", value))


def decide_after_attribution(
    result: AttributionResult, reports_by_source: dict[str, Sequence[ReportEvidence]]
) -> Decision:
    """``reports_by_source`` maps each menu name to the incident's reports from it."""
    label = Attribution(result.attribution)
    named = source_name(result)
    if label is Attribution.DIRECT:
        if named == NO_SOURCE:
            return Conclude(Status.COMPLETED, FIRST_HAND_REASON)
        return Conclude(
            Status.NEEDS_REVIEW,
            f"The model called the report first-hand but also named {named} as its source; "
            "the two do not fit together, so a person should look.",
        )
    if label is Attribution.UNCLEAR:
        return Conclude(
            Status.NEEDS_REVIEW, "The model could not tell where the information came from."
        )
    if named == NO_SOURCE:
        return Conclude(
            Status.NEEDS_REVIEW,
            "The report passes on information without naming a source Trace can find.",
        )
    matches = reports_by_source.get(named, ())
    if len(matches) != 1:
        return Conclude(
            Status.NEEDS_REVIEW,
            f"The report relays {named}, which has {len(matches)} reports in this incident, "
            "so there is no single report to compare with.",
        )
    return Compare(referenced=matches[0])


_SUPPORT_REASONS = {
    Support.SUPPORTS: "The report relays {source}, and that report supports what it says.",
    Support.DIFFERS: "The report relays {source}, but that report says something different.",
    Support.UNCLEAR: "The report relays {source}; the comparison with that report is unclear.",
}


def decide_after_comparison(result: SupportResult, referenced: ReportEvidence) -> Conclude:
    """A compared relay always goes to a person, with both excerpts cited."""
    return Conclude(
        Status.NEEDS_REVIEW,
        _SUPPORT_REASONS[Support(result.support)].format(source=referenced.source),
    )


# Which caution cue the reason quotes first: an instruction, then a relay, then hearsay.
_QUOTE_ORDER = (CueKind.INSTRUCTION, CueKind.RELAY, CueKind.HEARSAY)


def apply_evidence_rule(decision: Decision, cues: Sequence[Cue]) -> Decision:
    """Lower a COMPLETED to NEEDS_REVIEW unless the text backs it up; anything else passes
    through unchanged (a ``Compare`` stays a ``Compare``, so the calls stay the same)."""
    if not isinstance(decision, Conclude) or decision.status is not Status.COMPLETED:
        return decision
    caution = caution_cues(cues)
    if caution:
        kinds = tuple(k.value for k in _QUOTE_ORDER if any(c.kind is k for c in caution))
        quoted = next(c for k in _QUOTE_ORDER for c in caution if c.kind is k)
        more = len(caution) - 1
        return Conclude(
            Status.NEEDS_REVIEW,
            f"The model called the report first-hand, but the text says '{quoted.words}' "
            f"({quoted.kind.label})"
            + (f", and {more} more such {'cue' if more == 1 else 'cues'}" if more else "")
            + ", so a person should decide where the information came from.",
            lowered_by=kinds,
        )
    if not first_hand_cues(cues):
        return Conclude(
            Status.NEEDS_REVIEW,
            "The model called the report first-hand, but the writer's own words show no "
            "first-person account (such as 'we reached the mill' or 'I am at the shelter'), "
            "so a person should decide where the information came from.",
            lowered_by=(NO_FIRST_HAND,),
        )
    return decision


def redecide_saved(
    status: Status,
    reason: str,
    attribution: str | None,
    referenced_source: str | None,
    cues: Sequence[Cue],
) -> Conclude:
    """A saved run's decision under the current rules, from its saved labels (no call).

    Only a DIRECT label naming no source can have been COMPLETED; every other saved label
    led to NEEDS_REVIEW, which no current rule raises, so it keeps its saved reason.
    """
    if attribution == Attribution.DIRECT and referenced_source == NO_SOURCE:
        decided = apply_evidence_rule(Conclude(Status.COMPLETED, FIRST_HAND_REASON), cues)
        assert isinstance(decided, Conclude)
        return decided
    return Conclude(status, reason)
