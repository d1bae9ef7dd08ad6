"""``trace pfif export|import`` and ``trace import csv``: PFIF and shelter lists on the
configured database (docs/interchange.md); :mod:`trace_app.cli` adds the two groups.

Exit codes: 0 done (or, with ``--dry-run``, the import would succeed); 1 nothing
imported because the file is not valid (every reason is printed, and the counts say what
*would* have been imported); 2 a bad argument, setting or unknown incident.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from trace_app.cli_support import fail, operator, trace_settings

if TYPE_CHECKING:
    from trace_app.domain.pfif_import import Progress
    from trace_app.store.db import Database

pfif_app = typer.Typer(help="PFIF 1.4 interchange (Person Finder).", no_args_is_help=True)
import_app = typer.Typer(help="Import lists of people.", no_args_is_help=True)


@pfif_app.command("export")
def pfif_export(
    incident_id: str = typer.Argument(..., help="The incident to export."),
    output: Path = typer.Option(..., "-o", "--output", help="The PFIF file to write."),
    pfif_version: str = typer.Option(
        "1.4", "--pfif-version", help="1.4, or 1.3 for consumers that read only 1.2 or 1.3."
    ),
) -> None:
    """Write the incident as PFIF 1.4 or 1.3 (whole to a temporary file, then renamed)."""
    from trace_app.domain import audit
    from trace_app.domain.errors import NotFoundError
    from trace_app.domain.pfif_export import EXPORT_VERSIONS, iter_incident_pfif
    from trace_app.store.db import Database

    if pfif_version not in EXPORT_VERSIONS:
        fail(f"--pfif-version must be one of {', '.join(EXPORT_VERSIONS)}, not {pfif_version!r}")
    settings = trace_settings()
    db = Database.from_settings(settings)
    target = output.resolve()
    try:
        with db.sessions() as session:
            chunks = iter_incident_pfif(
                session, incident_id, domain=settings.pfif_domain, version=pfif_version
            )
            audit.record(
                session,
                operator(),
                "pfif.export",
                object_type="incident",
                object_id=incident_id,
                incident_id=incident_id,
                after={"format": f"PFIF {pfif_version}", "file": output.name},
            )
            session.commit()
            fd, temp = tempfile.mkstemp(prefix=".pfif-", dir=target.parent)
            try:
                with os.fdopen(fd, "wb") as out:
                    size = 0
                    for chunk in chunks:
                        out.write(chunk)
                        size += len(chunk)
                os.replace(temp, target)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
    except NotFoundError as exc:
        fail(str(exc), 2)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}", 2)
    finally:
        db.dispose()
    typer.echo(f"Wrote {output} ({size:,} bytes, PFIF {pfif_version}).")


def _incident_id(db: Database, given: str) -> str:
    """The id of the incident ``given`` names: an id, else an incident's name in any case
    (as ``trace incident list`` shows both). Neither: exit 2, nothing read from the file."""
    from trace_app.domain.incidents import incident_named
    from trace_app.store.models import Incident

    with db.sessions() as session:
        if session.get(Incident, given) is not None:
            return given
        named = incident_named(session, given)
    if named is None:
        db.dispose()
        fail(f"No incident with id or name {given!r} (trace incident list shows them).", 2)
    return named.id


@contextmanager
def _import_progress(path: Path, unit: str) -> Iterator[Progress | None]:
    """A progress line on stderr while an import runs (records read, time taken), or
    ``None`` where stderr is not a terminal (a pipe or a log gets only the summary)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TextColumn("{task.completed:,} " + unit),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(f"Importing {path.name}", total=None)
        yield lambda read: bar.update(task, completed=read)


def _run_import(
    kind: str, path: Path, incident_id: str, skip_invalid: bool, dry_run: bool, source: str = ""
) -> None:
    """Import (or, with ``dry_run``, only count what the import would do, by the same code
    rolled back: :mod:`trace_app.domain.import_runs`). A dry run or a refused file says
    what *would* have been imported; a real one what was."""
    from trace_app.domain import import_runs
    from trace_app.domain.audit import require_audit
    from trace_app.domain.errors import TraceError
    from trace_app.domain.pfif_import import ImportRefusedError
    from trace_app.interchange.pfif import PfifError
    from trace_app.store.db import Database

    settings = trace_settings()
    try:
        stream = path.open("rb")
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}", 2)
    db = Database.from_settings(settings)
    incident_id = _incident_id(db, incident_id)
    request = import_runs.ImportRequest(
        import_runs.ImportKind(kind), incident_id, source_name=source, skip_invalid=skip_invalid
    )
    by_line = kind == "csv"
    domain, max_bytes = settings.pfif_domain, settings.pfif_max_bytes
    unit = "rows" if by_line else "records"
    try:
        with (
            stream,
            require_audit(db.sessions()) as session,
            _import_progress(path, unit) as progress,
        ):
            if dry_run:
                outcome = import_runs.dry_run(
                    session,
                    request,
                    stream,
                    actor=operator(),
                    domain=domain,
                    max_bytes=max_bytes,
                    progress=progress,
                )
            else:
                try:
                    summary = import_runs.run_import(
                        session,
                        request,
                        stream,
                        actor=operator(),
                        domain=domain,
                        max_bytes=max_bytes,
                        progress=progress,
                    )
                    session.commit()
                except BaseException:
                    session.rollback()
                    raise
                outcome = import_runs.ImportOutcome(summary, saved=True)
    except ImportRefusedError as exc:
        for line in exc.summary.lines(by_line=by_line, saved=False):
            typer.echo(line, err=True)
        fail(str(exc), 1)
    except PfifError as exc:
        fail(f"nothing was imported: {exc}", 1)
    except TraceError as exc:
        fail(str(exc), 2)
    finally:
        db.dispose()
    for line in outcome.summary.lines(by_line=by_line, saved=outcome.saved):
        typer.echo(line)
    if dry_run:
        if outcome.refused:
            typer.echo(f"Dry run: {outcome.refused}", err=True)
            raise typer.Exit(1)
        typer.echo("Dry run: nothing was saved. Run again without --dry-run to import.")


INCIDENT_HELP = "The incident to import into: its id or its name (trace incident list)."
DRY_RUN_HELP = "Only say what the import would do (the same code, rolled back); save nothing."


@pfif_app.command("import")
def pfif_import(
    file: Path = typer.Argument(..., help="A PFIF 1.1-1.4 document."),
    incident: str = typer.Option(..., "--incident", help=INCIDENT_HELP),
    skip_invalid: bool = typer.Option(
        False, "--skip-invalid", help="Keep the valid records; list the invalid ones by id."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help=DRY_RUN_HELP),
) -> None:
    """Import persons as people and notes as reports, all or nothing (see --skip-invalid);
    the same file twice adds nothing."""
    _run_import("pfif", file, incident, skip_invalid, dry_run)


@import_app.command("csv")
def csv_import(
    file: Path = typer.Argument(..., help="A shelter list (UTF-8 CSV with a header row)."),
    incident: str = typer.Option(..., "--incident", help=INCIDENT_HELP),
    source: str = typer.Option(..., "--source", help="The organisation the list comes from."),
    skip_invalid: bool = typer.Option(
        False, "--skip-invalid", help="Keep the valid rows; list the bad ones by line."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help=DRY_RUN_HELP),
) -> None:
    """Import a shelter list: one person and one report from SOURCE per row; every bad row
    is reported by its line number."""
    _run_import("csv", file, incident, skip_invalid, dry_run, source=source)
