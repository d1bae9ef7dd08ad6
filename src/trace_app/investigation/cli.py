"""The investigation's commands: ``trace investigate``, ``trace ledger``, ``trace record-demo``.

:mod:`trace_app.cli` registers them on the ``trace`` Typer app.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from trace_app.cli_support import fail, model_settings, operator, trace_settings

if TYPE_CHECKING:
    from trace_app.investigation.model_settings import ModelSettings
    from trace_app.investigation.service import InvestigationService


def _passphrase(model: ModelSettings, ask: bool) -> str | None:
    """The server's own (TRACE_LIVE_PASSPHRASE, in ``model``), else typed at a hidden
    prompt (never echoed or logged)."""
    if model.passphrase:
        return model.passphrase
    if not ask:
        return None
    typed: str = typer.prompt(
        "Live-check passphrase (empty: show a saved result only)",
        default="",
        hide_input=True,
        show_default=False,
    )
    return typed or None


async def _live_once(service: InvestigationService, report_id: str, passphrase: str | None) -> Any:
    try:
        return await service.investigate(report_id, passphrase)
    finally:
        await service.aclose()


def _audit_live_check(db: Any, report_id: str, result: Any) -> None:
    """A live check from the command line is audited like one from the web (its outcome,
    never the passphrase), as the operator."""
    from trace_app.domain import audit
    from trace_app.domain.queries import incident_of
    from trace_app.store.models import Report

    with db.sessions() as session:
        audit.record(
            session,
            operator(),
            "investigation.check",
            object_type="report",
            object_id=report_id,
            incident_id=incident_of(session, Report, report_id),
            after={"status": result.status.value, "mode": getattr(result.mode, "value", None)},
        )
        session.commit()


def investigate(
    report_id: str = typer.Argument(..., help="The report to investigate."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    prompt: bool = typer.Option(
        True, "--prompt/--no-prompt", help="Ask for the passphrase when the variable is unset."
    ),
) -> None:
    """Investigate how one report attributes its information (at most two model calls)."""
    from trace_app.domain.errors import NotFoundError
    from trace_app.investigation.service import build_service
    from trace_app.store.db import Database

    settings = trace_settings()
    model = model_settings()
    db = Database.from_settings(settings)
    try:
        service = build_service(db, settings, model=model)
        try:
            # PARTIAL or a saved run needs no passphrase: ask only when a call is due
            saved = service.without_call(report_id)
            result = saved or asyncio.run(
                _live_once(service, report_id, _passphrase(model, prompt))
            )
            if saved is None:
                _audit_live_check(db, report_id, result)
        except NotFoundError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
    finally:
        db.dispose()
    if as_json:
        typer.echo(json.dumps(result.as_json(), indent=2, ensure_ascii=False))
        return
    typer.echo(f"{result.status.value}: {result.status.meaning}")
    if result.mode is not None:
        typer.echo(f"mode: {result.mode.value} ({result.mode.meaning})")
    typer.echo(f"reason: {result.reason}")
    for label, value in (
        ("attribution", result.attribution),
        ("referenced source", result.referenced_source),
        ("comparison", result.support),
        ("model", result.model),
        ("prompt version", result.prompt_version),
        ("run at", result.run_at.isoformat() if result.run_at else None),
    ):
        if value:
            typer.echo(f"{label}: {value}")
    if result.mode is not None:
        u = result.usage
        typer.echo(
            f"tokens: {u.prompt_tokens} prompt + {u.completion_tokens} completion "
            f"({u.source}; estimate {u.estimated_tokens})"
        )
    if result.rules_version:
        typer.echo(f"decided by: {result.rules_version}")
    for cue in result.evidence:
        typer.echo(f"cue [{cue.kind.label}]: {cue.words}")
    for citation in result.citations:
        typer.echo(f"cited [{citation.source}]: {citation.excerpt}")
    saved = result.latest_saved
    if saved is not None:
        typer.echo(
            f"most recent saved result (not this check's answer): {saved.status.value}, "
            f"mode {saved.mode.value if saved.mode else '-'}, model {saved.model}, "
            f"run at {saved.run_at.isoformat() if saved.run_at else '-'}"
        )


def ledger() -> None:
    """Show the model request ledger: requests, tokens and the cap (no secrets)."""
    from modelgate.errors import LedgerUnavailable
    from trace_app.investigation.service import ledger_factory_for

    settings = trace_settings()
    try:
        snapshot = ledger_factory_for(settings)().snapshot()
    except LedgerUnavailable as exc:
        typer.echo(f"ledger unavailable: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(json.dumps({**snapshot.as_dict(), "remaining": snapshot.remaining}, indent=2))


def record_demo(
    output: Path | None = typer.Option(
        None,
        help="Where to write. Default: TRACE_RECORDED_INVESTIGATIONS if set, else "
        "demo/recorded_investigations.json at the root of the checkout Trace runs from.",
    ),
) -> None:
    """Record real runs of the seeded reports (3 reports, 1-2 calls each).

    With the configured model, else the embedded one started for the run."""
    from modelgate.providers import build_provider
    from trace_app.investigation.demo_recording import RecordingFailed
    from trace_app.investigation.demo_recording import record_demo as run_recording
    from trace_app.investigation.recorded import default_output
    from trace_app.investigation.service import ledger_factory_for
    from trace_app.local_model import model_for_commands

    settings = trace_settings()
    configured = model_settings()
    target = output or default_output(settings.recorded_investigations)
    if target is None:
        fail(
            "Trace is not running from a checkout and TRACE_RECORDED_INVESTIGATIONS "
            "is unset; pass --output PATH"
        )
    with model_for_commands(configured, log_dir=settings.ensure_home()) as choice:
        model = choice.settings
        try:
            outcome = asyncio.run(
                run_recording(
                    model=model,
                    passphrase=_passphrase(model, True),
                    output=target,
                    ledger_factory=ledger_factory_for(settings),
                    provider_factory=build_provider,
                )
            )
        except RecordingFailed as exc:
            fail(f"{exc}; {target} was left unchanged", 1)
    for result in outcome.results:
        typer.echo(
            f"{result.status.value}: {result.attribution} / {result.referenced_source}"
            f"{' / ' + result.support if result.support else ''} ({result.requests_sent} calls)"
        )
    typer.echo(f"recorded {len(outcome.runs)} runs with {model.model} into {outcome.path}")
