"""``trace demo`` and ``trace eval``: the live flow and its evaluation, on any model.

Both use the configured model when ``NVIDIA_NIM_API_KEY``, ``TRACE_MODEL`` or
``TRACE_MODEL_BASE_URL`` is set, and otherwise start the embedded local model server for
as long as the command runs (see :mod:`trace_app.local_model`). :mod:`trace_app.cli`
registers them on the ``trace`` Typer app.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
from pathlib import Path

import typer

from trace_app.cli_support import (
    describe_database,
    fail,
    for_host,
    model_settings,
    prepare_accounts,
    trace_settings,
)

DEMO_HOST = "127.0.0.1"


def demo(
    port: int = typer.Option(8000, help="Port for the web app on 127.0.0.1."),
) -> None:
    """Serve Trace with live checks on: the configured model, else the embedded one.

    A passphrase for live checks is generated now and printed once, here, unless
    TRACE_LIVE_PASSPHRASE is already set. The demo is seeded into an empty database.
    """
    import uvicorn

    from modelgate.errors import NotConfigured
    from trace_app.local_model import model_for_commands
    from trace_app.web.app import create_app

    settings = for_host(dataclasses.replace(trace_settings(), demo=True), DEMO_HOST)
    configured = model_settings()
    settings.ensure_home()
    try:
        with model_for_commands(configured, log_dir=settings.home) as choice:
            typer.echo(f"Model: {choice.description}")
            if choice.local_server is not None:
                typer.echo(
                    "  (the embedded model shows the real path; its labels are often wrong, "
                    "see docs/local-model.md)"
                )
            model = choice.settings
            if model.passphrase is None:
                # handed to the app as an argument: never in the environment, so no child
                # process (the model server) can inherit it
                model = dataclasses.replace(model, passphrase=secrets.token_urlsafe(12))
                typer.echo(f"Live-check passphrase (shown only now): {model.passphrase}")
            else:
                typer.echo("Live-check passphrase: from TRACE_LIVE_PASSPHRASE")
            health = None
            if choice.local_server is not None:
                # restarted with bounded backoff if it dies; checks wait for it
                health = choice.local_server.watch().unavailable_reason
            web_app = create_app(settings, model=model, model_health=health)
            prepare_accounts(settings)
            typer.echo(
                f"Trace on http://{DEMO_HOST}:{port}  (database: {describe_database(settings)}); "
                "Ctrl-C stops it and the model server."
            )
            uvicorn.run(
                web_app, host=DEMO_HOST, port=port, log_level="warning", proxy_headers=False
            )
    except NotConfigured as exc:
        fail(exc.message)


def eval_command(
    files: list[Path] = typer.Argument(
        ...,
        exists=True,
        dir_okay=False,
        help="Case files (JSONL); with --crisislex, also CrisisLexT26 labelled CSV files.",
        show_default=False,
    ),
    crisislex: bool = typer.Option(
        False,
        "--crisislex",
        help="Read the .csv files given as CrisisLexT26 labelled tweets: Eyewitness tweets "
        "are DIRECT cases, Outsiders and Media tweets are not first-hand; other sources are "
        "skipped and counted.",
    ),
    out: Path | None = typer.Option(None, "--out", help="Also write the figures as JSON here."),
    quiet: bool = typer.Option(False, "--quiet", help="No line per case."),
    rule_off: bool = typer.Option(
        False,
        "--rule-off",
        help="Also print the figures as they would be without the evidence rule "
        "(for comparison only; the app has no such switch).",
    ),
    sample: int | None = typer.Option(
        None,
        "--sample",
        help="Keep every DIRECT case and draw this many of the others at random "
        "(with --seed): a shorter run.",
    ),
    seed: int = typer.Option(0, "--seed", help="Random seed for --sample."),
    prompt_version: str | None = typer.Option(
        None,
        "--prompt-version",
        help="report-lineage-v4 or report-lineage-v5 (default: TRACE_PROMPT_VERSION, "
        "else the shipped default).",
    ),
) -> None:
    """Run a labelled set through the real investigation with the configured model.

    Prints a confusion matrix, label and source accuracy, misleading COMPLETED outcomes,
    first-hand recall, what the evidence rule lowered, the share of valid answers, latency
    and tokens (docs/evaluation.md).
    """
    from modelgate.errors import NotConfigured
    from trace_app.evaluation import (
        CaseOutcome,
        EvalCaseError,
        load_cases,
        load_crisislex,
        render_text,
        run_evaluation,
        sample_cases,
        write_json,
    )
    from trace_app.investigation.model_settings import PROMPT_VERSIONS
    from trace_app.local_model import model_for_commands

    if prompt_version is not None and prompt_version not in PROMPT_VERSIONS:
        typer.echo(f"error: --prompt-version must be one of {', '.join(PROMPT_VERSIONS)}", err=True)
        raise typer.Exit(2)
    csv_files = [f for f in files if f.suffix.lower() == ".csv"]
    if csv_files and not crisislex:
        typer.echo("error: .csv files are read only with --crisislex (CrisisLexT26)", err=True)
        raise typer.Exit(2)
    try:
        loaded = [case for f in files if f not in csv_files for case in load_cases(f)]
        tweets, skipped = load_crisislex(csv_files)
    except (EvalCaseError, OSError, UnicodeDecodeError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    loaded += tweets
    if sample is not None:
        loaded = sample_cases(loaded, sample, seed)
        typer.echo(f"sample: every DIRECT case and {sample} others drawn with seed {seed}")
    if skipped:
        typer.echo(f"CrisisLexT26: {len(tweets)} tweets kept, skipped {skipped}")
    total = len(loaded)
    done: list[CaseOutcome] = []

    def show(outcome: CaseOutcome) -> None:
        done.append(outcome)
        if not quiet:
            typer.echo(
                f"  [{len(done)}/{total}] {outcome.id}: expected {outcome.expected_label}/"
                f"{outcome.expected_source}, model {outcome.label}/{outcome.referenced_source}"
                f" -> {outcome.status}"
                + (f" (lowered: {', '.join(outcome.lowered_by)})" if outcome.lowered_by else "")
                + f" ({outcome.requests_sent} calls, {outcome.latency_s:.2f} s)"
            )

    settings = trace_settings()
    configured = model_settings()
    settings.ensure_home()
    try:
        with model_for_commands(configured, log_dir=settings.home) as choice:
            model = choice.settings
            if prompt_version is not None:
                model = dataclasses.replace(model, prompt_version=prompt_version)
            typer.echo(
                f"Evaluating {total} cases with {choice.description}, prompt {model.prompt_version}"
            )
            report = asyncio.run(run_evaluation(loaded, model, skipped=skipped, progress=show))
    except NotConfigured as exc:
        fail(str(exc))
    typer.echo("")
    typer.echo(render_text(report, rule_off=rule_off))
    if out is not None:
        write_json(report, out)
        typer.echo(f"\nwrote {out}")
