"""What the alert routes take and answer (the API's shapes)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from trace_app.domain.alert_queries import AlertListing
from trace_app.domain.text import NoteText
from trace_app.store.models import AlertCloseReason, AlertState


class AlertOut(BaseModel):
    id: str
    person_id: str
    person_name: str
    claim_id: str
    report_id: str
    source: str
    state: AlertState
    raised_at: datetime
    closed_at: datetime | None = Field(description="When it closed; null while open.")
    closed_by_claim_id: str | None = Field(
        description="The later safe, admitted or deceased claim that closed it by rule."
    )
    close_note: str | None = Field(description="The note of the person who closed it.")
    closed_by: str | None = Field(
        default=None, description="The account that closed it by hand; null otherwise."
    )
    close_reason: str | None = Field(
        default=None, description="duplicate or withdrawn when closed so by hand; else null."
    )
    reopened_by: str | None = Field(default=None, description="Who reopened it by hand.")
    reopen_note: str | None = Field(default=None, description="Why it was reopened.")
    other_sources: list[str] = Field(
        default_factory=list,
        description="The sources of the other missing reports that joined this alert.",
    )

    @classmethod
    def of(cls, alert: AlertListing) -> AlertOut:
        return cls(
            id=alert.id,
            person_id=alert.person_id,
            person_name=alert.person_name,
            claim_id=alert.claim_id,
            report_id=alert.report_id,
            source=alert.source,
            state=AlertState(alert.state),
            raised_at=alert.raised_at,
            closed_at=alert.closed_at,
            closed_by_claim_id=alert.closed_by_claim_id,
            close_note=alert.close_note,
            closed_by=alert.closed_by,
            close_reason=alert.close_reason,
            reopened_by=alert.reopened_by,
            reopen_note=alert.reopen_note,
            other_sources=list(alert.other_sources),
        )


class AlertPage(BaseModel):
    items: list[AlertOut]
    total: int
    offset: int
    limit: int


class CloseAlertIn(BaseModel):
    """What the person knows, and how (the note is required, not blank). Found safe,
    admitted and deceased publish a report with that status for the caller's
    organisation; duplicate and withdrawn close with the note alone."""

    model_config = ConfigDict(extra="forbid")

    reason: AlertCloseReason
    note: NoteText


class ReopenAlertIn(BaseModel):
    """Why the alert was closed by mistake (required, not blank)."""

    model_config = ConfigDict(extra="forbid")

    note: NoteText = Field(description="Why the alert is reopened.")
