"""The publish form, named by what the user does: "Publish a report" (``/publish``).

- ``GET /publish?incident_id=…&person_id=…``: the form. Started from a person's page
  (its link "Publish a report about this person") it carries that person: the name is
  shown, the person's id travels in a hidden field, and nobody types an id.
- ``POST /publish``: publishes (Post/Redirect/Get to the report), or shows the form again
  with each refusal beside its field (422). The status has no default: the reporter must
  choose one. The reported time is typed in the incident's time zone and stored in UTC.
- ``GET /organizations`` (the page's old name) redirects to ``/publish`` with its query;
  ``POST /organizations/reports`` (the old form address) still publishes.
"""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app.accounts.permissions import Permission
from trace_app.accounts.principal import Principal
from trace_app.domain import queries
from trace_app.domain.publish import publish_and_commit
from trace_app.domain.time_zones import DEFAULT_TIME_ZONE, format_local
from trace_app.i18n import gettext
from trace_app.store.models import Incident, Person
from trace_app.store.types import utc_now
from trace_app.web.auth import authorize, reporting_organization
from trace_app.web.deps import UNIT_OF_WORK, open_session, render
from trace_app.web.failures import refusal_of
from trace_app.web.gate import Access, gated_router, needs, on_query_record
from trace_app.web.reports.forms import STATUSES, ReportForm

router = gated_router(include_in_schema=False)

PUBLISH_PATH = "/publish"


def _publishable(session: Session, principal: Principal) -> list[Incident]:
    """The incidents this principal may publish to, in the incidents list's order."""
    return [
        s.incident
        for s in queries.list_incidents(session)
        if principal.may_see(s.incident.id)
        and principal.can(Permission.REPORTS_WRITE, s.incident.id)
    ]


def _chosen_person(session: Session, form: ReportForm) -> Person | None:
    """The person the form carries, when it names one of its incident's people."""
    if not form.person_id:
        return None
    person = session.get(Person, form.person_id)
    if person is None or person.incident_id != form.incident_id:
        return None
    return person


def _form_page(
    request: Request,
    session: Session,
    principal: Principal,
    form: ReportForm,
    status_code: int = 200,
) -> Response:
    incidents = _publishable(session, principal)
    selected = next((i for i in incidents if i.id == form.incident_id), None)
    zone = selected.time_zone if selected else DEFAULT_TIME_ZONE
    membership = principal.membership_for(form.incident_id or None)
    return render(
        request,
        "publish.html",
        {
            "form": form,
            "incidents": incidents,
            "organization": (membership.organization_name or "") if membership else "",
            "statuses": STATUSES,
            "chosen_person": _chosen_person(session, form),
            "form_time_zone": zone,
            "zone_now": format_local(utc_now(), zone),
            "nav_incident": selected or (incidents[0] if incidents else None),
        },
        status_code,
    )


@router.get("/organizations")
def old_publish_address(request: Request, _: Access = needs(Permission.REPORTS_WRITE)) -> Response:
    """The page's old name: links and bookmarks to it keep working."""
    query = urlencode(list(request.query_params.multi_items()))
    return RedirectResponse(PUBLISH_PATH + (f"?{query}" if query else ""), status_code=308)


@router.get(PUBLISH_PATH)
def publish_form(
    request: Request,
    session: Session = UNIT_OF_WORK,
    access: Access = on_query_record(Permission.REPORTS_WRITE, Person, "person_id"),
) -> Response:
    """The form; a person named by ``person_id`` must be one the principal may publish
    about (the gate answers 404 or 403 otherwise, before anything of theirs is read)."""
    principal = access.principal
    person_id = request.query_params.get("person_id", "").strip()
    incident_id = access.incident_id or request.query_params.get("incident_id", "")
    if incident_id and not principal.can(Permission.REPORTS_WRITE, incident_id):
        incident_id = ""  # an incident named in the query that is not theirs: not chosen
    if not incident_id:
        incidents = _publishable(session, principal)
        incident_id = incidents[0].id if incidents else ""
    if request.query_params.get("example") == "hospital":
        incident = session.get(Incident, incident_id) if incident_id else None
        zone = incident.time_zone if incident is not None else DEFAULT_TIME_ZONE
        form = ReportForm.from_example(incident_id, zone)
    else:
        form = ReportForm(incident_id=incident_id)
    if person_id:
        form.person_id = person_id
        person = _chosen_person(session, form)
        if person is None:
            form.errors = [
                "The person this form was opened for is not in this incident: "
                "go back to their page, or publish about someone by name."
            ]
            form.field_errors = {"person_id": form.errors[0]}
        else:
            form.person_name = person.name
            form.person_age = "" if person.age is None else str(person.age)
    return _form_page(request, session, principal, form)


@router.post(PUBLISH_PATH)
@router.post("/organizations/reports")
async def publish(
    request: Request,
    session: Session = UNIT_OF_WORK,
    access: Access = needs(Permission.REPORTS_WRITE),
) -> Response:
    submitted = await request.form()
    form = ReportForm.from_mapping(submitted)
    return await run_in_threadpool(_publish_form, request, session, access.principal, form)


def _publish_form(
    request: Request, session: Session, principal: Principal, form: ReportForm
) -> Response:
    authorize(principal, Permission.REPORTS_WRITE, form.incident_id)  # named by the form
    form.source = reporting_organization(principal, form.incident_id)
    refusal = request.app.state.publish_limiter.refusal(principal.token_id or principal.user_id)
    if refusal is not None:
        page = render(
            request,
            "error.html",
            {"title": gettext("Try again later"), "message": refusal.message},
            429,
        )
        page.headers["Retry-After"] = str(refusal.retry_after_s)
        return page
    with open_session(request) as check:  # a short read: the publish's write starts clean
        incident = check.get(Incident, form.incident_id) if form.incident_id else None
        zone = incident.time_zone if incident is not None else DEFAULT_TIME_ZONE
    report, refusal = refusal_of(
        lambda: publish_and_commit(session, form.to_input(zone), actor=principal.actor)
    )
    if report is None:  # shown beside its field; publish_and_commit rolled back
        assert refusal is not None
        form.refuse(refusal)
        return _form_page(request, session, principal, form, 422)  # the form, shown again
    return RedirectResponse(f"/reports/{report.id}?published=1", status_code=303)
