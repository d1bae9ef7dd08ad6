"""The JSON API (a stable contract, documented in docs/trace.md).

Lists are objects ``{"items": [...], "total", "offset", "limit"}``; errors are
``{"detail": message, "code": code}``. Ids are opaque strings.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.orm import Session

from trace_app import demo_reset
from trace_app.accounts.permissions import Permission
from trace_app.domain import people_cursor, queries, search
from trace_app.domain.errors import (
    InvalidInputError,
)
from trace_app.domain.incidents import MAX_DESCRIPTION_CHARACTERS as MAX_INCIDENT_DESCRIPTION
from trace_app.domain.incidents import MAX_NAME_CHARACTERS as MAX_INCIDENT_NAME
from trace_app.domain.incidents import create_incident
from trace_app.domain.publish import PublishReportInput, ReportContent, publish_and_commit
from trace_app.domain.queries import AlertListing, PersonListing
from trace_app.domain.search import AlertFilter
from trace_app.domain.text import ID_PATTERN, MAX_ID_CHARACTERS, SourceNameText
from trace_app.domain.time_zones import DEFAULT_TIME_ZONE, MAX_TIME_ZONE_CHARACTERS
from trace_app.store.models import AlertState, ClaimStatus, Report
from trace_app.web.auth import authorize, reporting_organization
from trace_app.web.deps import DEMO_ONLY_MESSAGE, UNIT_OF_WORK, is_demo
from trace_app.web.errors import (
    COMMON_RESPONSES,
    ErrorOut,
    ValidationErrorOut,
)
from trace_app.web.gate import Access, gated_router, in_incident, needs, on_record

# The largest list offset accepted (far beyond any incident; SQLite's integers end at 2**63).
MAX_OFFSET = 1_000_000_000

router = gated_router(prefix="/api", tags=["api"], responses=COMMON_RESPONSES)

IncidentId = Annotated[str, Path(max_length=MAX_ID_CHARACTERS, pattern=ID_PATTERN)]
AlertId = Annotated[str, Path(max_length=MAX_ID_CHARACTERS, pattern=ID_PATTERN)]
ReportId = Annotated[str, Path(max_length=MAX_ID_CHARACTERS, pattern=ID_PATTERN)]
SearchText = Annotated[str, Query(max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$")]
After = Annotated[
    str,
    Query(
        max_length=people_cursor.MAX_CURSOR_CHARACTERS,
        description="The next_after of the page before (no q or filter with it): the page "
        "after it, found by keyset however deep. Blank: the first page.",
    ),
]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]
Limit = Annotated[int, Query(ge=1, le=queries.MAX_PAGE_SIZE)]


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


class IncidentOut(BaseModel):
    id: str
    name: str
    description: str
    time_zone: str = Field(
        description="The IANA zone its pages show times in; the API's times stay UTC."
    )
    reports: int
    people: int
    open_alerts: int


class IncidentList(BaseModel):
    items: list[IncidentOut]


class ReportPage(BaseModel):
    items: list[ReportOut]
    total: int
    offset: int
    limit: int


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


class ResetIn(BaseModel):
    """The reset takes an empty object."""

    model_config = ConfigDict(extra="forbid")


class ResetOut(BaseModel):
    incident_id: str
    reports: int
    people: int
    open_alerts: int


class ReportIn(ReportContent):
    """A report to publish. Its source is the signed-in member's organisation in the
    incident: leave ``source`` out, or name that organisation; another name is refused."""

    source: SourceNameText | None = Field(
        default=None,
        description="Your organisation (from your account); any other name is refused (403).",
    )


NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorOut, "description": "Unknown id"}}


@router.post(
    "/reports",
    status_code=201,
    response_model=ReportOut,
    responses={
        403: {"model": ErrorOut, "description": "Cross-site request, or not allowed"},
        404: {"model": ErrorOut, "description": "No such incident"},
        422: {
            "model": ValidationErrorOut,
            "description": "Empty summary or text (code empty_report), or another bad field",
        },
        429: {"model": ErrorOut, "description": "Too many reports from this account"},
    },
)
def create_report(
    request: Request,
    data: ReportIn,
    session: Session = UNIT_OF_WORK,
    access: Access = needs(Permission.REPORTS_WRITE),
) -> ReportOut | JSONResponse:
    """Publish a report (the same function as the publish form) for the signed-in
    member's organisation in this incident: the source is the account's, never a field."""
    principal = access.principal
    authorize(principal, Permission.REPORTS_WRITE, data.incident_id)  # named by the body
    source = reporting_organization(principal, data.incident_id, data.source)
    refusal = request.app.state.publish_limiter.refusal(principal.token_id or principal.user_id)
    if refusal is not None:
        return JSONResponse(
            {"detail": refusal.message, "code": "too_many_reports"},
            status_code=429,
            headers={"Retry-After": str(refusal.retry_after_s)},
        )
    report = publish_and_commit(
        session, PublishReportInput.from_content(data, source), actor=principal.actor
    )
    return ReportOut.of(queries.get_report(session, report.id))


@router.get("/incidents", response_model=IncidentList)
def list_incidents(
    session: Session = UNIT_OF_WORK, access: Access = needs(Permission.READ)
) -> IncidentList:
    """The incidents this account is a member of, with their counts."""
    return IncidentList(
        items=[
            IncidentOut(
                id=s.incident.id,
                name=s.incident.name,
                description=s.incident.description,
                time_zone=s.incident.time_zone,
                reports=s.reports,
                people=s.people,
                open_alerts=s.open_alerts,
            )
            for s in queries.list_incidents(session)
            if access.principal.may_see(s.incident.id)
        ]
    )


class IncidentIn(BaseModel):
    """A new incident: a name no other incident has (any case), and what it is."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=MAX_INCIDENT_NAME)
    description: str = Field(default="", max_length=MAX_INCIDENT_DESCRIPTION)
    time_zone: str = Field(
        default=DEFAULT_TIME_ZONE,
        max_length=MAX_TIME_ZONE_CHARACTERS,
        description="An IANA zone name such as Asia/Kathmandu; pages show times in it.",
    )


