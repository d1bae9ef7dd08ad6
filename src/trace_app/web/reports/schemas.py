"""What the report routes take and answer (the API's shapes)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from trace_app.domain.publish import ReportContent
from trace_app.domain.text import SourceNameText
from trace_app.store.models import Report


class PersonRef(BaseModel):
    id: str
    name: str
    age: int | None


class ReportOut(BaseModel):
    id: str
    incident_id: str
    source: str
    summary: str
    original_text: str
    reported_at: datetime
    references: list[str]
    person_id: str = Field(description="The person the report is about (found or created).")
    person: PersonRef
    person_age_reported: int | None
    status: str
    location: str
    published_at: datetime
    claim_id: str | None

    @classmethod
    def of(cls, report: Report) -> ReportOut:
        return cls(
            id=report.id,
            incident_id=report.incident_id,
            source=report.organization.name,
            summary=report.summary,
            original_text=report.original_text,
            reported_at=report.reported_at,
            references=list(report.references),
            person_id=report.person.id,
            person=PersonRef(id=report.person.id, name=report.person.name, age=report.person.age),
            person_age_reported=report.person_age,
            status=report.status,
            location=report.location,
            published_at=report.published_at,
            claim_id=report.claims[0].id if report.claims else None,
        )


class ReportPage(BaseModel):
    items: list[ReportOut]
    total: int
    offset: int
    limit: int


class ReportIn(ReportContent):
    """A report to publish. Its source is the signed-in member's organisation in the
    incident: leave ``source`` out, or name that organisation; another name is refused."""

    source: SourceNameText | None = Field(
        default=None,
        description="Your organisation (from your account); any other name is refused (403).",
    )
