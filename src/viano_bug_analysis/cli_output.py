"""What every `viano` command shares: the ``--json`` option, the identity fields of its
output, one JSON object or text for people, typed errors as output and exit 1, and the
progress bar.

Every failure is a typed answer (ADR 0101): a ``VianoError`` prints its own code, an
``OSError`` prints ``io.error``, Ctrl-C prints ``cancelled`` (exit 130) and anything
else prints ``internal.unexpected`` with the path of a log file that holds the
traceback (``VIANO_LOG_DIR``, default ``<temp>/viano-logs``). With ``--json`` that is one
JSON object with ``error.code``; without it, one sentence on stderr, never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from viano_bug_analysis.errors import VianoError

LOG_DIR_ENV = "VIANO_LOG_DIR"
EXIT_CANCELLED = 130

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
    except typer.Exit:
        raise
    except BaseException as exc:  # every failure becomes a typed answer
        code, error = typed_error(exc)
        _fail(as_json, ident, error, code)


def typed_error(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """(exit status, the ``error`` object) of any exception; an unexpected one has its
    traceback written to a log file first."""
    if isinstance(exc, VianoError):
        return 1, exc.to_json()
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_CANCELLED, {"code": "cancelled", "message": "interrupted (Ctrl-C)"}
    if isinstance(exc, OSError):
        return 1, {"code": "io.error", "message": str(exc)}
    if isinstance(exc, SystemExit | GeneratorExit):
        raise exc
    log = write_crash_log(exc)
    return 1, {
        "code": "internal.unexpected",
        "message": f"an unexpected {type(exc).__name__}; the traceback is in {log}",
        "details": {"log": str(log), "type": type(exc).__name__},
    }


def write_crash_log(exc: BaseException) -> Path:
    """Write ``exc``'s traceback to a new file in the log folder; returns its path (or a
    note when even that fails: the answer stays typed)."""
    folder = Path(os.environ.get(LOG_DIR_ENV) or Path(tempfile.gettempdir()) / "viano-logs")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = folder / f"viano-{stamp}-{os.getpid()}.log"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        with open(fd, "w", encoding="utf-8") as f:
            f.write(f"viano {' '.join(sys.argv[1:])}\n")
            f.write("".join(traceback.format_exception(exc)))
    except OSError:
        return Path("(no log: the log folder is not writable)")
    return path


def _fail(as_json: bool, ident: dict[str, Any], error: dict[str, Any], exit_code: int = 1) -> None:
    if as_json:
        typer.echo(
            json.dumps(
                {**ident, "status": "error", "error": error}, sort_keys=True, ensure_ascii=False
            )
        )
    else:
        _err.print(
            "[red]error[/red] " + escape(f"[{error['code']}] {error['message']}"),
            markup=True,
            highlight=False,
            soft_wrap=True,
        )
    raise typer.Exit(exit_code)


class TypedTyper(typer.Typer):
    """A Typer app whose every failure is a typed answer, even one raised outside a
    command's :func:`failures` block (in its output, or in a command that catches only
    its own errors): ``--json`` anywhere in the arguments makes it one JSON object."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(pretty_exceptions_enable=False, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except (SystemExit, typer.Exit):
            raise
        except BaseException as exc:
            as_json = "--json" in sys.argv[1:]
            try:
                code, error = typed_error(exc)
                _fail(as_json, identity(), error, code)
            except typer.Exit as done:
                sys.exit(done.exit_code)


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
        TimeRemainingColumn(),
        console=_err,
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=max(total, 1))
            bar.update(tasks[stage], completed=done, total=max(total, 1))

        yield update
