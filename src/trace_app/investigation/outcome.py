"""The result of one investigation as every interface shows it, and the error mapping.

``status_for_error`` is the one place that maps modelgate's error *types* to statuses;
it never looks at message text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from modelgate.errors import (
    AllProvidersFailed,
    AttemptTimeout,
    BadAnswer,
    BudgetExhausted,
    CallFailed,
    LedgerBusy,
    LedgerUnavailable,
    ModelGateError,
    NotConfigured,
    NotSent,
    OutOfSetAnswer,
)
from trace_app.investigation.attribution_cues import Cue
from trace_app.investigation.vocabulary import Mode, Refusal, Status


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """Token usage over the calls of one investigation.

    ``source`` is ``"provider"`` only when every answered call carried provider-reported
    usage; otherwise the figures include the estimate and ``source`` is ``"estimate"``.
    ``estimated_tokens`` is the estimate (input characters / 4 + 150, plus 16) of every
    request sent, answered or not.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_tokens: int = 0
    source: str = "estimate"

    def as_json(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "estimated_tokens": self.estimated_tokens,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class Citation:
    """An excerpt a result rests on: the chosen report, and for a compared relay, its source."""

    role: str  # "report" or "referenced"
    report_id: str
    source: str
    excerpt: str
    reported_at: str

    def as_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "report_id": self.report_id,
            "source": self.source,
            "excerpt": self.excerpt,
            "reported_at": self.reported_at,
        }


@dataclass(frozen=True, slots=True)
class InvestigationResult:
    """What an investigation ended with. ``mode`` is ``None`` when no model answered now
    and no saved run was shown (PARTIAL before a call, UNAVAILABLE, BUDGET_LIMIT).

    ``latest_saved`` is set only on a refused check (UNAVAILABLE, BUDGET_LIMIT): the
    report's most recent saved or replayed run, exactly as ``GET .../investigation`` shows
    it, so saved and recorded results still display. It is not this check's answer.
    """

    report_id: str
    status: Status
    reason: str
    mode: Mode | None = None
    attribution: str | None = None
    referenced_source: str | None = None
    support: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    run_at: datetime | None = None
    usage: UsageTotals = field(default_factory=UsageTotals)
    citations: tuple[Citation, ...] = ()
    fingerprint: str | None = None
    requests_sent: int = 0
    saved: bool = False
    latest_saved: InvestigationResult | None = None
    # the attribution cues code found in the report text, shown to the person
    evidence: tuple[Cue, ...] = ()
    # the rules that decided the status (re-applied whenever a saved run is shown)
    rules_version: str | None = None
    # set when the evidence rule lowered COMPLETED: the cue kinds (or "no_first_hand")
    lowered_by: tuple[str, ...] = ()
    # set on UNAVAILABLE: which refusal it was, so the card gives its one next step
    refusal: Refusal | None = None

    @property
    def next_step(self) -> str:
        """What a responder does next: the refusal's own step, else the status's."""
        return self.refusal.next_step if self.refusal is not None else self.status.next_step

    @property
    def answered(self) -> bool:
        """Whether a model answer stands behind this result (a FAILED call never has one)."""
        return self.mode is not None and self.status not in NO_ANSWER_STATUSES

    @property
    def status_meaning(self) -> str:
        return self.status.meaning

    @property
    def mode_meaning(self) -> str | None:
        return self.mode.meaning if self.mode is not None else None

    def as_json(self) -> dict[str, Any]:
        return {
            "report_id": self.report_id,
            "status": self.status.value,
            "status_meaning": self.status.meaning,
            "mode": self.mode.value if self.mode is not None else None,
            "mode_meaning": self.mode_meaning,
            "attribution": self.attribution,
            "referenced_source": self.referenced_source,
            "support": self.support,
            "model": self.model,
            "prompt_version": self.prompt_version,
            "run_at": self.run_at.isoformat() if self.run_at is not None else None,
            "usage": self.usage.as_json(),
            "citations": [c.as_json() for c in self.citations],
            "fingerprint": self.fingerprint,
            "reason": self.reason,
            "saved": self.saved,
            "latest_saved_run": (
                self.latest_saved.as_json() if self.latest_saved is not None else None
            ),
            "evidence": [cue.as_json() for cue in self.evidence],
            "rules_version": self.rules_version,
            "lowered_by_evidence": list(self.lowered_by),
        }


# Statuses whose result carries no usable model answer, whatever was sent.
NO_ANSWER_STATUSES = frozenset({Status.FAILED, Status.UNAVAILABLE, Status.BUDGET_LIMIT})


def status_for_error(error: ModelGateError) -> Status:
    """Map a modelgate error to a status by its type alone."""
    if isinstance(error, BudgetExhausted):
        return Status.BUDGET_LIMIT
    if isinstance(error, NotSent):
        return Status.UNAVAILABLE
    if isinstance(error, CallFailed):
        return Status.FAILED
    return Status.FAILED


def reason_for_error(error: ModelGateError) -> str:
    """Plain words for a modelgate error, chosen by type (messages are never parsed)."""
    if isinstance(error, AllProvidersFailed) and len(error.errors) == 1:
        error = error.errors[0]
    if isinstance(error, BudgetExhausted):
        return f"The request cap of {error.cap} model calls for this server is reached."
    if isinstance(error, LedgerBusy):
        return "Another check is using the request ledger right now; this one stood back."
    if isinstance(error, LedgerUnavailable):
        return "The request ledger is empty, unreadable or invalid, so no call was made."
    if isinstance(error, NotConfigured):
        return "The model key or client is missing, so live checks cannot run."
    if isinstance(error, NotSent):
        return "No model call was made."
    if isinstance(error, AttemptTimeout):
        return f"The model did not answer within {error.limit_s:g} seconds; the request counts."
    if isinstance(error, OutOfSetAnswer):
        return "The reply held a label outside the allowed set, so it was discarded."
    if isinstance(error, BadAnswer):
        return "The reply did not have the required shape, so it was discarded."
    return "The model call failed; the request counts."
