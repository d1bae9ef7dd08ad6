"""Tracing-request pages (issue 41, docs/notifications.md "Pages"):

- ``GET /people/{person_id}/inquiries/new`` and ``GET /incidents/{incident_id}/inquiries/new``
  (reports:write): the desk's form, for a record or for a person not found (``?name=``);
- ``POST /incidents/{incident_id}/inquiries`` (reports:write): take the request
  (Post/Redirect/Get to the person page; a refusal shows the form again);
- ``GET /people/{person_id}/inquiries`` (contacts:read): who is looking and how to reach
  them; each showing is audited (``inquiry.read_contacts``); ``?part=contacts`` answers
  the folded block of the person page alone (htmx);
- ``POST /inquiries/{inquiry_id}/erase`` and ``.../close`` (contacts:read).

The person page's "N people are looking for this person" comes from the template global
``looking_for`` (:func:`setup`), which reads a count and no contact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse
from pydantic import ValidationError
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app import i18n
from trace_app.accounts.permissions import Permission
from trace_app.domain.errors import NotFoundError, RefusedError, TraceError
from trace_app.domain.publish import MAX_AGE
from trace_app.domain.queries import get_incident
from trace_app.i18n import N_
from trace_app.notifications import inquiries
from trace_app.notifications.inquiries import InquiryInput, InquiryInputError
from trace_app.store.models import Incident, Person
from trace_app.web.auth import reporting_organization
from trace_app.web.deps import UNIT_OF_WORK, database, render
from trace_app.web.failures import failing_as, refusal_of
from trace_app.web.gate import Access, gated_router, in_incident, on_record
from trace_app.web.inquiries.routes import ON_INQUIRY

page_router = gated_router(include_in_schema=False)

TEXT_FIELDS = (
    "person_id",
    "person_name",
    "person_age",
    "enquirer_name",
    "relationship",
    "email",
    "phone",
    "language",
    "note",
)


@dataclass
class InquiryForm:
    """What the desk typed, kept as text so that a refused form shows it again."""

    person_id: str = ""
    person_name: str = ""
    person_age: str = ""
    enquirer_name: str = ""
    relationship: str = ""
    email: str = ""
    phone: str = ""
    language: str = i18n.DEFAULT_LANGUAGE
    note: str = ""
    consent: bool = False
    errors: list[str] = field(default_factory=list)

    @classmethod
    def from_mapping(cls, data: Mapping[str, object]) -> InquiryForm:
        def text(name: str) -> str:
            value = data.get(name, "")
            return value if isinstance(value, str) else ""

        form = cls(consent=text("consent") == "yes")
        for name in TEXT_FIELDS:
            setattr(form, name, text(name))
        return form

    def to_input(self) -> InquiryInput:
        """The domain's input, or :class:`InquiryInputError` in words for the desk."""
        age: int | None = None
        if self.person_age.strip():
            if not self.person_age.strip().isdigit() or int(self.person_age) > MAX_AGE:
                raise InquiryInputError(
                    i18n.gettext("Age must be a whole number from 0 to {max}.").format(max=MAX_AGE)
                )
            age = int(self.person_age)
        person: dict[str, Any] | None = None
        if not self.person_id.strip():
            if not self.person_name.strip():
                raise InquiryInputError(i18n.gettext("Enter the name of the person looked for."))
            person = {"name": self.person_name, "age": age}
        try:
            return InquiryInput.model_validate(
                {
                    "person_id": self.person_id.strip() or None,
                    "person": person,
                    "enquirer": {
                        "name": self.enquirer_name,
                        "relationship": self.relationship,
                        "email": self.email.strip() or None,
                        "phone": self.phone.strip() or None,
                        "language": self.language or i18n.DEFAULT_LANGUAGE,
                    },
                    "note": self.note.strip() or None,
                    "consent": self.consent,
                }
            )
        except ValidationError as exc:
            raise InquiryInputError(_first_problem(exc)) from exc


FIELD_WORDS = {
    "enquirer.name": N_("The name of the person who is looking"),
    "enquirer.relationship": N_("Their relationship"),
    "enquirer.email": N_("The email address"),
    "enquirer.phone": N_("The phone number"),
    "enquirer.language": N_("The language"),
    "person.name": N_("The name of the person looked for"),
    "note": N_("The note"),
}


def _first_problem(exc: ValidationError) -> str:
    """One sentence for the first field the input refused (which field, and too long or
    missing), in the page's language."""
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(p) for p in error["loc"] if not isinstance(p, int))
    label = i18n.gettext(FIELD_WORDS.get(where, N_("A field")))
    if error["type"] in ("string_too_long", "too_long"):
        return i18n.gettext("{field} is too long.").format(field=label)
    return i18n.gettext("{field} is missing or cannot be used.").format(field=label)


def _language_choices() -> list[tuple[str, str]]:
    return list(i18n.LANGUAGES.items())


def _form_page(
    request: Request,
    incident: Incident,
    form: InquiryForm,
    person: Person | None,
    status_code: int = 200,
) -> Response:
    return render(
        request,
        "inquiry_new.html",
        {
            "incident": incident,
            "nav_incident": incident,
            "form": form,
            "person": person,
            "languages": _language_choices(),
            "retention_days": incident.contact_retention_days,
        },
        status_code,
    )


