"""``trace inquiries purge|retention``: enquirers' contacts on the configured database
(issue 41; trace_app.notifications.retention)."""

from __future__ import annotations

import typer

from trace_app.cli_support import fail, operator, trace_settings

app = typer.Typer(help="Tracing requests: their contacts' retention.", no_args_is_help=True)


@app.command("purge")
def inquiries_purge(
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Say what would be closed and erased; change nothing."
    ),
) -> None:
    """Close the requests whose enquirer was told the person was found, then erase the
    contacts of requests closed longer ago than their incident's retention (default 90
    days). Each erased request stays as a tombstone; the purge is audited."""
    from trace_app.notifications.retention import purge
    from trace_app.store.db import Database

    db = Database.from_settings(trace_settings())
    try:
        with db.sessions() as session:
            result = purge(session, actor=operator(), dry_run=dry_run)
            if dry_run:
                session.rollback()
            else:
                session.commit()
    finally:
        db.dispose()
    verb = "would close" if dry_run else "closed"
    erase = "would erase" if dry_run else "erased the contacts of"
    typer.echo(f"Purge {verb} {result.closed} request(s) and {erase} {result.erased}.")


@app.command("retention")
def inquiries_retention(
    incident_id: str = typer.Argument(..., help="The incident's id (see `trace incident list`)."),
    days: int = typer.Argument(..., help="Days contacts are kept after a request closes."),
) -> None:
    """Set how long an incident keeps enquirers' contacts after their request closes."""
    from trace_app.domain.errors import InvalidInputError, NotFoundError
    from trace_app.notifications.retention import set_retention_days
    from trace_app.store.db import Database

    db = Database.from_settings(trace_settings())
    try:
        with db.session() as session:
            set_retention_days(session, incident_id, days, actor=operator())
    except (InvalidInputError, NotFoundError) as exc:
        fail(str(exc))
    finally:
        db.dispose()
    typer.echo(f"Incident {incident_id} keeps enquirers' contacts {days} day(s) after closing.")
