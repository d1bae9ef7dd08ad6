"""Tracing requests (inquiries): who is looking for a person, and how to reach them.

An inquiry is taken at a desk, with the enquirer's consent to keep their contacts for this
purpose (``consent`` must be true: :class:`ConsentRequiredError` otherwise). It belongs
to a record of the incident (its linked group is what it follows), or creates one: a
*missing* report from the desk's organisation about the named person, published by the
one publish rule (:func:`trace_app.domain.publish.publish_report`), which may attach it
to an existing record by the identity rule. Taking one writes an ``inquiry.created``
outbox event (the confirmation mail) in the same transaction, and an audit row that
names no contact.

Contacts (name, email, phone, note) are read only through :func:`get_inquiry` and
:func:`inquiries_for`, each of which writes an audit row (``inquiry.read_contacts``); who
may call them is the web layer's gate (``contacts:read``). Everyone may know how many
people are looking for someone (:func:`looking_for_count`). :func:`erase_contacts` leaves
a tombstone (when, by whom); exports never read this table.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from trace_app import i18n
from trace_app.domain import audit, status_events
from trace_app.domain.audit import Actor
from trace_app.domain.errors import InvalidInputError, NotFoundError
from trace_app.domain.groups import group_members
from trace_app.domain.publish import MAX_AGE, PersonInput, PublishReportInput, publish_report
from trace_app.domain.text import IdText, PersonNameText, clean_name
from trace_app.store.db import WRITE_TRANSACTION
from trace_app.store.models import ClaimStatus, Incident, Person
from trace_app.store.notification_models import (
    Delivery,
    DeliveryChannel,
    DeliveryState,
    EventKind,
    Inquiry,
    InquiryLink,
)
from trace_app.store.types import new_id, utc_now

MAX_EMAIL_CHARACTERS = 254
MAX_PHONE_CHARACTERS = 40
MAX_RELATIONSHIP_CHARACTERS = 100
MAX_INQUIRY_NOTE_CHARACTERS = 2000
# printable ASCII without spaces, one "@", a dot in the domain: an address a mail server
# takes, and never a header break
EMAIL_PATTERN = r"^[!#-?A-~]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$"
_EMAIL = re.compile(EMAIL_PATTERN)
PHONE_PATTERN = r"^\+?[0-9 ().\-/]+$"
_PHONE = re.compile(PHONE_PATTERN)
_NOTE_REFUSED = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
ERASED_NAME = None  # the tombstone keeps no name: "erased on ... by ..." says what happened
NEW_PERSON_SUMMARY = "Registered as missing by a tracing request at the desk."
NEW_PERSON_TEXT = (
    "Someone looking for this person asked the desk to register them as missing "
    "(a tracing request; the enquirer's details are kept apart, with their consent)."
)


class ConsentRequiredError(InvalidInputError):
    """An inquiry is kept only with the enquirer's consent (``"consent": true``)."""

    code = "consent_required"


class InquiryInputError(InvalidInputError):
    """An enquirer's field that cannot be used (an address, a phone number, a language)."""

    code = "invalid_inquiry"


class EnquirerInput(BaseModel):
    """Who is looking: their name, their relationship to the person, and how to reach
    them (an email address, a phone number or both)."""

    model_config = ConfigDict(extra="forbid")

    name: PersonNameText = Field(description="The enquirer's name.")
    relationship: Annotated[str, Field(min_length=1, max_length=MAX_RELATIONSHIP_CHARACTERS)] = (
        Field(description="Their relationship to the person: brother, neighbour, ...")
    )
    email: Annotated[str, Field(max_length=MAX_EMAIL_CHARACTERS)] | None = Field(
        default=None, description="Where updates are mailed (after the address is confirmed)."
    )
    phone: Annotated[str, Field(max_length=MAX_PHONE_CHARACTERS)] | None = None
    language: Annotated[str, Field(max_length=20)] = Field(
        default=i18n.DEFAULT_LANGUAGE,
        description="The language of the messages: " + ", ".join(i18n.LANGUAGES) + ".",
    )


