"""What the people routes take and answer (the API's shapes)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from trace_app.domain.links import LinkView
from trace_app.domain.people_queries import PersonListing
from trace_app.domain.person_view import ClaimDetail, CurrentStatus, PersonDetail
from trace_app.domain.text import IdText, NoteText
from trace_app.store.models import ClaimStatus, LinkDecision
from trace_app.web.alerts.schemas import AlertOut
from trace_app.web.investigation.views import InvestigationOut


class StatusOut(BaseModel):
    status: ClaimStatus | None = Field(description="Null when the person has no claim.")
    claim_id: str | None = Field(description="The claim that decides it.")
    reported_at: datetime | None
    disputed_by: list[str] = Field(
        description="Claims from other sources, at most 6 hours earlier, that say otherwise."
    )

    @classmethod
    def of(cls, status: CurrentStatus) -> StatusOut:
        return cls(
            status=status.status,
            claim_id=status.claim_id,
            reported_at=status.reported_at,
            disputed_by=list(status.disputed_by),
        )


class ClaimOut(BaseModel):
    id: str
    status: str
    location: str
    report_id: str
    source: str
    reported_at: datetime


class PersonOut(BaseModel):
    id: str
    name: str
    age: int | None
    claims: list[ClaimOut] = Field(description="Every claim of the person's linked group.")
    other_names: list[str] = Field(
        default_factory=list,
        description="The names of the other records of its linked group (decided 'same').",
    )
    group_status: StatusOut = Field(
        description="The person's status: the claim about the latest moment over every "
        "claim of its linked group wins (as combined_status of GET /api/people/{id})."
    )

    @classmethod
    def of(cls, person: PersonListing) -> PersonOut:
        return cls(
            id=person.id,
            name=person.name,
            age=person.age,
            claims=[
                ClaimOut(
                    id=c.id,
                    status=c.status,
                    location=c.location,
                    report_id=c.report_id,
                    source=c.source,
                    reported_at=c.reported_at,
                )
                for c in person.claims
            ],
            other_names=list(person.other_names),
            group_status=StatusOut.of(person.status),
        )


class PeoplePage(BaseModel):
    items: list[PersonOut]
    total: int
    offset: int = Field(
        description="Rows before this page; for a page asked by ``after``, as counted when "
        "its cursor was written."
    )
    limit: int
    next_after: str | None = Field(
        default=None,
        description="Without q or a filter: the cursor of the next page (pass it as "
        "``after``), null on the last page; always null for a search.",
    )


class PersonClaimOut(BaseModel):
    id: str
    person_id: str
    status: ClaimStatus
    location: str
    report_id: str
    summary: str
    source: str
    reported_at: datetime
    investigation: InvestigationOut | None = Field(
        description="The report's saved investigation result; null when there is none."
    )

    @classmethod
    def of(cls, claim: ClaimDetail, results: dict[str, InvestigationOut]) -> PersonClaimOut:
        return cls(
            id=claim.id,
            person_id=claim.person_id,
            status=claim.status,
            location=claim.location,
            report_id=claim.report_id,
            summary=claim.summary,
            source=claim.source,
            reported_at=claim.reported_at,
            investigation=results.get(claim.report_id),
        )


class ReasonOut(BaseModel):
    code: str = Field(
        description="same_name, invisible_characters, confusable_characters, "
        "transliteration or close_spelling"
    )
    words: str


class PossibleDuplicateOut(BaseModel):
    person_id: str
    name: str
    reasons: list[ReasonOut]


class LinkOut(BaseModel):
    id: str
    person_id: str
    other_person_id: str
    other_name: str
    decision: LinkDecision
    note: str
    decided_at: datetime
    decided_on_person_id: str = Field(description="The person whose page it was decided on.")
    recorded_by: str = Field(
        description="The account that decided ('' for decisions made before accounts existed)."
    )
    current: bool = Field(description="False once a later decision about the pair supersedes it.")

    @classmethod
    def of(cls, view: LinkView) -> LinkOut:
        return cls(
            id=view.id,
            person_id=view.person_id,
            other_person_id=view.other_person_id,
            other_name=view.other_name,
            decision=view.decision,
            note=view.note,
            decided_at=view.decided_at,
            decided_on_person_id=view.decided_on_person_id,
            recorded_by=view.decided_by,
            current=view.current,
        )


class LinkedPersonOut(BaseModel):
    id: str
    name: str
    age: int | None
    claims: list[PersonClaimOut]


class PersonDetailOut(BaseModel):
    id: str
    incident_id: str
    name: str
    alternate_names: list[str]
    age: int | None
    status: StatusOut = Field(description="From this record's claims: the latest moment wins.")
    combined_status: StatusOut = Field(
        description="The person's status: the same rule over every claim of the linked "
        "group (this record and the records decided 'same'); equal to status alone."
    )
    claims: list[PersonClaimOut]
    alerts: list[AlertOut] = Field(description="The linked group's alerts, newest first.")
    possible_duplicates: list[PossibleDuplicateOut]
    links: list[LinkOut] = Field(description="The current 'same' and 'different' decisions.")
    link_history: list[LinkOut] = Field(description="Every decision, newest first.")
    same_people: list[LinkedPersonOut]
    group_names: list[str] = Field(
        description="Every name of every record of the linked group, repeats left out."
    )

    @classmethod
    def of(cls, detail: PersonDetail, results: dict[str, InvestigationOut]) -> PersonDetailOut:
        return cls(
            id=detail.id,
            incident_id=detail.incident_id,
            name=detail.name,
            alternate_names=detail.alternate_names,
            age=detail.age,
            status=StatusOut.of(detail.status),
            combined_status=StatusOut.of(detail.combined_status),
            claims=[PersonClaimOut.of(c, results) for c in detail.claims],
            alerts=[AlertOut.of(a) for a in detail.alerts],
            possible_duplicates=[
                PossibleDuplicateOut(
                    person_id=d.person_id,
                    name=d.name,
                    reasons=[ReasonOut(code=r.code, words=r.words) for r in d.reasons],
                )
                for d in detail.possible_duplicates
            ],
            links=[LinkOut.of(v) for v in detail.links],
            link_history=[LinkOut.of(v) for v in detail.link_history],
            same_people=[
                LinkedPersonOut(
                    id=p.id,
                    name=p.name,
                    age=p.age,
                    claims=[PersonClaimOut.of(c, results) for c in p.claims],
                )
                for p in detail.same_people
            ],
            group_names=detail.group_names,
        )


class LinkIn(BaseModel):
    """A person's decision about this person and another one of the same incident."""

    model_config = ConfigDict(extra="forbid")

    other_person_id: IdText
    decision: LinkDecision = Field(
        description="same, different, or undecided (withdraws the current decision)."
    )
    note: NoteText = Field(description="Why (and, if you like, who decided): required.")
