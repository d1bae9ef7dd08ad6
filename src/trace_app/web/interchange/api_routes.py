"""PFIF over HTTP: ``GET /api/incidents/{id}/pfif`` streams the incident as PFIF 1.4,
``POST /api/incidents/{id}/pfif`` (``application/xml``) imports a PFIF 1.1-1.4 document
(``dry_run=true``: only says what it would do), and ``GET /api/incidents/{id}/people.csv``
streams the people with their current status.

Exporting needs ``pfif:read`` and importing ``pfif:write`` (a coordinator) in the incident;
both are audited. The import's body is streamed to a temporary file (at most 1 MiB of it
in memory) and imports run one at a time per process, so memory stays bounded however
large or many the uploads.

The import answers with its summary (200), or refuses the whole file (422, nothing
saved): a document that cannot be read (``code`` ``pfif_not_xml``, ``pfif_not_pfif``,
``pfif_entity_refused``; ``pfif_too_large`` is 413), or invalid records without
``skip_invalid=true`` (``code`` ``invalid_records``, with the summary listing them).
"""

from __future__ import annotations

import tempfile
from typing import IO, Annotated, Any, Literal

from fastapi import Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from sqlalchemy.orm import Session

from trace_app.accounts.permissions import Permission
from trace_app.accounts.principal import Principal
from trace_app.domain import import_runs
from trace_app.domain.import_runs import ImportKind, ImportRequest
from trace_app.domain.pfif_import import ImportRefusedError
from trace_app.settings import TraceSettings
from trace_app.web.deps import open_session
from trace_app.web.errors import COMMON_RESPONSES, ErrorOut
from trace_app.web.failures import answers_with
from trace_app.web.gate import Access, gated_router, in_incident
from trace_app.web.interchange.exports import CSV, XML, import_turn, stream_export
from trace_app.web.interchange.schemas import ImportRefusedOut, ImportSummaryOut
from trace_app.web.params import IncidentId

router = gated_router(prefix="/api", tags=["api"], responses=COMMON_RESPONSES)


def _refused_summary(exc: ImportRefusedError) -> dict[str, Any]:
    return {"summary": ImportSummaryOut.of(exc.summary, saved=False).model_dump(mode="json")}


# a refused import answers with its summary: which records, and why (ImportRefusedOut)
answers_with(ImportRefusedError, _refused_summary)


def _settings(request: Request) -> TraceSettings:
    settings = request.app.state.settings
    assert isinstance(settings, TraceSettings)
    return settings


@router.get(
    "/incidents/{incident_id}/pfif",
    response_class=Response,
    responses={
        200: {
            "description": "The incident as a PFIF 1.4 (or 1.3) document (streamed)",
            "content": {XML: {"schema": {"type": "string"}}},
        },
        404: {"model": ErrorOut, "description": "No such incident"},
    },
)
def export_pfif(
    incident_id: IncidentId,
    request: Request,
    version: Annotated[
        Literal["1.4", "1.3"], Query(description="PFIF 1.4 (default), or 1.3 for older readers")
    ] = "1.4",
    access: Access = in_incident(Permission.PFIF_READ),
) -> Response:
    """The incident's people (one PFIF person each) and claims (one note each) as PFIF
    1.4, written as it is read from the database (see docs/interchange.md). Audited as
    ``pfif.export`` (who took a copy of whose data, and when)."""
    return stream_export(request, access.principal, incident_id, f"pfif-{version}")


@router.get(
    "/incidents/{incident_id}/people.csv",
    response_class=Response,
    responses={
        200: {
            "description": "The incident's people with their current status (CSV, streamed)",
            "content": {CSV: {"schema": {"type": "string"}}},
        },
        404: {"model": ErrorOut, "description": "No such incident"},
    },
)
def export_people_csv(
    incident_id: IncidentId,
    request: Request,
    access: Access = in_incident(Permission.PFIF_READ),
) -> Response:
    """One row per person with the current status, where it was said and by whom, and
    whether an alert is open (columns in docs/interchange.md). Audited as
    ``people.export``."""
    return stream_export(request, access.principal, incident_id, "people-csv")


def _import(
    session: Session,
    incident_id: str,
    body: IO[bytes],
    settings: TraceSettings,
    skip: bool,
    principal: Principal,
    dry_run: bool = False,
) -> tuple[int, Any]:
    request = ImportRequest(
        ImportKind.PFIF,
        incident_id,
        skip_invalid=skip,
        own_sources_only=not principal.sees_every_incident(),
    )
    actor = principal.actor
    domain, max_bytes = settings.pfif_domain, settings.pfif_max_bytes
    if dry_run:
        outcome = import_runs.dry_run(
            session, request, body, actor=actor, domain=domain, max_bytes=max_bytes
        )
        if outcome.refused:
            raise ImportRefusedError(outcome.summary)
        summary = outcome.summary
    else:
        summary = import_runs.run_import(
            session, request, body, actor=actor, domain=domain, max_bytes=max_bytes
        )
        session.commit()
    return 200, ImportSummaryOut.of(summary, saved=not dry_run).model_dump(mode="json")


@router.post(
    "/incidents/{incident_id}/pfif",
    response_model=ImportSummaryOut,
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "A PFIF 1.1, 1.2, 1.3 or 1.4 document (UTF-8 XML).",
            "content": {XML: {"schema": {"type": "string"}}},
        }
    },
    responses={
        403: {"model": ErrorOut, "description": "Cross-site request"},
        404: {"model": ErrorOut, "description": "No such incident"},
        413: {"model": ErrorOut, "description": "Larger than TRACE_PFIF_MAX_BYTES"},
        415: {"model": ErrorOut, "description": "A body that is not application/xml"},
        422: {
            "model": ImportRefusedOut | ErrorOut,
            "description": (
                "Nothing saved: not XML (pfif_not_xml), not PFIF (pfif_not_pfif), an "
                "entity (pfif_entity_refused), or invalid records (invalid_records, with "
                "the summary)"
            ),
        },
    },
)
async def import_pfif_route(
    incident_id: IncidentId,
    request: Request,
    skip_invalid: Annotated[
        bool, Query(description="Keep the valid records, list the invalid")
    ] = False,
    dry_run: Annotated[
        bool,
        Query(
            description="Only say what the import would do (the same import, rolled back): "
            "saved is false and nothing is kept"
        ),
    ] = False,
    access: Access = in_incident(Permission.PFIF_WRITE),
) -> JSONResponse:
    """Import a PFIF document into the incident, all or nothing (unless ``skip_invalid``);
    importing the same document again adds nothing. With ``dry_run`` the answer says what
    it would do, and nothing is kept."""
    settings = _settings(request)
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY_BYTES) as body:
        async for chunk in request.stream():
            await run_in_threadpool(body.write, chunk)
        body.seek(0)
        async with import_turn(request):
            with open_session(request) as session:
                status, payload = await run_in_threadpool(
                    _import,
                    session,
                    incident_id,
                    body,
                    settings,
                    skip_invalid,
                    access.principal,
                    dry_run,
                )
    return JSONResponse(payload, status_code=status)


# An upload is kept in memory up to this size, then in a temporary file.
SPOOL_IN_MEMORY_BYTES = 1024 * 1024