class NewPersonInput(BaseModel):
    """The person looked for, when no record of them is chosen."""

    model_config = ConfigDict(extra="forbid")

    name: PersonNameText
    age: Annotated[int, Field(strict=True, ge=0, le=MAX_AGE)] | None = None


class InquiryInput(BaseModel):
    """A tracing request: for an existing record (``person_id``) or a new person
    (``person``), the enquirer, an optional note, and the enquirer's consent."""

    model_config = ConfigDict(extra="forbid")

    person_id: IdText | None = Field(
        default=None, description="The record of this incident the request is about."
    )
    person: NewPersonInput | None = Field(
        default=None,
        description="The person, when no record is chosen: a missing report is published "
        "for the desk's organisation (the identity rule may attach it to an existing record).",
    )
    enquirer: EnquirerInput
    note: Annotated[str, Field(max_length=MAX_INQUIRY_NOTE_CHARACTERS)] | None = None
    consent: StrictBool = Field(
        default=False,
        description="True: the enquirer agreed that their contacts are kept for this "
        "purpose (erased a set number of days after the request closes). Required.",
    )

    @model_validator(mode="after")
    def _one_person(self) -> InquiryInput:
        if (self.person_id is None) == (self.person is None):
            raise ValueError("Give either person_id (an existing record) or person (a new one).")
        return self


@dataclass(frozen=True, slots=True)
class InquiryView:
    """An inquiry with its contacts (only for those who may read them; audited)."""

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
    closed_at: datetime | None
    email_confirmed_at: datetime | None
    unsubscribed_at: datetime | None
    contacts_erased_at: datetime | None
    erased_by: str | None

    @classmethod
    def of(cls, row: Inquiry) -> InquiryView:
        """The row's columns of the same names."""
        return cls(**{f.name: getattr(row, f.name) for f in fields(cls)})


def _clean_enquirer(data: EnquirerInput) -> tuple[str, str, str | None, str | None, str]:
    """(name, relationship, email, phone, language) as stored, or InquiryInputError."""
    name = clean_name(data.name)
    relationship = clean_name(data.relationship)
    if not name:
        raise InquiryInputError("Enter the name of the person who is looking.")
    if not relationship or _NOTE_REFUSED.search(relationship):
        raise InquiryInputError(
            "Enter how they are related to the person (brother, neighbour, ...)."
        )
    email = (data.email or "").strip() or None
    phone = " ".join((data.phone or "").split()) or None
    if email is None and phone is None:
        raise InquiryInputError("Enter an email address or a phone number to reach them.")
    if email is not None and not _EMAIL.fullmatch(email):
        raise InquiryInputError("The email address does not look right (name@example.org).")
    if phone is not None and (not _PHONE.fullmatch(phone) or sum(c.isdigit() for c in phone) < 4):
        raise InquiryInputError(
            "The phone number does not look right: digits, spaces, +, -, (, ) only."
        )
    language = i18n.supported(data.language)
    if language is None:
        raise InquiryInputError(
            "Choose a language Trace writes in: " + ", ".join(i18n.LANGUAGES) + "."
        )
    return name, relationship, email, phone, language


def _clean_note(note: str | None) -> str | None:
    text = (note or "").strip()
    if not text:
        return None
    if _NOTE_REFUSED.search(text):
        raise InquiryInputError(
            "The note contains a control character (only tab and line breaks are allowed)."
        )
    return text


