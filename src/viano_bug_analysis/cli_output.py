"""What every `viano` command shares: the ``--json`` option, the identity fields of its
output, one JSON object or text for people, typed errors as output and exit 1, and the
progress bar."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from viano_bug_analysis.errors import VianoError

JsonOpt = typer.Option(False, "--json", help="Print one JSON object; exit 1 on failure.")
_err = Console(stderr=True)


def identity(case_id: str | None = None, package_id: str | None = None) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "package_id": package_id,
        "package_generation": None,
        "analysis_revision": None,
    }


def emit(as_json: bool, payload: dict[str, Any], human: Callable[[], None]) -> None:
    if as_json:
        typer.echo(json.dumps(payload, sort_keys=True, ensure_ascii=False))
    else:
        human()


@contextmanager
def failures(as_json: bool, ident: dict[str, Any]) -> Iterator[None]:
    """Turn VianoError (and missing files) into the documented output and exit 1."""
    try:
        yield
    except VianoError as exc:
        _fail(as_json, ident, exc.to_json())
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        _fail(as_json, ident, {"code": "io.error", "message": str(exc)})


def _fail(as_json: bool, ident: dict[str, Any], error: dict[str, Any]) -> None:
    if as_json:
        typer.echo(
            json.dumps(
                {**ident, "status": "error", "error": error}, sort_keys=True, ensure_ascii=False
            )
        )
    else:
        _err.print(
            f"[red]error[/red] [{error['code']}] {error['message']}", markup=True, highlight=False
        )
    raise typer.Exit(1)


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    if not enabled:
        yield None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=_err,
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=max(total, 1))
            bar.update(tasks[stage], completed=done, total=max(total, 1))

        yield update
