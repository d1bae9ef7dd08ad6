"""A report's current decision by a person, for the result card, the report view and the
investigation's answers (reads only).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import Request
from sqlalchemy.orm import Session

from trace_app.domain import reviews
from trace_app.domain.reviews import (
    REVIEW_MEANINGS,
    ReviewValue,
)
from trace_app.domain.text import MAX_NOTE_CHARACTERS
from trace_app.investigation import evidence_store
from trace_app.store.models import Report
from trace_app.web.deps import open_session
from trace_app.web.reviews.schemas import ReviewOut


def current_review(session: Session, report_id: str) -> ReviewOut | None:
    """The report's current decision as the API and the result card show it."""
    row = reviews.latest_review(session, report_id)
    if row is None:
        return None
    return ReviewOut.of(row, evidence_store.latest_run_id(session, report_id))


def review_json(request: Request, report_id: str) -> dict[str, Any] | None:
    """``current_review`` in its own session, as JSON (for the investigation's answers)."""
    with open_session(request) as session:
        found = current_review(session, report_id)
    return found.model_dump(mode="json") if found is not None else None


def review_card_context(session: Session, report: Report) -> dict[str, Any]:
    """The result card's names for the person's decision (read only)."""
    return {
        "review": current_review(session, report.id),
        "reviews_url": f"/incidents/{quote(report.incident_id)}/reviews",
        "review_values": list(ReviewValue),
        "review_meanings": REVIEW_MEANINGS,
        "max_note": MAX_NOTE_CHARACTERS,
    }
