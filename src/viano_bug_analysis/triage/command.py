"""``viano triage SOURCE... --store DIR [--config FILE] [--concurrency N] [--format NAME]
[--out DIR] [--json]`` (registered in ``viano_bug_analysis.cli``; docs/viano-triage.md).

Exit status 0 when the table was written (each row carries its own status and error
code), 1 on a failure of the command itself (``error.code``), 130 after Ctrl-C (the
table of what was done is written first; the next run resumes).
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import typer

from viano_bug_analysis.cli_output import emit, failures, identity

DEFAULT_REMOTE_CONCURRENCY = 4


def _is_llama_cpp(config: Any) -> bool:
    """Whether the first provider is a llama.cpp server on this machine (the embedded
    model or one like it): it answers one request at a time (one slot)."""
    from viano_bug_analysis.llm.local_model import is_loopback

    provider = config.providers[0]
    return is_loopback(provider.base_url) and provider.structured_output == "json_object_schema"


def choose_concurrency(config: Any, asked: int | None) -> tuple[int, str | None]:
    """(concurrency, a note for people or None): the asked number for a remote provider
    (default 4); one for the embedded model, whose server has one slot."""
    if _is_llama_cpp(config):
        note = None if asked in (None, 1) else "the embedded model answers one request at a time"
        return 1, note
    return max(1, asked or DEFAULT_REMOTE_CONCURRENCY), None


@contextlib.contextmanager
def _bar(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    if not enabled:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from viano_bug_analysis.cli_output import _err

    with Progress(
        TextColumn("{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=_err,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=max(total, 1))
            bar.update(tasks[stage], completed=done, total=max(total, 1))

        yield update


def triage_command(
    sources: list[str] = typer.Argument(
        ..., metavar="SOURCE", help="Report files, folders or globs."
    ),
    store: Path = typer.Option(..., "--store", help="The package store (created if absent)."),
    config: Path | None = typer.Option(
        None,
        "--config",
        help="Gateway configuration (TOML); default config/llm.local.toml when the current "
        "folder has one, else the embedded local model shipped with Viano.",
    ),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        min=1,
        max=64,
        help="Interpretations in flight at once (default 4; 1 with the embedded model).",
    ),
    fmt: str | None = typer.Option(
        None, "--format", help="Import format of every source (default: detected per file)."
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Folder for triage.md/.csv/.html (default: reports/ in the store)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Import, build and interpret a backlog of bug reports; write one triage table."""
    from viano_bug_analysis.llm import LLMGateway
    from viano_bug_analysis.llm.config import resolve_config
    from viano_bug_analysis.llm.local_model import model_for
    from viano_bug_analysis.packages import PackageStore
    from viano_bug_analysis.triage.runner import TriageReport, TriageRow, run_triage
    from viano_bug_analysis.triage.sources import expand_sources
    from viano_bug_analysis.triage.table import write_tables

    rows: list[TriageRow] = []
    with failures(as_json, identity()):
        files = expand_sources(sources, fmt)
        gateway_config = resolve_config(config)[0]
        package_store = PackageStore.init(store)
        target = out if out is not None else store / "reports"
        workers, note = choose_concurrency(gateway_config, concurrency)
        if note and not as_json:
            typer.echo(f"concurrency 1: {note}", err=True)
        with (
            tempfile.TemporaryDirectory(prefix="viano-triage-log-") as logs,
            model_for(gateway_config, Path(logs), required=False, lazy=True) as endpoint,
            _bar(not as_json) as progress,
        ):

            def gateway() -> Any:
                return LLMGateway(gateway_config, endpoints=endpoint.endpoints)

            try:
                report = asyncio.run(
                    run_triage(
                        files,
                        package_store,
                        gateway,
                        concurrency=workers,
                        out=target,
                        progress=progress,
                        rows=rows,
                    )
                )
            except KeyboardInterrupt:
                # the table of what was done, then the typed "cancelled" answer
                write_tables(TriageReport(rows, target, workers, 0.0), package_store)
                raise
        write_tables(report, package_store)
    payload = {**identity(), "status": "triaged", **report.to_json()}

    def human() -> None:
        counts = ", ".join(f"{k} {v}" for k, v in report.counts().items())
        typer.echo(
            f"{len(report.rows)} rows ({counts}); {report.model_calls} model calls; "
            f"{report.seconds:.1f} s"
        )
        for path in report.files.values():
            typer.echo(f"  {path}")

    emit(as_json, payload, human)
