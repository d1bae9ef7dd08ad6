"""The person: ``GET /api/people/{id}``, ``POST /api/people/{id}/links`` and their pages.

The page ``/people/{id}`` shows what the API returns (name, alternate names, age, the
current status by :func:`trace_app.domain.person_view.current_status`, every claim with
its report, source and saved investigation result, alerts, possible duplicates and link
decisions) and a form per pair to decide "same", "different" or to withdraw a decision
(``POST /people/{id}/links``, Post/Redirect/Get).

The investigation is an optional part: its saved result is read through its own
``evidence_store`` when it is installed, and nothing is shown when it is not.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Path, Request
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app.accounts.permissions import Permission
from trace_app.domain import reviews
from trace_app.domain.duplicate_queue import person_facts
from trace_app.domain.errors import InvalidInputError
from trace_app.domain.links import LinkView, decide_link_and_commit, link_history
from trace_app.domain.person_view import ClaimDetail, CurrentStatus, PersonDetail, person_detail
from trace_app.domain.queries import get_incident
from trace_app.domain.text import ID_PATTERN, MAX_ID_CHARACTERS, IdText, NoteText
from trace_app.investigation import evidence_store
from trace_app.store.models import ClaimStatus, LinkDecision, Person
from trace_app.web.api import AlertOut
from trace_app.web.deps import UNIT_OF_WORK, open_session, render
from trace_app.web.errors import COMMON_RESPONSES, ErrorOut, ValidationErrorOut
from trace_app.web.evidence_view import result_headline
from trace_app.web.failures import failing_as
from trace_app.web.gate import Access, gated_router, on_record
from trace_app.web.review_routes import ReviewOut

api_router = gated_router(prefix="/api", tags=["api"], responses=COMMON_RESPONSES)
page_router = gated_router(include_in_schema=False)

PersonId = Annotated[str, Path(max_length=MAX_ID_CHARACTERS, pattern=ID_PATTERN)]


class InvestigationOut(BaseModel):
    """The report's most recent saved investigation result, as the report page shows it."""

    status: str
    status_meaning: str
    headline: str = Field(description="'Needs review', 'Reviewed: relay confirmed', ...")
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
            review=review,
            status=result.status.value,
            status_meaning=result.status_meaning,
            attribution=result.attribution,
            support=result.support,
            reason=result.reason,
            run_at=result.run_at,
        )
    return found


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


def _detail_with_results(session: Session, person_id: str) -> tuple[PersonDetail, dict[str, Any]]:
    detail = person_detail(session, person_id)
    report_ids = [c.report_id for c in detail.claims]
    report_ids += [c.report_id for p in detail.same_people for c in p.claims]
    return detail, saved_results(session, report_ids)


@api_router.get(
    "/people/{person_id}",
    response_model=PersonDetailOut,
    responses={404: {"model": ErrorOut, "description": "No such person"}},
)
def get_person(
    person_id: PersonId,
    session: Session = UNIT_OF_WORK,
    _: Access = on_record(Permission.READ, Person, "person_id"),
) -> PersonDetailOut:
    """One person: names, age, current status, claims with their reports and saved
    investigation results, alerts, possible duplicates (with reasons) and decisions."""
    detail, results = _detail_with_results(session, person_id)
    return PersonDetailOut.of(detail, results)


@api_router.post(
    "/people/{person_id}/links",
    status_code=201,
    response_model=LinkOut,
    responses={
        403: {"model": ErrorOut, "description": "Cross-site request"},
        404: {"model": ErrorOut, "description": "No such person (either of the two)"},
        422: {
            "model": ValidationErrorOut,
            "description": "A bad field; or the same person twice, two incidents, "
            "a blank note, or nothing to withdraw (code invalid_input)",
        },
    },
)
def create_link(
    person_id: PersonId,
    data: LinkIn,
    session: Session = UNIT_OF_WORK,
    access: Access = on_record(Permission.LINKS_WRITE, Person, "person_id"),
) -> LinkOut:
    """A reviewer's decision about two people; a later one supersedes it, both kept."""
    link = decide_link_and_commit(
        session, person_id, data.other_person_id, data.decision, data.note, actor=access.actor
    )
    view = next(v for v in link_history(session, person_id) if v.id == link.id)
    return LinkOut.of(view)


@page_router.get("/people/{person_id}")
def person_page(
    request: Request,
    person_id: str,
    session: Session = UNIT_OF_WORK,
    _: Access = on_record(Permission.READ, Person, "person_id"),
) -> Response:
    detail, results = _detail_with_results(session, person_id)
    incident = get_incident(session, detail.incident_id)
    return render(
        request,
        "person.html",
        {
            "person": detail,
            "results": results,
            "incident": incident,
            "nav_incident": incident,
            "decided": request.query_params.get("decided", ""),
            "alert_done": {"closed": "closed", "reopened": "reopened"}.get(
                request.query_params.get("alert", ""), ""
            ),
            "claim_ids": {c.id for c in detail.claims}
            | {c.id for p in detail.same_people for c in p.claims},
            "decisions": [d.value for d in LinkDecision],
            # what to compare beside each possible duplicate (age, status, place, ...)
            "duplicate_facts": person_facts(
                session, [d.person_id for d in detail.possible_duplicates]
            ),
        },
    )


@page_router.post("/people/{person_id}/links")
async def link_form(
    request: Request,
    person_id: str,
    access: Access = on_record(Permission.LINKS_WRITE, Person, "person_id"),
) -> Response:
    submitted = await request.form()
    values = {name: submitted.get(name, "") for name in ("other_person_id", "decision", "note")}
    texts = {name: value if isinstance(value, str) else "" for name, value in values.items()}
    return await run_in_threadpool(_link_form, request, access, person_id, texts)


def _link_form(
    request: Request, access: Access, person_id: str, values: dict[str, str]
) -> Response:
    failing_as(request, "Not decided")
    if values["decision"] not in LinkDecision._value2member_map_:
        raise InvalidInputError("Choose same, different or undecided.")
    decision = LinkDecision(values["decision"])
    with open_session(request) as session:
        decide_link_and_commit(
            session,
            person_id,
            values["other_person_id"],
            decision,
            values["note"],
            actor=access.actor,
        )
    return RedirectResponse(f"/people/{person_id}?decided={decision.value}", status_code=303)
