"""Tracing requests and follow-ups (issue 41, docs/notifications.md):

- ``POST /api/incidents/{incident_id}/inquiries`` (reports:write): take a request;
- ``GET /api/inquiries/{inquiry_id}``, ``POST .../erase``, ``POST .../close`` and
  ``GET /api/people/{person_id}/inquiries`` (contacts:read; each read audited);
- ``GET /api/people/{person_id}/looking-for`` (read): how many are looking, no contacts;
- ``GET /api/incidents/{incident_id}/follow-ups`` and ``POST
  .../follow-ups/{follow_up_id}/done`` (contacts:read);
- ``PUT /api/incidents/{incident_id}/contact-retention`` (incidents:write, as the time
  zone): how many days contacts are kept after a request closes.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Request
from sqlalchemy.orm import Session

from trace_app.accounts.permissions import Permission
from trace_app.domain.errors import NotFoundError
from trace_app.domain.text import ID_PATTERN, MAX_ID_CHARACTERS, is_id
from trace_app.notifications import follow_ups, inquiries, retention
from trace_app.notifications.inquiries import InquiryInput
from trace_app.store.models import Person
from trace_app.web.auth import reporting_organization
from trace_app.web.deps import UNIT_OF_WORK
from trace_app.web.errors import COMMON_RESPONSES, NOT_FOUND, ErrorOut, ValidationErrorOut
from trace_app.web.gate import Access, custom, gated_router, in_incident, on_record
from trace_app.web.inquiries.schemas import (
    FollowUpList,
    FollowUpOut,
    InquiryCreatedOut,
    InquiryList,
    InquiryOut,
    LookingForOut,
    RetentionIn,
    RetentionOut,
)
from trace_app.web.params import IncidentId, PersonId

api_router = gated_router(prefix="/api", tags=["api"], responses=COMMON_RESPONSES)

_Id = Path(max_length=MAX_ID_CHARACTERS, pattern=ID_PATTERN)
InquiryId = Annotated[str, _Id]
FollowUpId = Annotated[str, _Id]


def _inquiry_incident(session: Session, request: Request) -> str:
    """The gate's finder: the incident of the inquiry named in the path."""
    value = str(request.path_params.get("inquiry_id", ""))
    if not value or len(value) > MAX_ID_CHARACTERS or not is_id(value):
        raise NotFoundError(f"No inquiry with id {value[:MAX_ID_CHARACTERS]!r}.")
    return inquiries.incident_of_inquiry(session, value)


ON_INQUIRY = custom(Permission.CONTACTS_READ, _inquiry_incident)


@api_router.post(
    "/incidents/{incident_id}/inquiries",
    status_code=201,
    response_model=InquiryCreatedOut,
    responses={
        403: {
            "model": ErrorOut,
            "description": "Cross-site request, not allowed, or (for a new person) no "
            "organisation to publish the missing report for",
        },
        404: {"model": ErrorOut, "description": "No such incident, or person in it"},
        422: {
            "model": ValidationErrorOut,
            "description": 'No "consent": true (code consent_required), or a bad field '
            "(code invalid_inquiry, or invalid_body)",
        },
    },
)
def create_inquiry(
    incident_id: IncidentId,
    data: InquiryInput,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.REPORTS_WRITE),
) -> InquiryCreatedOut:
    """Take a tracing request: who is looking for a person (an existing record, or a new
    person with a missing report from the desk's organisation), their contacts, and their
    consent. Writes an ``inquiry.created`` event (the confirmation mail); audited."""
    source = None
    if data.person is not None:
        source = reporting_organization(access.principal, access.incident)
    inquiry = inquiries.create_inquiry(
        session,
        access.incident,
        data,
        actor=access.actor,
        source=source,
        created_by=access.principal.user_id,
    )
    session.commit()
    return InquiryCreatedOut(id=inquiry.id, person_id=inquiry.person_id)


@api_router.get("/inquiries/{inquiry_id}", response_model=InquiryOut, responses=NOT_FOUND)
def get_inquiry(
    inquiry_id: InquiryId,
    session: Session = UNIT_OF_WORK,
    access: Access = ON_INQUIRY,
) -> InquiryOut:
    """One tracing request with the enquirer's contacts; the read is audited."""
    return InquiryOut.of(inquiries.get_inquiry(session, inquiry_id, actor=access.actor))


