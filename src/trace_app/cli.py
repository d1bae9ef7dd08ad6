"""The `trace` command: `serve`, `reset` and `incident create|list` here; other parts add
their own commands.

Both commands work from any folder: the default SQLite file lives under ``.trace-local/``
of the current folder unless ``TRACE_HOME`` or ``DATABASE_URL`` says otherwise.
"""

from __future__ import annotations

import typer

from trace_app.settings import SettingsError, TraceSettings

app = typer.Typer(help="Trace: disaster people-tracing.", no_args_is_help=True)


@app.callback()
def main() -> None:
    """Trace: disaster people-tracing."""


def _settings() -> TraceSettings:
    try:
        return TraceSettings.from_env()
    except SettingsError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8000, help="Port to listen on."),
    demo: bool = typer.Option(
        False, "--demo", help="A demo server: seed the demo into an empty database, allow Reset."
    ),
) -> None:
    """Serve the web app. Without --demo it never seeds and refuses Reset demo."""
    import dataclasses

    import uvicorn

    from trace_app.web.app import create_app

    settings = _settings()
    if demo:
        settings = dataclasses.replace(settings, demo=True)
    kind = "demo server" if settings.demo else "no demo data, no Reset"
    typer.echo(f"Trace on http://{host}:{port}  ({kind}; database: {_describe(settings)})")
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")


@app.command()
def reset() -> None:
    """Delete all records (investigation runs too) and seed the demo; never the ledger."""
    from trace_app.demo.seed import reset_demo
    from trace_app.domain.queries import list_incidents
    from trace_app.plugins import load_optional_parts
    from trace_app.store.db import Database

    settings = _settings()
    load_optional_parts()
    db = Database.from_settings(settings)
    try:
        with db.session() as session:
            incident = reset_demo(session)
        with db.session() as session:
            summary = next(s for s in list_incidents(session) if s.incident.id == incident.id)
    finally:
        db.dispose()
    typer.echo(
        f"Reset done: {summary.incident.name} with {summary.reports} reports, "
        f"{summary.people} people, {summary.open_alerts} open alerts "
        f"(database: {_describe(settings)})."
    )


incident_app = typer.Typer(help="Incidents on the configured database.", no_args_is_help=True)
app.add_typer(incident_app, name="incident")


@incident_app.command("create")
def incident_create(
    name: str = typer.Argument(..., help="The incident's name (unique, any case)."),
    description: str = typer.Option("", help="What the incident is."),
) -> None:
    """Create an incident (a deployment with no demo starts with none)."""
    from trace_app.domain.errors import InvalidInputError
    from trace_app.domain.incidents import create_incident
    from trace_app.store.db import Database

    settings = _settings()
    db = Database.from_settings(settings)
    try:
        with db.session() as session:
            incident = create_incident(session, name, description)
            incident_id, incident_name = incident.id, incident.name
    except InvalidInputError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    finally:
        db.dispose()
    typer.echo(f"Created incident {incident_name!r}: {incident_id}")


@incident_app.command("list")
def incident_list() -> None:
    """Every incident with its id and counts, oldest first."""
    from trace_app.domain.queries import list_incidents
    from trace_app.store.db import Database

    settings = _settings()
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
        typer.echo(f"No incidents (database: {_describe(settings)}).")
    for row in rows:
        typer.echo(row)


def _describe(settings: TraceSettings) -> str:
    """The database URL without a password."""
    from sqlalchemy.engine import make_url

    return make_url(settings.database_url).render_as_string(hide_password=True)


def _register_investigation_commands() -> None:
    # hook for the investigation (issue 4): `investigate`, `ledger`, `record-demo`
    from trace_app.investigation.cli import register

    register(app)


_register_investigation_commands()


def _register_local_model_commands() -> None:
    """`trace demo` and `trace eval` (trace_app.local_cli)."""
    from trace_app import local_cli

    local_cli.register(app)


_register_local_model_commands()


def _register_interchange_commands() -> None:
    """`trace pfif export|import` and `trace import csv` (trace_app.interchange_cli)."""
    from trace_app import interchange_cli

    interchange_cli.register(app)


_register_interchange_commands()


if __name__ == "__main__":
    app()
