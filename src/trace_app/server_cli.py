"""``trace serve``, ``trace worker`` and ``trace reset``: the web app (with its delivery
worker), a delivery worker alone, and the demo's Reset from the shell."""

from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING

import typer

from trace_app.cli_support import (
    describe_database,
    for_host,
    model_settings,
    operator,
    prepare_accounts,
    trace_settings,
)
from trace_app.settings import TraceSettings

if TYPE_CHECKING:
    from trace_app.store.db import Database


def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8000, help="Port to listen on."),
    demo: bool = typer.Option(
        False, "--demo", help="A demo server: seed the demo into an empty database, allow Reset."
    ),
    worker: bool = typer.Option(
        True,
        "--worker/--no-worker",
        help="Run the delivery worker (mail, webhooks) in this process; "
        "TRACE_DELIVERY_WORKER=0 also turns it off.",
    ),
) -> None:
    """Serve the web app. Without --demo it never seeds and refuses Reset demo."""
    import uvicorn

    from trace_app.web.app import create_app

    settings = for_host(trace_settings(), host)
    model = model_settings()
    if demo:
        settings = dataclasses.replace(settings, demo=True)
    if not settings.public_url:  # links in mail point at this server
        settings = dataclasses.replace(settings, public_url=f"http://{host}:{port}")
    web_app = create_app(settings, model=model)  # migrates, and seeds a demo server
    prepare_accounts(settings)
    kind = "demo server" if settings.demo else "no demo data, no Reset"
    typer.echo(f"Trace on http://{host}:{port}  ({kind}; database: {describe_database(settings)})")
    # Forwarded headers are read by the app, from TRACE_TRUSTED_PROXIES only; uvicorn's own
    # reading (which trusts loopback by default) is off.
    stop = (
        _start_worker(web_app.state.db, settings) if worker and settings.delivery_worker else None
    )
    try:
        uvicorn.run(web_app, host=host, port=port, log_level="info", proxy_headers=False)
    finally:
        if stop is not None:
            stop.set()


def _start_worker(db: Database, settings: TraceSettings) -> threading.Event:
    """The delivery worker in a daemon thread, on the app's engine; set the event to stop."""
    from trace_app.notifications.worker import start_thread

    _thread, stop = start_thread(db, settings)
    if not settings.smtp_url:
        typer.echo("Mail waits in the outbox: TRACE_SMTP_URL is not set.")
    return stop


def worker(
    once: bool = typer.Option(
        False, "--once", help="Send what is due now, then stop (otherwise run until stopped)."
    ),
) -> None:
    """Run a delivery worker (the outbox: mail and webhooks) in this process.

    Several may run at once, on PostgreSQL on several machines: each delivery is sent by
    one."""
    import signal

    from trace_app.notifications.worker import DeliveryWorker
    from trace_app.store.db import Database

    settings = trace_settings()
    db = Database.from_settings(settings)
    delivery = DeliveryWorker(db, settings)
    try:
        if once:
            counts = delivery.drain()
            typer.echo(
                f"Delivered {counts.delivered}, failed {counts.failed} (will retry), "
                f"dead {counts.dead}, skipped {counts.skipped}."
            )
            return
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        typer.echo(f"Delivery worker running (database: {describe_database(settings)}).")
        if not settings.smtp_url:
            typer.echo("Mail waits in the outbox: TRACE_SMTP_URL is not set.")
        try:
            delivery.run_forever(stop)
        except KeyboardInterrupt:
            stop.set()
    finally:
        db.dispose()


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