@api_router.post("/inquiries/{inquiry_id}/erase", response_model=InquiryOut, responses=NOT_FOUND)
def erase_inquiry(
    inquiry_id: InquiryId,
    session: Session = UNIT_OF_WORK,
    access: Access = ON_INQUIRY,
) -> InquiryOut:
    """Erase the enquirer's contacts on request: a tombstone says when and by whom.
    Audited; erasing again changes nothing."""
    return InquiryOut.of(inquiries.erase_contacts(session, inquiry_id, actor=access.actor))


@api_router.post("/inquiries/{inquiry_id}/close", response_model=InquiryOut, responses=NOT_FOUND)
def close_inquiry(
    inquiry_id: InquiryId,
    session: Session = UNIT_OF_WORK,
    access: Access = ON_INQUIRY,
) -> InquiryOut:
    """Record that the enquirer was told (by phone, at the desk): the request closes and
    its contacts are erased after the incident's retention. Audited."""
    return InquiryOut.of(inquiries.close_inquiry(session, inquiry_id, actor=access.actor))


@api_router.get("/people/{person_id}/inquiries", response_model=InquiryList, responses=NOT_FOUND)
def person_inquiries(
    person_id: PersonId,
    session: Session = UNIT_OF_WORK,
    access: Access = on_record(Permission.CONTACTS_READ, Person, "person_id"),
) -> InquiryList:
    """Every tracing request following the person (any record of the linked group), with
    contacts; the read is audited."""
    found = inquiries.inquiries_for(session, person_id, actor=access.actor)
    return InquiryList(items=[InquiryOut.of(v) for v in found])


@api_router.get(
    "/people/{person_id}/looking-for", response_model=LookingForOut, responses=NOT_FOUND
)
def looking_for(
    person_id: PersonId,
    session: Session = UNIT_OF_WORK,
    _: Access = on_record(Permission.READ, Person, "person_id"),
) -> LookingForOut:
    """How many people are looking for the person (open requests): no contacts."""
    return LookingForOut(person_id=person_id, count=inquiries.looking_for_count(session, person_id))


@api_router.get(
    "/incidents/{incident_id}/follow-ups", response_model=FollowUpList, responses=NOT_FOUND
)
def list_follow_ups(
    incident_id: IncidentId,
    include_done: bool = False,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.CONTACTS_READ),
) -> FollowUpList:
    """The incident's follow-ups (open ones unless ``include_done``), oldest first: after
    a death, inform the family in person; each lists the enquirers with their contacts
    (the read is audited)."""
    found = follow_ups.list_follow_ups(
        session, access.incident, include_done=include_done, actor=access.actor
    )
    return FollowUpList(items=[FollowUpOut.of(v) for v in found])


@api_router.post(
    "/incidents/{incident_id}/follow-ups/{follow_up_id}/done",
    response_model=FollowUpOut,
    responses={
        **NOT_FOUND,
        409: {"model": ErrorOut, "description": "Already done (code follow_up_done)"},
    },
)
def follow_up_done(
    incident_id: IncidentId,
    follow_up_id: FollowUpId,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.CONTACTS_READ),
) -> FollowUpOut:
    """The family was told in person: the follow-up is done and the enquirers' requests
    close (their retention starts). Audited."""
    view = follow_ups.mark_done(session, access.incident, follow_up_id, actor=access.actor)
    return FollowUpOut.of(view)


@api_router.put(
    "/incidents/{incident_id}/contact-retention",
    response_model=RetentionOut,
    responses={
        403: {"model": ErrorOut, "description": "Cross-site request, or not allowed"},
        404: {"model": ErrorOut, "description": "No such incident"},
    },
)
def put_contact_retention(
    incident_id: IncidentId,
    data: RetentionIn,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.INCIDENTS_WRITE),
) -> RetentionOut:
    """Keep the enquirers' contacts this many days after their request closes (default
    90); ``trace inquiries purge`` erases them after it. Audited when it changes."""
    days = retention.set_retention_days(session, access.incident, data.days, actor=access.actor)
    return RetentionOut(incident_id=access.incident, days=days)
