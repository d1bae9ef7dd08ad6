"""The Import and Export pages (coordinators: ``pfif:write`` and ``pfif:read``).

- ``GET /import`` the form: an incident chosen by name, the kind (a PFIF document or a
  shelter list in CSV, with its source), the file.
- ``POST /import`` (multipart, streamed to disk by the security middleware's rule for
  this path, at most ``TRACE_PFIF_MAX_BYTES``) keeps the file as a pending upload
  (:mod:`trace_app.web.interchange.pending_imports`), runs the import as a **dry run**
  (the same code, rolled back: :mod:`trace_app.domain.import_runs`), audits
  ``import.preview`` and answers 303 to the preview.
- ``GET /import/{token}`` the preview: counts, the first problems by line or record, the
  look-alike names; or, once confirmed, what was imported.
- ``POST /import/{token}/confirm`` imports the kept file for real (audited by the import
  as ``pfif.import`` or ``csv.import``), if it does what the preview said; otherwise
  nothing is kept and the new preview is shown. No second upload.
- ``GET /export`` the form; ``GET /export/file`` streams PFIF 1.4, PFIF 1.3 or the
  people CSV (:mod:`trace_app.domain.people_csv_export`), audited as ``pfif.export`` or
  ``people.export``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.responses import Response

from trace_app.accounts import sessions as web_sessions
from trace_app.accounts.permissions import Permission
from trace_app.accounts.principal import Principal
from trace_app.domain import audit, import_runs, queries
from trace_app.domain.errors import InvalidInputError, NotFoundError, TraceError
from trace_app.domain.import_runs import ImportChangedError, ImportKind, ImportRequest
from trace_app.i18n import gettext
from trace_app.interchange.shelter_csv import human_size
from trace_app.store.models import Incident
from trace_app.web.auth import authorize, settings_of
from trace_app.web.deps import open_session, render
from trace_app.web.failures import failing_as, refusal_of
from trace_app.web.gate import Access, custom, gated_router, needs
from trace_app.web.interchange.exports import import_turn, stream_export
from trace_app.web.interchange.pending_imports import (
    PendingImport,
    PendingImports,
    UploadTooLargeError,
    owner_key,
)
from trace_app.web.interchange.schemas import ImportSummaryOut
from trace_app.web.security import csrf_field_matches

router = gated_router(include_in_schema=False)

# At most this many problems, skipped records and look-alikes are shown on the preview
# (every one is counted).
SHOWN = 50
EXPORT_FORMATS: dict[str, str] = {
    "pfif-1.4": "PFIF 1.4 (Person Finder and other PFIF readers)",
    "pfif-1.3": "PFIF 1.3 (older readers that take PFIF 1.2 or 1.3)",
    "people-csv": "People with their current status (CSV, for a spreadsheet)",
}


def _uploads(request: Request) -> PendingImports:
    found = getattr(request.app.state, "pending_imports", None)
    if found is None:
        folder = Path(settings_of(request).home) / "pending-imports"
        found = request.app.state.pending_imports = PendingImports(folder)
    assert isinstance(found, PendingImports)
    return found


def _owner(request: Request, principal: Principal) -> str:
    return owner_key(principal.user_id, request.cookies.get(web_sessions.COOKIE, ""))


def _choices(request: Request, principal: Principal, permission: Permission) -> list[Incident]:
    with open_session(request) as session:
        summaries = queries.list_incidents(session)
        return [s.incident for s in summaries if principal.can(permission, s.incident.id)]


def _error(request: Request, title: str, message: str, status: int) -> Response:
    return render(request, "error.html", {"title": title, "message": message}, status)


# --- import -----------------------------------------------------------------------------


def _import_form(
    request: Request,
    principal: Principal,
    values: dict[str, str],
    error: str = "",
    status: int = 200,
    field: str = "file",
) -> Response:
    """The upload form; ``error`` is shown above it and beside ``field`` (``incident_id``,
    ``kind``, ``source_name`` or ``file``)."""
    incidents = _choices(request, principal, Permission.PFIF_WRITE)
    return render(
        request,
        "import.html",
        {
            "incidents": incidents,
            "values": values,
            "error": error,
            "error_field": field if error else "",
            "kinds": list(ImportKind),
            "max_size": human_size(settings_of(request).pfif_max_bytes),
            "nav_incident": next((i for i in incidents if i.id == values.get("incident_id")), None),
        },
        status,
    )


@router.get("/import")
def import_page(request: Request, access: Access = needs(Permission.PFIF_WRITE)) -> Response:
    principal = access.principal
    values = {
        "incident_id": request.query_params.get("incident_id", ""),
        "kind": request.query_params.get("kind", ImportKind.CSV.value),
        "source_name": "",
    }
    return _import_form(request, principal, values)


@router.post("/import")
async def upload(request: Request, access: Access = needs(Permission.PFIF_WRITE)) -> Response:
    """Keep the file, dry-run it, and send the browser to the preview."""
    principal = access.principal
    async with request.form(max_files=1, max_fields=8) as form:
        values = {
            name: value if isinstance(value := form.get(name, ""), str) else ""
            for name in ("csrf_token", "incident_id", "kind", "source_name")
        }
        if not csrf_field_matches(request.headers.get("cookie"), values["csrf_token"]):
            message = (
                "The form has expired or came from another site. Reload the page and try again."
            )
            return _error(request, "Not allowed", message, 403)
        file = form.get("file")
        if values["kind"] not in ImportKind._value2member_map_:
            message = gettext("Choose what kind of file it is.")
            return _import_form(request, principal, values, message, 422, "kind")
        kind = ImportKind(values["kind"])
        if not values["incident_id"]:
            message = gettext("Choose the incident.")
            return _import_form(request, principal, values, message, 422, "incident_id")
        authorize(principal, Permission.PFIF_WRITE, values["incident_id"])  # named by the form
        if kind is ImportKind.CSV and not values["source_name"].strip():
            message = gettext("Name the organisation the shelter list comes from.")
            return _import_form(request, principal, values, message, 422, "source_name")
        if not isinstance(file, UploadFile) or not file.filename:
            return _import_form(request, principal, values, "Choose a file to upload.", 422)
        upload = file.file
        filename = Path(file.filename).name[:200]

        def keep_and_preview() -> PendingImport:
            pending = _uploads(request).store(
                _owner(request, principal),
                upload,
                max_bytes=settings_of(request).pfif_max_bytes,
                incident_id=values["incident_id"],
                kind=kind.value,
                source_name=values["source_name"].strip(),
                filename=filename,
            )
            _preview(request, principal, pending)
            return pending

        async with import_turn(request):
            pending, refusal = await run_in_threadpool(refusal_of, keep_and_preview)
    if pending is None:  # what cannot be kept or imported is said on the form
        assert refusal is not None
        return _import_form(
            request, principal, values, _upload_problem(refusal), refusal.http_status
        )
    return RedirectResponse(f"/import/{pending.token}", status_code=303)


def _request(
    pending: PendingImport, principal: Principal, *, skip_invalid: bool = False
) -> ImportRequest:
    return ImportRequest(
        ImportKind(pending.kind),
        pending.incident_id,
        source_name=pending.source_name,
        skip_invalid=skip_invalid,
        own_sources_only=not principal.sees_every_incident(),
    )


def _shown(outcome: import_runs.ImportOutcome) -> dict[str, Any]:
    """The dry run as the preview page shows it (the first ``SHOWN`` of each list)."""
    data = ImportSummaryOut.of(outcome.summary, saved=outcome.saved).model_dump(mode="json")
    for name in ("skipped", "invalid", "flagged"):
        data[name] = data[name][:SHOWN]
    data["refused"] = outcome.refused
    return data


class EmptyUploadError(InvalidInputError):
    code = "empty_upload"


def _upload_problem(exc: TraceError) -> str:
    """What the upload form says when a file cannot be kept or previewed."""
    if isinstance(exc, (NotFoundError, UploadTooLargeError, EmptyUploadError)):
        return str(exc)
    return f"Nothing can be imported from this file: {exc}"


def _preview(request: Request, principal: Principal, pending: PendingImport) -> None:
    """Dry-run the kept file and save the preview on it (audited ``import.preview``). A
    file that cannot be imported at all raises, and is not kept."""
    previewed = False
    try:
        if pending.size == 0:
            raise EmptyUploadError("The file is empty.")
        _dry_run(request, principal, pending)
        previewed = True
    finally:
        if not previewed:
            _uploads(request).discard(pending.token)


def _dry_run(request: Request, principal: Principal, pending: PendingImport) -> None:
    settings = settings_of(request)
    stream = _uploads(request).open_data(pending)
    with stream, open_session(request) as session:
        outcome = import_runs.dry_run(
            session,
            _request(pending, principal),
            stream,
            domain=settings.pfif_domain,
            max_bytes=settings.pfif_max_bytes,
            actor=principal.actor,
        )
        audit.record(
            session,
            principal.actor,
            "import.preview",
            object_type="incident",
            object_id=pending.incident_id,
            incident_id=pending.incident_id,
            after={
                "kind": pending.kind,
                "file": pending.filename,
                "sha256": pending.sha256,
                "people_added": outcome.summary.people_added,
                "notes_added": outcome.summary.notes_added,
                "invalid": outcome.summary.invalid_count,
            },
        )
        session.commit()
    pending.preview = _shown(outcome)
    pending.counts = list(import_runs.counts(outcome.summary))
    _uploads(request).save(pending)


class UploadNotFoundError(NotFoundError):
    code = "upload_not_found"
    page_title = "Upload not found"


def _pending(request: Request, token: str) -> PendingImport:
    """The signed-in principal's kept upload (UploadNotFoundError otherwise)."""
    principal = getattr(request.state, "principal", None)
    found = _uploads(request).load(token, _owner(request, principal)) if principal else None
    if found is None:
        raise UploadNotFoundError(
            "This upload is not here: it expired (uploads are kept for 30 minutes), was "
            "sent from another browser session, or does not exist. Upload the file again."
        )
    return found