@router.post(
    "/incidents",
    status_code=201,
    response_model=IncidentOut,
    responses={
        403: {"model": ErrorOut, "description": "Cross-site request, or not a coordinator"},
        422: {
            "model": ValidationErrorOut,
            "description": "A bad or already used name, or an unknown time zone",
        },
    },
)
def create_incident_api(
    data: IncidentIn,
    session: Session = UNIT_OF_WORK,
    access: Access = needs(Permission.INCIDENTS_WRITE),
) -> IncidentOut:
    """A coordinator of every incident opens a new incident (audited)."""
    incident = create_incident(
        session, data.name, data.description, time_zone=data.time_zone, actor=access.actor
    )
    session.commit()
    return IncidentOut(
        id=incident.id,
        name=incident.name,
        description=incident.description,
        time_zone=incident.time_zone,
        reports=0,
        people=0,
        open_alerts=0,
    )


@router.get("/incidents/{incident_id}/reports", response_model=ReportPage, responses=NOT_FOUND)
def list_reports(
    incident_id: IncidentId,
    offset: Offset = 0,
    limit: Limit = 100,
    session: Session = UNIT_OF_WORK,
    _: Access = in_incident(Permission.READ),
) -> ReportPage:
    page = queries.reports_page(session, incident_id, offset=offset, limit=limit)
    return ReportPage(
        items=[ReportOut.of(r) for r in page.items],
        total=page.total,
        offset=page.offset,
        limit=page.limit,
    )


@router.get("/reports/{report_id}", response_model=ReportOut, responses=NOT_FOUND)
def get_report(
    report_id: ReportId,
    session: Session = UNIT_OF_WORK,
    _: Access = on_record(Permission.READ, Report, "report_id"),
) -> ReportOut:
    return ReportOut.of(queries.get_report(session, report_id))


