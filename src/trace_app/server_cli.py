"""``trace serve`` and ``trace reset``: the web app, and the demo's Reset from the shell."""

from __future__ import annotations

import dataclasses

import typer

from trace_app.cli_support import (
    describe_database,
    for_host,
    model_settings,
    operator,
    prepare_accounts,
    trace_settings,
)


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

    settings = for_host(trace_settings(), host)
    model = model_settings()
    if demo:
        settings = dataclasses.replace(settings, demo=True)
    web_app = create_app(settings, model=model)  # migrates, and seeds a demo server
    prepare_accounts(settings)
    kind = "demo server" if settings.demo else "no demo data, no Reset"
    typer.echo(f"Trace on http://{host}:{port}  ({kind}; database: {describe_database(settings)})")
    # Forwarded headers are read by the app, from TRACE_TRUSTED_PROXIES only; uvicorn's own
    # reading (which trusts loopback by default) is off.
    uvicorn.run(web_app, host=host, port=port, log_level="info", proxy_headers=False)


def reset() -> None:
    """Delete all records (investigation runs too) and seed the demo; never the ledger."""
    from trace_app import demo_reset
    from trace_app.domain.queries import list_incidents
    from trace_app.store.db import Database

    settings = trace_settings()
    db = Database.from_settings(settings)
    try:
        with db.session() as session:
            incident = demo_reset.reset(session, settings, actor=operator())
        with db.session() as session:
            summary = next(s for s in list_incidents(session) if s.incident.id == incident.id)
    finally:
        db.dispose()
    typer.echo(
        f"Reset done: {summary.incident.name} with {summary.reports} reports, "
        f"{summary.people} people, {summary.open_alerts} open alerts "
        f"(database: {describe_database(settings)})."
    )
