"""``trace incident create|list|time-zone``: a deployment's incidents, on the configured
database."""

from __future__ import annotations

import typer

from trace_app.cli_support import describe_database, fail, operator, trace_settings

app = typer.Typer(help="Incidents on the configured database.", no_args_is_help=True)


@app.command("create")
def incident_create(
    name: str = typer.Argument(..., help="The incident's name (unique, any case)."),
    description: str = typer.Option("", help="What the incident is."),
    time_zone: str = typer.Option(
        "UTC", "--time-zone", help="IANA zone its pages show times in (e.g. Asia/Kathmandu)."
    ),
) -> None:
    """Create an incident (a deployment with no demo starts with none)."""
    from trace_app.domain.errors import InvalidInputError
    from trace_app.domain.incidents import create_incident
    from trace_app.store.db import Database

    settings = trace_settings()
    db = Database.from_settings(settings)
    try:
        with db.session() as session:
            incident = create_incident(
                session, name, description, time_zone=time_zone, actor=operator()
            )
            incident_id, incident_name = incident.id, incident.name
    except InvalidInputError as exc:
        fail(str(exc))
    finally:
        db.dispose()
    typer.echo(f"Created incident {incident_name!r}: {incident_id}")


@app.command("time-zone")
def incident_time_zone(
    incident_id: str = typer.Argument(..., help="The incident's id (see `trace incident list`)."),
    time_zone: str = typer.Argument(..., help="An IANA zone name, e.g. Asia/Kathmandu or UTC."),
) -> None:
    """Set the time zone an incident's pages show times in (stored times stay UTC)."""
    from trace_app.domain.errors import InvalidInputError, NotFoundError
    from trace_app.domain.incidents import set_time_zone
    from trace_app.store.db import Database

    settings = trace_settings()
    db = Database.from_settings(settings)
    try:
        with db.session() as session:
            zone = set_time_zone(session, incident_id, time_zone, actor=operator()).time_zone
    except (InvalidInputError, NotFoundError) as exc:
        fail(str(exc))
    finally:
        db.dispose()
    typer.echo(f"Incident {incident_id} now shows times in {zone}.")


@app.command("list")
def incident_list() -> None:
    """Every incident with its id and counts, oldest first."""
    from trace_app.domain.queries import list_incidents
    from trace_app.store.db import Database

    settings = trace_settings()
    db = Database.from_settings(settings)
    try:
        with db.sessions() as session:
            rows = [
                f"{s.incident.id}\t{s.incident.name}\t{s.reports} reports\t"
                f"{s.people} people\t{s.open_alerts} open alerts"
                for s in list_incidents(session)
            ]
    finally:
        db.dispose()
    if not rows:
        typer.echo(f"No incidents (database: {describe_database(settings)}).")
    for row in rows:
        typer.echo(row)
