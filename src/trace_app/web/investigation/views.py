"""A report's saved investigation result as pages and the person API show it (reads only)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from trace_app.domain import reviews
from trace_app.investigation import evidence_store
from trace_app.web.evidence_view import is_decided, result_headline, result_summary
from trace_app.web.reviews.schemas import ReviewOut


class InvestigationOut(BaseModel):
    """The report's most recent saved investigation result, as the report page shows it."""

    status: str
    status_meaning: str
    headline: str = Field(description="'Needs review', 'Reviewed: relay confirmed', ...")
    summary: str = Field(
        default="",
        description="The result in plain words for people: the one reason that applies "
        "('Needs a person to check: the report passes on what Nepal Police Demo said'), "
        "or 'Decided: Relay confirmed' (trace_app.glossary).",
    )
    decided: bool = Field(
        default=False, description="Whether a person decided on the result shown."
    )
    attribution: str | None
    support: str | None
    reason: str
    run_at: datetime | None
    review: ReviewOut | None = Field(
        description="The report's current decision by a person (who, when, plain words)."
    )


def saved_results(session: Session, report_ids: list[str]) -> dict[str, InvestigationOut]:
    """The saved investigation result of each report that has one, with the report's
    current review decision (reads only)."""
    found: dict[str, InvestigationOut] = {}
    unique = list(dict.fromkeys(report_ids))
    decisions = reviews.latest_reviews(session, unique)
    for report_id in unique:
        run = evidence_store.latest_run_for_report(session, report_id)
        if run is None:
            continue
        result = evidence_store.result_from_run(run)
        decision = decisions.get(report_id)
        review = ReviewOut.of(decision, run.id) if decision is not None else None
        found[report_id] = InvestigationOut(
            headline=result_headline(result, review),
            summary=result_summary(result, review),
            decided=is_decided(result, review),
            review=review,
            status=result.status.value,
            status_meaning=result.status_meaning,
            attribution=result.attribution,
            support=result.support,
            reason=result.reason,
            run_at=result.run_at,
        )
    return found
