"""One way to run an import, for real or as a dry run (docs/decisions/0082).

A **dry run** is the real import (:func:`~trace_app.domain.pfif_import.import_pfif` or
:func:`~trace_app.domain.shelter_import.import_shelter_csv`) run inside a write
transaction that is always rolled back: the same records are matched, the same people
created and the same reports published, so its counts are exactly what the import would
do on the database as it is now, and nothing is kept (its audit row neither).

The web's **confirm** runs the import again on the same bytes and compares its counts
with the preview's: if the incident changed in between (another import, a new report
with one of the names), the counts differ, nothing is kept and
:class:`ImportChangedError` carries the new preview. So what a person confirmed is
what was saved.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import IO

from sqlalchemy.orm import Session

from trace_app.domain.audit import Actor
from trace_app.domain.errors import TraceError
from trace_app.domain.pfif_import import (
    ImportRefusedError,
    ImportSummary,
    Progress,
    import_pfif,
)
from trace_app.domain.shelter_import import import_shelter_csv
from trace_app.store.db import WRITE_TRANSACTION


class ImportKind(enum.StrEnum):
    PFIF = "pfif"
    CSV = "csv"

    @property
    def label(self) -> str:
        return "PFIF document" if self is ImportKind.PFIF else "Shelter list (CSV)"

    @property
    def unit(self) -> str:
        """What an invalid entry is named by: a record id (PFIF) or a line (CSV)."""
        return "record" if self is ImportKind.PFIF else "row"


@dataclass(frozen=True, slots=True)
class ImportRequest:
    """What to import into which incident; ``source_name`` is a shelter list's source.
    ``own_sources_only``: the importer works in some incidents only, so every source the
    file names (PFIF ``author_name``, the list's source) must be new or already work in
    this one (:mod:`trace_app.domain.organizations`). An operator at the command line or
    an admin of every incident imports under any name (a round trip into a new incident
    keeps its authors)."""

    kind: ImportKind
    incident_id: str
    source_name: str = ""
    skip_invalid: bool = False
    own_sources_only: bool = False


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    """What an import did (``saved``) or would do. ``refused``: why the whole file would
    be (or was) refused, when it holds invalid records and ``skip_invalid`` was not set."""

    summary: ImportSummary
    saved: bool
    refused: str = ""


Counts = tuple[int, int, int, int, int]


def counts(summary: ImportSummary) -> Counts:
    """The numbers a preview promised: added, attached, notes, skipped, invalid."""
    return (
        summary.people_added,
        summary.people_matched,
        summary.notes_added,
        summary.skipped_count,
        summary.invalid_count,
    )


class ImportChangedError(TraceError):
    """The incident changed since the preview: the import would now do something else.
    Nothing was kept; ``outcome`` is the new preview."""

    code = "import_changed"
    http_status = 409

    def __init__(self, outcome: ImportOutcome) -> None:
        super().__init__(
            "The incident changed since the preview, so the import would now do something "
            "else. Nothing was imported: read the new preview, then confirm again."
        )
        self.outcome = outcome


def run_import(
    session: Session,
    request: ImportRequest,
    stream: IO[bytes],
    *,
    domain: str,
    max_bytes: int,
    actor: Actor,
    progress: Progress | None = None,
) -> ImportSummary:
    """The import itself, in the caller's transaction (audited as ``pfif.import`` or
    ``csv.import``); raises what the importer raises. The caller commits or rolls back.
    ``progress`` is told how many records were read, chunk by chunk."""
    session.connection(execution_options=WRITE_TRANSACTION)  # SQLite: BEGIN IMMEDIATE
    if request.kind is ImportKind.PFIF:
        return import_pfif(
            session,
            request.incident_id,
            stream,
            domain=domain,
            max_bytes=max_bytes,
            skip_invalid=request.skip_invalid,
            actor=actor,
            progress=progress,
            own_sources_only=request.own_sources_only,
        )
    return import_shelter_csv(
        session,
        request.incident_id,
        stream,
        source_name=request.source_name,
        domain=domain,
        max_bytes=max_bytes,
        skip_invalid=request.skip_invalid,
        actor=actor,
        progress=progress,
        own_sources_only=request.own_sources_only,
    )


def dry_run(
    session: Session,
    request: ImportRequest,
    stream: IO[bytes],
    *,
    domain: str,
    max_bytes: int,
    actor: Actor,
    progress: Progress | None = None,
) -> ImportOutcome:
    """What :func:`run_import` would do now, with nothing kept: the same code, rolled
    back. A file that cannot be read (``PfifError``), an unknown incident or a bad source
    name raise as they would for real."""
    try:
        summary = run_import(
            session,
            request,
            stream,
            domain=domain,
            max_bytes=max_bytes,
            actor=actor,
            progress=progress,
        )
    except ImportRefusedError as exc:
        return ImportOutcome(exc.summary, saved=False, refused=str(exc))
    finally:
        session.rollback()
    return ImportOutcome(summary, saved=False)


def confirm_import(
    session: Session,
    request: ImportRequest,
    stream: IO[bytes],
    previewed: Counts,
    *,
    domain: str,
    max_bytes: int,
    actor: Actor,
) -> ImportOutcome:
    """Import for real and commit, if it does what the preview said (``previewed``);
    otherwise roll back and raise :class:`ImportChangedError` with the new preview (a
    refusal, too, means the incident changed). Nothing is kept on any error."""
    try:
        try:
            summary = run_import(
                session, request, stream, domain=domain, max_bytes=max_bytes, actor=actor
            )
        except ImportRefusedError as exc:
            # the preview promised an import, so a refusal now means the incident changed
            session.rollback()
            raise ImportChangedError(
                ImportOutcome(exc.summary, saved=False, refused=str(exc))
            ) from exc
        if counts(summary) != previewed:
            session.rollback()
            raise ImportChangedError(ImportOutcome(summary, saved=False))
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return ImportOutcome(summary, saved=True)
