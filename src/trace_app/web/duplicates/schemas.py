"""What the Duplicates queue's API answers."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from trace_app.domain.duplicate_queue import (
    DuplicatePair,
    PersonFacts,
)
from trace_app.store.models import AlertState, ClaimStatus


class PersonFactsOut(BaseModel):
    person_id: str
    name: str
    age: int | None
    status: ClaimStatus | None = Field(description="The current status; null with no claim.")
    reported_at: datetime | None = Field(description="UTC time of the claim that gives it.")
    location: str
    source: str = Field(description="The organisation whose claim gives the status.")
    alert: AlertState | None = Field(description="open, closed, or null when none was raised.")

    @classmethod
    def of(cls, facts: PersonFacts) -> PersonFactsOut:
        return cls(
            person_id=facts.person_id,
            name=facts.name,
            age=facts.age,
            status=facts.status,
            reported_at=facts.reported_at,
            location=facts.location,
            source=facts.source,
            alert=facts.alert,
        )


class DuplicateReasonOut(BaseModel):
    code: str
    words: str


class DuplicatePairOut(BaseModel):
    first: PersonFactsOut = Field(description="The older record.")
    second: PersonFactsOut
    reasons: list[DuplicateReasonOut]

    @classmethod
    def of(cls, pair: DuplicatePair) -> DuplicatePairOut:
        return cls(
            first=PersonFactsOut.of(pair.first),
            second=PersonFactsOut.of(pair.second),
            reasons=[DuplicateReasonOut(code=r.code, words=r.words) for r in pair.reasons],
        )


class DuplicatePageOut(BaseModel):
    items: list[DuplicatePairOut]
    total: int
    offset: int
    limit: int
