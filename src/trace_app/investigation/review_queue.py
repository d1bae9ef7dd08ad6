"""The review queue: NEEDS_REVIEW results that await a person's decision (ADR 0063).

The rule, in one place:

- A report is in its incident's queue when the run its result card shows (its latest
  saved run), decided again with the current rules exactly as the card decides it
  (:func:`evidence_store.result_from_run`), is NEEDS_REVIEW, and no person has recorded
  a decision on that run. The queue lists them oldest run first.
- A decision takes the report out of the queue. A newer run of the report (its evidence,
  model or prompt changed, so its content fingerprint did) is a result nobody has looked
  at: the report enters the queue again, and the earlier decision is shown beside it and
  stays the report's current decision until a person records a new one.
- Only a report whose shown result is NEEDS_REVIEW can be decided
  (:func:`decide`); a later decision on the same result supersedes the earlier one,
  which is kept.

Code and people only: the model's labels are what the rules read, but no model output
ever enters the queue by itself, and a decision is only recorded through :func:`decide`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from trace_app.domain import reviews
from trace_app.domain.audit import Actor
from trace_app.domain.errors import NotFoundError
from trace_app.domain.queries import Page
from trace_app.domain.reviews import ReviewRefusedError, ReviewValue
from trace_app.investigation import evidence_store
from trace_app.investigation.outcome import InvestigationResult
from trace_app.investigation.vocabulary import Status
from trace_app.store.db import WRITE_TRANSACTION
from trace_app.store.models import InvestigationRun, Report, ReviewDecision


@dataclass(frozen=True, slots=True)
class QueueItem:
    """One report awaiting a decision: the run shown, its result as the card shows it,
    and the report's current decision if a person decided on an earlier run."""

    report: Report
    run: InvestigationRun
    result: InvestigationResult
    earlier_review: ReviewDecision | None


def review_queue(session: Session, incident_id: str, *, offset: int, limit: int) -> Page[QueueItem]:
    """The incident's queue, oldest first, one page of it. Reads only; never a model.

    Every undecided latest run is decided again (the current rules may have lowered a
    saved COMPLETED to NEEDS_REVIEW), so the total is exact."""
    waiting = [
        (run, result)
        for run in evidence_store.undecided_latest_runs(session, incident_id)
        if (result := evidence_store.result_from_run(run)).status is Status.NEEDS_REVIEW
    ]
    shown = waiting[offset : offset + limit]
    current = reviews.latest_reviews(session, [run.report_id for run, _ in shown])
    items = [
        QueueItem(run.report, run, result, current.get(run.report_id)) for run, result in shown
    ]
    return Page(items=items, total=len(waiting), offset=offset, limit=limit)


def card_headline(status: Status, decided_on_shown_run: ReviewValue | None) -> str:
    """What a result card (and the person page) says first: "Needs review" until a person
    decides on the run it shows, then "Reviewed: relay confirmed" (the decision in plain
    words, :data:`trace_app.domain.reviews.REVIEW_WORDS`). A decision made on an earlier
    run does not count: the newer result awaits a decision again. Other statuses say
    their own headline."""
    if status is Status.NEEDS_REVIEW and decided_on_shown_run is not None:
        return reviews.reviewed_headline(decided_on_shown_run)
    return status.headline


def awaiting_result(
    session: Session, report_id: str
) -> tuple[InvestigationRun, InvestigationResult]:
    """The run and result a person may decide on: the report's shown result when it is
    NEEDS_REVIEW. :class:`NotFoundError`, or :class:`ReviewRefusedError` otherwise."""
    if not evidence_store.report_exists(session, report_id):
        raise NotFoundError(f"No report with id {report_id!r}.")
    run = evidence_store.latest_run_for_report(session, report_id)
    if run is None:
        raise ReviewRefusedError(
            "This report has no saved investigation result, so there is nothing to review."
        )
    result = evidence_store.result_from_run(run)
    if result.status is not Status.NEEDS_REVIEW:
        raise ReviewRefusedError(
            f"This report's saved result is {result.status.value}; a person decides only "
            f"{Status.NEEDS_REVIEW.value} results."
        )
    return run, result


def decide(
    session: Session, report_id: str, decision: ReviewValue, note: str, *, actor: Actor
) -> ReviewDecision:
    """Record ``actor``'s decision on the report's NEEDS_REVIEW result and commit.

    Raises :class:`NotFoundError`, :class:`ReviewRefusedError` or ``InvalidInputError`` (a
    blank or overlong note) with nothing written. The saved run is never changed."""
    reviews.clean_note(note)  # refuse a bad note before taking the write lock
    try:
        session.connection(execution_options=WRITE_TRANSACTION)  # SQLite: BEGIN IMMEDIATE
        run, _result = awaiting_result(session, report_id)
        row = reviews.record_review(session, run, decision, note, actor=actor)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return row
