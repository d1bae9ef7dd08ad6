"""What the inquiry and follow-up routes answer (the API's shapes)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from trace_app.notifications.follow_ups import FollowUpView
from trace_app.notifications.inquiries import InquiryView
from trace_app.notifications.retention import MAX_RETENTION_DAYS


class InquiryCreatedOut(BaseModel):
    id: str
    person_id: str = Field(description="The record the request follows (new or chosen).")


class InquiryOut(BaseModel):
    """An inquiry with the enquirer's contacts (needs contacts:read; every read is
    audited). Erased contacts are null, with when and by whom."""

    id: str
    incident_id: str
    person_id: str
    enquirer_name: str | None
    relationship: str
    email: str | None
    phone: str | None
    language: str
    note: str | None
    consent_at: datetime
    created_at: datetime
    closed_at: datetime | None = Field(
        description="When the request closed (the enquirer was told); retention counts from here."
    )
    email_confirmed_at: datetime | None
    unsubscribed_at: datetime | None
    contacts_erased_at: datetime | None
    erased_by: str | None

    @classmethod
    def of(cls, view: InquiryView) -> InquiryOut:
        return cls.model_validate(view, from_attributes=True)


class InquiryList(BaseModel):
    items: list[InquiryOut]


class LookingForOut(BaseModel):
    person_id: str
    count: int = Field(description="How many open tracing requests follow the person.")


class FollowUpOut(BaseModel):
    id: str
    incident_id: str
    person_id: str = Field(description="The person's linked group (its lead record).")
    person_name: str
    kind: str = Field(description="inform_in_person: tell the family in person.")
    event_id: str | None
    created_at: datetime
    done_at: datetime | None
    done_by: str | None
    enquirers: list[InquiryOut] = Field(
        description="Who is looking for the person, with their contacts (audited)."
    )

    @classmethod
    def of(cls, view: FollowUpView) -> FollowUpOut:
        return cls(
            id=view.id,
            incident_id=view.incident_id,
            person_id=view.person_id,
            person_name=view.person_name,
            kind=view.kind,
            event_id=view.event_id,
            created_at=view.created_at,
            done_at=view.done_at,
            done_by=view.done_by,
            enquirers=[InquiryOut.of(i) for i in view.enquirers or ()],
        )


class FollowUpList(BaseModel):
    items: list[FollowUpOut]


class RetentionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    days: int = Field(
        ge=0,
        le=MAX_RETENTION_DAYS,
        strict=True,
        description="Days the contacts are kept after a request closes.",
    )


class RetentionOut(BaseModel):
    incident_id: str
    days: int
