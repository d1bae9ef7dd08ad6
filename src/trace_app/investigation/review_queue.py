"""The review queue: NEEDS_REVIEW results that await a person's decision (ADR 0063).

The rule, in one place:

- A report is in its incident's queue when the run its result card shows (its latest
  saved run), decided with the current rules exactly as the card decides it
  (:func:`evidence_store.result_from_run`), is NEEDS_REVIEW, and no person has recorded
  a decision on that run. The queue lists them oldest run first.
- Each run stores that decision and whether it is in the queue (ADR 0084), so the queue
  is an indexed read with an exact total. When the rules (or cue words) changed since a
  run of the incident was decided, the next look at the queue decides those runs again
  first, as Trace itself (one audit row), then reads.
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

from trace_app.domain import audit, reviews
from trace_app.domain.audit import Actor
from trace_app.domain.errors import NotFoundError
from trace_app.domain.queries import Page
from trace_app.domain.reviews import ReviewRefusedError, ReviewValue
from trace_app.investigation import evidence_store
from trace_app.investigation.outcome import InvestigationResult
from trace_app.investigation.rules import decision_version
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
    """The incident's queue, oldest first, one page of it, and its exact total. Never a
    model; writes only to re-decide runs decided with older rules
    (:func:`redecide_for_rules_change`)."""
    redecide_for_rules_change(session, incident_id)
    total = evidence_store.awaiting_count(session, incident_id)
    runs = evidence_store.awaiting_runs(session, incident_id, offset=offset, limit=limit)
    current = reviews.latest_reviews(session, [run.report_id for run in runs])
    items = [
        QueueItem(run.report, run, evidence_store.result_from_run(run), current.get(run.report_id))
        for run in runs
    ]
    return Page(items=items, total=total, offset=offset, limit=limit)


def redecide_for_rules_change(session: Session, incident_id: str) -> int:
    """Store today's decision on every run of the incident decided with other rules, and
    commit, audited as Trace's own ``investigation.redecide``. One indexed probe and
    nothing else when there are none; returns how many runs were decided."""
    if not evidence_store.has_stale_runs(session, incident_id):
        return 0
    session.commit()  # end the read; the write below holds SQLite's lock from its start
    try:
        session.connection(execution_options=WRITE_TRANSACTION)
        count = evidence_store.redecide_stale_runs(session, incident_id)
        if count:
            audit.record(
                session,
                Actor.system("the decision rules changed"),
                "investigation.redecide",
                object_type="incident",
                object_id=incident_id,
                incident_id=incident_id,
                after={"runs": count, "decided_with": decision_version()},
            )
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return count


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
        evidence_store.refresh_awaiting(session, [report_id])
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return row