def create_inquiry(
    session: Session,
    incident_id: str,
    data: InquiryInput,
    *,
    actor: Actor,
    source: str | None = None,
    created_by: str | None = None,
) -> Inquiry:
    """Take a tracing request in ``incident_id`` (see the module); ``source`` is the desk's
    organisation, needed for a new person; ``created_by`` the account's user id. Raises
    :class:`ConsentRequiredError`, :class:`InquiryInputError`, :class:`NotFoundError` (an
    unknown incident, or a record of another incident) and the publish rule's errors,
    before anything is added. The caller commits."""
    if data.consent is not True:
        raise ConsentRequiredError(
            "The enquirer must agree that their contacts are kept for this request "
            '("consent": true); without it nothing is kept.'
        )
    name, relationship, email, phone, language = _clean_enquirer(data.enquirer)
    note = _clean_note(data.note)
    if not session.in_transaction():
        session.connection(execution_options=WRITE_TRANSACTION)  # SQLite: BEGIN IMMEDIATE
    if session.get(Incident, incident_id) is None:
        raise NotFoundError(f"No incident with id {incident_id!r}.")
    if data.person_id is not None:
        person = session.get(Person, data.person_id)
        if person is None or person.incident_id != incident_id:
            raise NotFoundError(f"No person with id {data.person_id!r} in this incident.")
        person_id = person.id
    else:
        assert data.person is not None  # the input's validator
        if not source:
            raise InquiryInputError(
                "Registering a new person publishes a missing report for your organisation, "
                "and your account has none here: ask a coordinator."
            )
        report = publish_report(
            session,
            PublishReportInput(
                incident_id=incident_id,
                source=source,
                summary=NEW_PERSON_SUMMARY,
                original_text=NEW_PERSON_TEXT,
                person=PersonInput(name=data.person.name, age=data.person.age),
                status=ClaimStatus.MISSING,
            ),
        )
        person_id = report.person_id
        audit.record(
            session,
            actor,
            "report.publish",
            object_type="report",
            object_id=report.id,
            incident_id=incident_id,
            touched=[f"person:{person_id}"],
            after={"source": source, "person": report.person_name, "status": report.status},
        )
    now = utc_now()
    inquiry = Inquiry(
        id=new_id("inq"),
        incident_id=incident_id,
        person_id=person_id,
        enquirer_name=name,
        relationship=relationship,
        email=email,
        phone=phone,
        language=language,
        note=note,
        consent_at=now,
        created_by=created_by,
        created_at=now,
    )
    session.add(inquiry)
    session.flush()
    state = status_events.read_groups(session, [person_id])
    key = state.group_of[person_id]
    lead = session.get(Person, key)
    status_events.write_event(
        session,
        incident_id,
        EventKind.INQUIRY_CREATED,
        key,
        lead.name if lead is not None else "",
        state.groups[key],
        previous_status=None,
        inquiry_id=inquiry.id,
    )
    audit.record(
        session,
        actor,
        "inquiry.create",
        object_type="inquiry",
        object_id=inquiry.id,
        incident_id=incident_id,
        touched=[f"person:{person_id}"],
        # never a contact: the trail says that there is one, not what it is
        after={
            "relationship": relationship,
            "email": email is not None,
            "phone": phone is not None,
            "language": language,
        },
    )
    return inquiry


def _group_records(session: Session, person_id: str) -> list[str]:
    return [pid for ids in group_members(session, [person_id]).values() for pid in ids]


def looking_for_count(session: Session, person_id: str) -> int:
    """How many open inquiries follow the person (any record of ``person_id``'s linked
    group): "2 people are looking for him". No contact is read, nothing is audited."""
    records = _group_records(session, person_id)
    if not records:
        return 0
    found = session.scalar(
        select(func.count(Inquiry.id)).where(
            Inquiry.person_id.in_(records), Inquiry.closed_at.is_(None)
        )
    )
    return int(found or 0)


def _audit_read(session: Session, actor: Actor, incident_id: str, ids: Sequence[str]) -> None:
    audit.record(
        session,
        actor,
        "inquiry.read_contacts",
        object_type="inquiry",
        object_id=ids[0] if len(ids) == 1 else "",
        incident_id=incident_id,
        touched=[f"inquiry:{i}" for i in ids],
    )


def get_inquiry(session: Session, inquiry_id: str, *, actor: Actor) -> InquiryView:
    """One inquiry with its contacts; writes the audit row of the read (the caller
    commits). :class:`NotFoundError` for an unknown id."""
    row = session.get(Inquiry, inquiry_id)
    if row is None:
        raise NotFoundError(f"No inquiry with id {inquiry_id!r}.")
    _audit_read(session, actor, row.incident_id, [row.id])
    return InquiryView.of(row)