@page_router.get("/people/{person_id}/inquiries/new")
def new_for_person(
    request: Request,
    person_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = on_record(Permission.REPORTS_WRITE, Person, "person_id"),
) -> Response:
    """The desk's form for someone looking for this person."""
    person = session.get(Person, person_id)
    if person is None:
        raise NotFoundError(f"No person with id {person_id!r}.")
    incident = get_incident(session, access.incident)
    form = InquiryForm(person_id=person.id, language=i18n.current_language())
    return _form_page(request, incident, form, person)


@page_router.get("/incidents/{incident_id}/inquiries/new")
def new_for_name(
    request: Request,
    incident_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.REPORTS_WRITE),
) -> Response:
    """The form after a search found no one: the person's name from ``?name=``."""
    incident = get_incident(session, access.incident)
    name = " ".join(request.query_params.get("name", "").split())[:200]
    form = InquiryForm(person_name=name, language=i18n.current_language())
    return _form_page(request, incident, form, None)


@page_router.post("/incidents/{incident_id}/inquiries")
async def take_request(
    request: Request,
    incident_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = in_incident(Permission.REPORTS_WRITE),
) -> Response:
    submitted = await request.form()
    form = InquiryForm.from_mapping(submitted)
    return await run_in_threadpool(_take_request, request, session, access, form)


def _take_request(
    request: Request, session: Session, access: Access, form: InquiryForm
) -> Response:
    failing_as(request, i18n.gettext("Request not taken"))

    def take() -> str:
        data = form.to_input()
        source = None
        if data.person is not None:
            source = reporting_organization(access.principal, access.incident)
        made = inquiries.create_inquiry(
            session,
            access.incident,
            data,
            actor=access.actor,
            source=source,
            created_by=access.principal.user_id,
        )
        session.commit()
        return made.person_id

    person_id, refusal = refusal_of(take)
    if person_id is None:  # the form again, with what was typed and why
        assert refusal is not None
        session.rollback()
        if isinstance(refusal, RefusedError) or (
            isinstance(refusal, NotFoundError) and form.person_id
        ):
            raise refusal  # the error page (a refusal is audited); a record elsewhere: 404
        form.errors = [_refusal_words(refusal)]
        incident = get_incident(session, access.incident)
        person = session.get(Person, form.person_id) if form.person_id else None
        return _form_page(request, incident, form, person, 422)
    return RedirectResponse(f"/people/{person_id}?inquiry=taken#looking-for", status_code=303)


def _refusal_words(refusal: TraceError) -> str:
    """The refusal in the page's language when the catalogue has it."""
    return i18n.gettext(str(refusal))


@page_router.get("/people/{person_id}/inquiries")
def contacts_page(
    request: Request,
    person_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = on_record(Permission.CONTACTS_READ, Person, "person_id"),
) -> Response:
    """Who is looking for the person and how to reach them: the read is audited, once
    per showing (the full page, or the person page's folded block)."""
    person = session.get(Person, person_id)
    if person is None:
        raise NotFoundError(f"No person with id {person_id!r}.")
    incident = get_incident(session, access.incident)
    found = inquiries.inquiries_for(session, person_id, actor=access.actor)
    part = request.query_params.get("part") == "contacts"
    return render(
        request,
        "_inquiry_contacts.html" if part else "inquiry_contacts.html",
        {
            "incident": incident,
            "nav_incident": incident,
            "person": person,
            "enquirers": found,
            "languages": i18n.LANGUAGES,
            "done": request.query_params.get("done", ""),
        },
    )


@page_router.post("/inquiries/{inquiry_id}/erase")
def erase(
    request: Request,
    inquiry_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = ON_INQUIRY,
) -> Response:
    """Erase one enquirer's contacts on request: a tombstone stays (when, by whom)."""
    failing_as(request, i18n.gettext("Not erased"))
    view = inquiries.erase_contacts(session, inquiry_id, actor=access.actor)
    return RedirectResponse(
        f"/people/{view.person_id}/inquiries?done=erased#inquiry-{view.id}", status_code=303
    )


@page_router.post("/inquiries/{inquiry_id}/close")
def close(
    request: Request,
    inquiry_id: str,
    session: Session = UNIT_OF_WORK,
    access: Access = ON_INQUIRY,
) -> Response:
    """The enquirer was told (by phone, at the desk): the request closes."""
    failing_as(request, i18n.gettext("Not closed"))
    view = inquiries.close_inquiry(session, inquiry_id, actor=access.actor)
    return RedirectResponse(
        f"/people/{view.person_id}/inquiries?done=closed#inquiry-{view.id}", status_code=303
    )


def looking_for(request: Request, person_id: str) -> int:
    """How many open requests follow the person (a template global for the person page;
    a count, no contact, nothing audited)."""
    with database(request).sessions() as session:
        return inquiries.looking_for_count(session, person_id)


def setup(app: FastAPI) -> None:
    """The person page's count (``_looking_for.html``)."""
    app.state.templates.env.globals["looking_for"] = looking_for
