"""What the PFIF API and the Export and Import pages share: a streamed, audited export, and
imports taking turns in a process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import Response, StreamingResponse

from trace_app.accounts.principal import Principal
from trace_app.domain import audit
from trace_app.domain.people_csv_export import export_file_names, iter_people_csv
from trace_app.domain.pfif_export import iter_incident_pfif
from trace_app.domain.queries import get_incident
from trace_app.web.auth import settings_of
from trace_app.web.deps import open_session

XML = "application/xml"


CSV = "text/csv"


def stream_export(
    request: Request, principal: Principal, incident_id: str, chosen: str
) -> Response:
    """A streamed export, ``chosen`` among ``pfif-1.4``, ``pfif-1.3`` and ``people-csv``,
    with its audit row (``pfif.export`` or ``people.export``), for the API and the Export
    page. NotFoundError for an unknown incident, before anything is audited."""
    domain = settings_of(request).pfif_domain
    session = open_session(request)
    try:
        incident_name = get_incident(session, incident_id).name
        if chosen == "people-csv":
            chunks = iter_people_csv(session, incident_id, domain=domain)
            action, media, suffix, what = "people.export", CSV, "people.csv", "people CSV"
        else:
            version = chosen.removeprefix("pfif-")
            chunks = iter_incident_pfif(session, incident_id, domain=domain, version=version)
            action, media, suffix, what = "pfif.export", XML, "pfif.xml", f"PFIF {version}"
    except BaseException:
        session.close()
        raise
    with open_session(request) as audit_session:
        audit.record(
            audit_session,
            principal.actor,
            action,
            object_type="incident",
            object_id=incident_id,
            incident_id=incident_id,
            after={"format": what},
        )
        audit_session.commit()

    def stream() -> Iterator[bytes]:
        try:
            yield from chunks
        finally:
            session.close()

    # named after the incident, safe for a file system (ASCII, and the name as written)
    plain, written = export_file_names(incident_name, suffix)
    disposition = f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(written)}"
    return StreamingResponse(
        stream(), media_type=media, headers={"content-disposition": disposition}
    )


def import_turn(request: Request) -> asyncio.Lock:
    """Imports take turns in this process: each holds a chunk of records and a write
    transaction, so four at once would only queue on the database while using four
    times the memory."""
    lock = getattr(request.app.state, "import_lock", None)
    if lock is None:
        lock = request.app.state.import_lock = asyncio.Lock()
    assert isinstance(lock, asyncio.Lock)
    return lock