PEOPLE_RESPONSES: dict[int | str, dict[str, Any]] = {
    **NOT_FOUND,
    422: {
        "model": ValidationErrorOut,
        "description": "A bad parameter; an after cursor Trace did not write (code "
        "bad_cursor), or after with q, a filter or an offset (code invalid_input)",
    },
}
AFTER_WITH_SEARCH = (
    "after pages the list without a search: leave out q and the filters, or page the "
    "search with offset."
)
AFTER_WITH_OFFSET = "Give after or offset, not both: after already says where the page starts."


@router.get(
    "/incidents/{incident_id}/people", response_model=PeoplePage, responses=PEOPLE_RESPONSES
)
def list_people(
    incident_id: IncidentId,
    q: SearchText = "",
    status: ClaimStatus | None = None,
    alert: AlertFilter | None = None,
    organization: SearchText = "",
    offset: Offset = 0,
    limit: Limit = 100,
    after: After = "",
    session: Session = UNIT_OF_WORK,
    _: Access = in_incident(Permission.READ),
) -> PeoplePage:
    """The incident's people. Without ``q`` or a filter: by name (then id), with
    ``next_after``, the cursor of the next page: pass it as ``after`` to walk a long list
    at the same cost per page however deep (``offset`` works too, but reads every earlier
    row). With them: the people whose name matches ``q`` (ignoring case, accents and
    script, tolerating typos), best first, then in natural order; ``status`` is the
    latest claim's status, ``alert=open`` people with an open alert, ``alert=closed``
    people whose alerts are all closed, ``organization`` people that organisation
    reported on; paged by ``offset`` only."""
    searching = bool(q.strip() or status or alert or organization.strip())
    if after and searching:
        raise InvalidInputError(AFTER_WITH_SEARCH)
    if after and offset:
        raise InvalidInputError(AFTER_WITH_OFFSET)
    if searching:
        page = search.search_page(
            session,
            incident_id,
            q=q,
            status=status.value if status else None,
            alert=alert,
            organization=organization.strip() or None,
            offset=offset,
            limit=limit,
        )
    elif after:
        page = queries.people_page_after(session, incident_id, after=after, limit=limit)
    else:
        page = queries.people_page(session, incident_id, offset=offset, limit=limit)
    return PeoplePage(
        items=[PersonOut.of(p) for p in page.items],
        total=page.total,
        offset=page.offset,
        limit=page.limit,
        next_after=page.next_after,
    )


@router.get("/incidents/{incident_id}/alerts", response_model=AlertPage, responses=NOT_FOUND)
def list_alerts(
    incident_id: IncidentId,
    state: AlertState = AlertState.OPEN,
    offset: Offset = 0,
    limit: Limit = 100,
    session: Session = UNIT_OF_WORK,
    _: Access = in_incident(Permission.READ),
) -> AlertPage:
    """The incident's alerts in one state (default open), newest first."""
    page = queries.alerts_page(session, incident_id, state=state, offset=offset, limit=limit)
    return AlertPage(
        items=[AlertOut.of(a) for a in page.items],
        total=page.total,
        offset=page.offset,
        limit=page.limit,
    )


@router.post(
    "/demo/reset",
    response_model=ResetOut,
    responses={403: {"model": ErrorOut, "description": "Not a demo server (code demo_only)"}},
)
def reset(
    request: Request,
    _body: ResetIn,
    session: Session = UNIT_OF_WORK,
    access: Access = needs(Permission.DEMO_RESET),
) -> ResetOut | JSONResponse:
    """Delete everything (investigation runs included) and seed the demo again.

    Only on a demo server (``trace demo``, ``trace serve --demo``); elsewhere 403."""
    if not is_demo(request):
        return JSONResponse({"detail": DEMO_ONLY_MESSAGE, "code": "demo_only"}, status_code=403)
    authorize(access.principal, Permission.DEMO_RESET, None)  # it deletes every incident
    incident = demo_reset.reset(session, request.app.state.settings, actor=access.actor)
    session.commit()
    summary = next(s for s in queries.list_incidents(session) if s.incident.id == incident.id)
    return ResetOut(
        incident_id=incident.id,
        reports=summary.reports,
        people=summary.people,
        open_alerts=summary.open_alerts,
    )