def inquiries_for(session: Session, person_id: str, *, actor: Actor) -> list[InquiryView]:
    """Every inquiry following the person (any record of the group), oldest first, with
    contacts; one audit row names them all (none when there are none). The caller
    commits."""
    records = _group_records(session, person_id)
    rows = list(
        session.scalars(
            select(Inquiry)
            .where(Inquiry.person_id.in_(records or [person_id]))
            .order_by(Inquiry.created_at, Inquiry.id)
        )
    )
    if rows:
        _audit_read(session, actor, rows[0].incident_id, [r.id for r in rows])
    return [InquiryView.of(r) for r in rows]


def incident_of_inquiry(session: Session, inquiry_id: str) -> str:
    """The incident an inquiry belongs to (the gate's object check); NotFoundError."""
    found = session.scalar(select(Inquiry.incident_id).where(Inquiry.id == inquiry_id))
    if found is None:
        raise NotFoundError(f"No inquiry with id {inquiry_id!r}.")
    return str(found)


def tombstone(session: Session, row: Inquiry, erased_by: str) -> datetime:
    """Erase ``row``'s contacts and keep the row: name, email, phone and note become
    NULL, the time and who erased them are kept; its links stop working and its mail
    waiting to be sent is skipped; returns the time. No audit row (the callers write
    theirs)."""
    now = utc_now()
    row.enquirer_name = ERASED_NAME
    row.email = None
    row.phone = None
    row.note = None
    row.contacts_erased_at = now
    row.erased_by = erased_by[:200]
    session.execute(
        update(Delivery)
        .where(
            Delivery.channel == DeliveryChannel.EMAIL.value,
            Delivery.target_id == row.id,
            Delivery.state == DeliveryState.PENDING.value,
        )
        .values(state=DeliveryState.SKIPPED.value, last_error="contacts erased")
    )
    for link in session.scalars(select(InquiryLink).where(InquiryLink.inquiry_id == row.id)):
        session.delete(link)
    return now


def erase_contacts(session: Session, inquiry_id: str, *, actor: Actor) -> InquiryView:
    """Erase one inquiry's contacts on request (a tombstone remains), audited as
    ``inquiry.erase``. Erasing an erased inquiry changes nothing and answers the same.
    The caller commits."""
    row = session.get(Inquiry, inquiry_id, with_for_update=True)
    if row is None:
        raise NotFoundError(f"No inquiry with id {inquiry_id!r}.")
    if row.contacts_erased_at is None:
        erased_at = tombstone(session, row, actor.name)
        session.flush()
        audit.record(
            session,
            actor,
            "inquiry.erase",
            object_type="inquiry",
            object_id=row.id,
            incident_id=row.incident_id,
            touched=[f"person:{row.person_id}"],
            after={"contacts_erased_at": erased_at.isoformat()},
        )
    return InquiryView.of(row)


def close_inquiry(session: Session, inquiry_id: str, *, actor: Actor) -> InquiryView:
    """A coordinator records that the enquirer was told (by phone, at the desk): the
    inquiry closes now, and its contacts are erased after the incident's retention
    (:mod:`trace_app.notifications.retention`). Audited as ``inquiry.close``; closing a
    closed one changes nothing. The caller commits."""
    row = session.get(Inquiry, inquiry_id, with_for_update=True)
    if row is None:
        raise NotFoundError(f"No inquiry with id {inquiry_id!r}.")
    if row.closed_at is None:
        row.closed_at = utc_now()
        session.flush()
        audit.record(
            session,
            actor,
            "inquiry.close",
            object_type="inquiry",
            object_id=row.id,
            incident_id=row.incident_id,
            touched=[f"person:{row.person_id}"],
            after={"closed_at": row.closed_at.isoformat(), "why": "enquirer informed"},
        )
    return InquiryView.of(row)
