"""Step 5: what the code decides after each model answer. The model only labels.

Every rule lives here, as a pure function of the typed answer and the evidence:

- DIRECT naming no source                     -> COMPLETED
- DIRECT naming a source (consistency rule)   -> NEEDS_REVIEW, whatever the model meant
- UNCLEAR                                     -> NEEDS_REVIEW
- RELAY naming NONE, or a source without
  exactly one report in the incident          -> NEEDS_REVIEW
- RELAY to a source with exactly one report   -> compare with that report (second call)
- any comparison answer                       -> NEEDS_REVIEW, both excerpts cited
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
from trace_app.investigation.evidence import ReportEvidence
from trace_app.investigation.vocabulary import Status


@dataclass(frozen=True, slots=True)
class Conclude:
    """Stop here with this status."""

    status: Status
    reason: str


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
            return Conclude(Status.COMPLETED, "The report reads as first-hand.")
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
