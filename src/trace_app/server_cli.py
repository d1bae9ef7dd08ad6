"""``trace serve`` and ``trace reset``: the web app, and the demo's Reset from the shell."""

from __future__ import annotations

import dataclasses

import typer

from trace_app.cli_support import describe_database, model_settings, trace_settings


def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8000, help="Port to listen on."),
    demo: bool = typer.Option(
        False, "--demo", help="A demo server: seed the demo into an empty database, allow Reset."
    ),
) -> None:
    """Serve the web app. Without --demo it never seeds and refuses Reset demo."""
    import uvicorn

    from trace_app.web.app import create_app

    settings = trace_settings()
    model = model_settings()
    if demo:
        settings = dataclasses.replace(settings, demo=True)
    kind = "demo server" if settings.demo else "no demo data, no Reset"
    typer.echo(f"Trace on http://{host}:{port}  ({kind}; database: {describe_database(settings)})")
    uvicorn.run(create_app(settings, model=model), host=host, port=port, log_level="info")


def reset() -> None:
    """Delete all records (investigation runs too) and seed the demo; never the ledger."""
    from trace_app import demo_reset
    from trace_app.domain.queries import list_incidents
    from trace_app.store.db import Database

    settings = trace_settings()
    db = Database.from_settings(settings)
    try:
        with db.session() as session:
            incident = demo_reset.reset(session, settings)
        with db.session() as session:
            summary = next(s for s in list_incidents(session) if s.incident.id == incident.id)
    finally:
        db.dispose()
    typer.echo(
        f"Reset done: {summary.incident.name} with {summary.reports} reports, "
        f"{summary.people} people, {summary.open_alerts} open alerts "
        f"(database: {describe_database(settings)})."
    )