def _pending_incident(_session: Session, request: Request) -> str:
    """The gate's finder for ``/import/{token}``: the incident of the kept upload."""
    return _pending(request, str(request.path_params.get("token", ""))).incident_id


@router.get("/import/{token}")
def preview_page(
    request: Request,
    token: str,
    _: Access = custom(Permission.PFIF_WRITE, _pending_incident),
) -> Response:
    pending = _pending(request, token)
    with open_session(request) as session:
        incident = queries.get_incident(session, pending.incident_id)
    return render(
        request,
        "import_preview.html",
        {
            "pending": pending,
            "incident": incident,
            "nav_incident": incident,
            "kind": ImportKind(pending.kind),
            "shown_max": SHOWN,
            "size": human_size(pending.size),
        },
    )


@router.post("/import/{token}/confirm")
async def confirm(
    request: Request,
    token: str,
    access: Access = custom(Permission.PFIF_WRITE, _pending_incident),
) -> Response:
    """Import the kept file for real, if it still does what its preview said."""
    principal = access.principal
    pending = _pending(request, token)
    if pending.state != "previewed":
        return RedirectResponse(f"/import/{quote(token)}", status_code=303)
    async with import_turn(request):
        return await run_in_threadpool(_confirm, request, principal, pending)


def _confirm(request: Request, principal: Principal, pending: PendingImport) -> Response:
    settings = settings_of(request)
    uploads = _uploads(request)
    # a preview with invalid records promised to import the valid ones only
    skip = bool(pending.counts and pending.counts[-1] > 0)
    failing_as(request, gettext("Upload the file again"))
    stream = uploads.open_data(pending)  # an UploadChangedError discards it first
    failing_as(request, gettext("Nothing was imported"))
    with stream, open_session(request) as session:
        outcome, refusal = refusal_of(
            lambda: import_runs.confirm_import(
                session,
                _request(pending, principal, skip_invalid=skip),
                stream,
                tuple(pending.counts),  # type: ignore[arg-type]
                domain=settings.pfif_domain,
                max_bytes=settings.pfif_max_bytes,
                actor=principal.actor,
            )
        )
    if isinstance(refusal, ImportChangedError):  # the preview page shows what it would do now
        pending.preview = _shown(refusal.outcome)
        pending.counts = list(import_runs.counts(refusal.outcome.summary))
        pending.changed = True
        uploads.save(pending)
        return RedirectResponse(f"/import/{quote(pending.token)}", status_code=303)
    if outcome is None:
        assert refusal is not None
        raise refusal
    pending.state = "imported"
    pending.changed = False
    pending.result = _shown(outcome)
    uploads.save(pending)
    uploads.drop_data(pending)
    return RedirectResponse(f"/import/{quote(pending.token)}", status_code=303)


# --- export -----------------------------------------------------------------------------


@router.get("/export")
def export_page(request: Request, access: Access = needs(Permission.PFIF_READ)) -> Response:
    incidents = _choices(request, access.principal, Permission.PFIF_READ)
    chosen = request.query_params.get("incident_id", "")
    return render(
        request,
        "export.html",
        {
            "incidents": incidents,
            "chosen": chosen,
            "formats": EXPORT_FORMATS,
            "nav_incident": next((i for i in incidents if i.id == chosen), None),
        },
    )


@router.get("/export/file")
def export_file(request: Request, access: Access = needs(Permission.PFIF_READ)) -> Response:
    """The chosen incident in the chosen format, streamed as it is read, and audited."""
    incident_id = request.query_params.get("incident_id", "")
    chosen = request.query_params.get("format", "")
    if chosen not in EXPORT_FORMATS:
        known = ", ".join(EXPORT_FORMATS)
        return _error(request, "Choose a format", f"The format must be one of: {known}.", 422)
    if not incident_id:
        return _error(request, "Choose an incident", "Choose the incident to export.", 422)
    authorize(access.principal, Permission.PFIF_READ, incident_id)  # named by the query
    return stream_export(request, access.principal, incident_id, chosen)
