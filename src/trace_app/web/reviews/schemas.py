"""What the review routes take and answer (the API's shapes), and how a decision is shown."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from trace_app.domain.reviews import (
    ReviewValue,
)
from trace_app.domain.text import NoteText
from trace_app.investigation.outcome import InvestigationResult
from trace_app.investigation.review_queue import QueueItem, ReviewReason
from trace_app.store.models import ReviewAssignment, ReviewDecision


class ReviewIn(BaseModel):
    """A person's decision: one value of the closed set, and how they decided."""

    model_config = ConfigDict(extra="forbid")

    decision: ReviewValue
    note: NoteText


class ReviewOut(BaseModel):
    id: str
    report_id: str
    run_id: str = Field(description="The saved investigation run the person decided on.")
    decision: ReviewValue = Field(description="The decision's code (for programs).")
    decision_label: str = Field(description="The decision in a few plain words.")
    decision_sentence: str = Field(
        description="What happened, in plain words: 'A reviewer confirmed the relay'."
    )
    decision_meaning: str
    note: str
    decided_at: datetime
    decided_by: str = Field(description="The account that decided ('' before accounts existed).")
    sequence: int = Field(description="1 for the report's first decision; the highest is current.")
    on_shown_run: bool = Field(
        description="Whether it was decided on the run the report's result shows now; false: "
        "on an earlier run (the report is back in the queue)."
    )

    @classmethod
    def of(cls, row: ReviewDecision, shown_run_id: str | None) -> ReviewOut:
        value = ReviewValue(row.decision)
        return cls(
            id=row.id,
            report_id=row.report_id,
            run_id=row.run_id,
            decision=value,
            decision_label=value.label,
            decision_sentence=value.sentence,
            decision_meaning=value.meaning,
            note=row.note,
            decided_at=row.decided_at,
            decided_by=row.decided_by,
            sequence=row.sequence,
            on_shown_run=row.run_id == shown_run_id,
        )


class ReviewHistory(BaseModel):
    items: list[ReviewOut]
    total: int
    offset: int
    limit: int


class CueOut(BaseModel):
    start: int
    end: int
    kind: str
    words: str
    language: str


class CitationOut(BaseModel):
    role: str
    report_id: str
    source: str
    excerpt: str
    reported_at: str


class ReviewItemOut(BaseModel):
    report_id: str
    summary: str
    source: str
    person_name: str
    reported_at: datetime
    run_id: str
    run_at: datetime
    mode: str | None
    status: str = Field(description="Always NEEDS_REVIEW: only those await a person.")
    status_meaning: str
    reason: str
    excerpt: str = Field(description="The report text the result cites.")
    evidence: list[CueOut] = Field(description="The attribution cues found in the excerpt.")
    citations: list[CitationOut]
    earlier_review: ReviewOut | None = Field(
        description="The report's current decision, made on an earlier run; null if none."
    )
    priority: int = Field(
        default=3,
        description="Where it stands in the queue, lower first: 0 an open alert about a child "
        "or an older person, 1 an open alert, 2 a child or an older person, 3 any other; "
        "within one, the oldest report first.",
    )
    priority_words: str = Field(default="", description="The priority in plain words ('' for 3).")
    waits_because: ReviewReason = Field(
        default=ReviewReason.UNCLEAR,
        description="Why it waits, from the model's saved label (the queue's reason filter).",
    )
    waits_because_words: str = ""
    assigned_to: str | None = Field(
        default=None, description="The account that took this review; null: nobody."
    )
    assigned_at: datetime | None = None

    @classmethod
    def of(cls, item: QueueItem) -> ReviewItemOut:
        result, report = item.result, item.report
        data = result.as_json()
        return cls(
            report_id=report.id,
            summary=report.summary,
            source=report.organization.name,
            person_name=report.person_name,
            reported_at=report.reported_at,
            run_id=item.run.id,
            run_at=item.run.run_at,
            mode=data["mode"],
            status=data["status"],
            status_meaning=data["status_meaning"],
            reason=result.reason,
            excerpt=report_excerpt(result),
            evidence=[CueOut(**cue) for cue in data["evidence"]],
            citations=[CitationOut(**c) for c in data["citations"]],
            earlier_review=(
                ReviewOut.of(item.earlier_review, item.run.id) if item.earlier_review else None
            ),
            priority=int(item.priority),
            priority_words=item.priority.words,
            waits_because=item.reason,
            waits_because_words=item.reason.words,
            assigned_to=item.assignment.assigned_to if item.assignment else None,
            assigned_at=item.assignment.assigned_at if item.assignment else None,
        )


class ReviewQueuePage(BaseModel):
    items: list[ReviewItemOut]
    total: int
    offset: int
    limit: int
    # true when ``total`` is a lower bound: a filtered queue stops counting at 1,000 rows
    # (or just past the page asked for)
    total_at_least: bool = False


def report_excerpt(result: InvestigationResult) -> str:
    return next((c.excerpt for c in result.citations if c.role == "report"), "")


class AssignmentIn(BaseModel):
    """Take the review (``mine: true``) from whoever holds it, or release it (``false``)."""

    model_config = ConfigDict(extra="forbid")

    mine: bool


class AssignmentOut(BaseModel):
    report_id: str
    assigned_to: str | None = Field(description="Who holds the review now; null: nobody.")
    assigned_at: datetime | None

    @classmethod
    def of(cls, report_id: str, row: ReviewAssignment | None) -> AssignmentOut:
        return cls(
            report_id=report_id,
            assigned_to=row.assigned_to if row is not None else None,
            assigned_at=row.assigned_at if row is not None else None,
        )
