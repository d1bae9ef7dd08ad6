"""The triage pipeline: every report imported, added, built, then interpreted with
bounded concurrency; one row per case (or per source that failed before it had one).

Resumable by construction (ADR 0104): importers write the same package bytes for the
same input, so a second ``add`` is ``unchanged``; ``build`` is ``unchanged`` for the same
raw inputs; and ``CaseInterpreter`` reuses a published interpretation, or a confirmed
gateway round recorded before a crash, without a new model call. Only a call that was
in flight when the process died (never confirmed) is sent again.

Preparation (import, add, build) runs in a worker thread, one source after another,
while interpretations run on the event loop, at most ``concurrency`` at once; the first
cases are interpreted while later ones are still being built.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from viano_bug_analysis.errors import VianoError
from viano_bug_analysis.triage.sources import SourceFile

FAILED = "FAILED"  # the source or case never reached a model answer: see error_code
PENDING = "PENDING"  # not reached (the run was interrupted)

# (stage, done, total): stage "prepare" counts sources, "interpret" counts cases
Progress = Callable[[str, int, int], None]
GatewayFactory = Callable[[], Any]


@dataclass(slots=True)
class TriageRow:
    source: str
    case_id: str | None = None
    package_id: str | None = None
    line: int | None = None
    status: str = PENDING
    error_code: str | None = None
    message: str | None = None
    behavior_gap: bool | None = None
    stated_expectation: bool | None = None
    expected_behavior: str | None = None  # completeness: complete, incomplete, missing, ...
    unknowns: list[str] = field(default_factory=list)
    investigation_direction: list[str] = field(default_factory=list)
    summary: str | None = None
    interpretation: str | None = None  # the exported Markdown, relative to the table
    model_call: bool = False  # this run sent a request for this case
    seconds: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class TriageReport:
    rows: list[TriageRow]
    out: Path
    concurrency: int
    seconds: float
    files: dict[str, str] = field(default_factory=dict)

    @property
    def model_calls(self) -> int:
        return sum(r.model_call for r in self.rows)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for row in self.rows:
            out[row.status] = out.get(row.status, 0) + 1
        return dict(sorted(out.items()))

    def to_json(self) -> dict[str, Any]:
        return {
            "counts": self.counts(),
            "model_calls": self.model_calls,
            "concurrency": self.concurrency,
            "seconds": round(self.seconds, 3),
            "out": str(self.out),
            "files": dict(self.files),
            "rows": [r.to_json() for r in self.rows],
        }


def _fail(row: TriageRow, exc: BaseException) -> TriageRow:
    if isinstance(exc, VianoError):
        row.error_code, row.message = exc.code, exc.message
    elif isinstance(exc, OSError):
        row.error_code, row.message = "io.error", str(exc)
    else:
        from viano_bug_analysis.cli_output import write_crash_log

        log = write_crash_log(exc)
        row.error_code = "internal.unexpected"
        row.message = f"an unexpected {type(exc).__name__}; the traceback is in {log}"
    row.status = FAILED
    return row


def _prepare(store: Any, source: SourceFile, scratch: Path, index: int) -> list[TriageRow]:
    """Import, add and build one source file; one row per record it holds."""
    from viano_bug_analysis.case import CaseBuilder
    from viano_bug_analysis.intake import import_file

    name = str(source.path)
    if source.format is None:
        row = TriageRow(name, status=FAILED, error_code="triage.format_unknown")
        row.message = source.problem
        return [row]
    try:
        folder = scratch / f"{index:06d}"
        folder.mkdir()
        imported = import_file(source.format, source.path, folder)
    except BaseException as exc:  # every failure of a source is a row of the table
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        return [_fail(TriageRow(name), exc)]
    rows: list[TriageRow] = []
    for pkg in imported:
        row = TriageRow(name, pkg.case_id, pkg.package_id, pkg.line)
        rows.append(row)
        try:
            store.add(pkg.path)
            CaseBuilder(store).build(pkg.case_id, pkg.package_id)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            _fail(row, exc)
    return rows


async def run_triage(
    sources: list[SourceFile],
    store: Any,
    gateway_factory: GatewayFactory,
    *,
    concurrency: int,
    out: Path,
    progress: Progress | None = None,
    rows: list[TriageRow] | None = None,
) -> TriageReport:
    """Triage ``sources`` into ``store``; interpret with at most ``concurrency`` requests
    in flight through one gateway from ``gateway_factory``. ``rows`` (a list the caller
    keeps) receives every row as soon as it exists, so that an interrupted run can still
    write its table."""
    started = time.perf_counter()
    rows = rows if rows is not None else []
    limit = asyncio.Semaphore(max(1, concurrency))
    gateway = gateway_factory()
    tasks: list[asyncio.Task[None]] = []
    done = 0
    cases = 0

    def tick() -> None:
        if progress is not None:
            progress("interpret", done, cases)

    async def interpret(row: TriageRow) -> None:
        nonlocal done
        async with limit:
            await _interpret(store, gateway, row)
        done += 1
        tick()

    try:
        with tempfile.TemporaryDirectory(prefix="viano-triage-") as scratch:
            for i, source in enumerate(sources):
                prepared = await asyncio.to_thread(_prepare, store, source, Path(scratch), i)
                rows.extend(prepared)
                for row in prepared:
                    if row.status == PENDING:
                        cases += 1
                        tasks.append(asyncio.create_task(interpret(row)))
                if progress is not None:
                    progress("prepare", i + 1, len(sources))
                tick()
            await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await gateway.aclose()
    return TriageReport(rows, out, concurrency, time.perf_counter() - started)


async def _interpret(store: Any, gateway: Any, row: TriageRow) -> None:
    from viano_bug_analysis.analysis.interpreter import CaseInterpreter

    assert row.case_id is not None and row.package_id is not None
    started = time.perf_counter()
    try:
        result = await CaseInterpreter(store, gateway).interpret(row.case_id, row.package_id)
    except Exception as exc:  # one case's failure is its row, never the whole run's
        _fail(row, exc)
        await asyncio.to_thread(_read_case, store, row)
        return
    row.seconds = round(time.perf_counter() - started, 3)
    row.status = result.status.value
    row.model_call = not result.reused
    if result.error:
        row.error_code = str(result.error.get("code") or "")
        row.message = str(result.error.get("message") or "")
    elif result.violations:
        rules = sorted({v["rule"] for v in result.violations})
        row.error_code = "rejected"
        row.message = "rejected by validation: " + ", ".join(rules)
    await asyncio.to_thread(_read_outcome, store, row, result.pointers)


def _read_case(store: Any, row: TriageRow) -> None:
    """The expected-behaviour completeness of the built case, for a row with no answer."""
    from viano_bug_analysis.case.builder import read_case_built

    try:
        assert row.case_id is not None and row.package_id is not None
        with store.current(row.case_id, row.package_id).open() as reader:
            checkpoint = read_case_built(reader)
    except (VianoError, OSError, ValueError, AssertionError):
        return
    if checkpoint is not None:
        completeness = checkpoint.get("expected_behavior_completeness")
        row.expected_behavior = str(completeness) if completeness is not None else None
        row.stated_expectation = completeness in ("complete", "conflicting")


def _read_outcome(store: Any, row: TriageRow, pointers: dict[str, str]) -> None:
    from viano_bug_analysis.packages import POINTER_CASE_INTERPRETATION

    _read_case(store, row)
    member = pointers.get(POINTER_CASE_INTERPRETATION)
    if member is None:
        return
    assert row.case_id is not None and row.package_id is not None
    with store.current(row.case_id, row.package_id).open() as reader:
        published = json.loads(reader.read(member))
    body = published.get("interpretation") or {}
    status = published.get("expected_behavior_status") or {}
    row.behavior_gap = body.get("behavior_gap") is not None
    if isinstance(status.get("explicit"), bool):
        row.stated_expectation = status["explicit"]
    row.unknowns = [str(s.get("text", "")) for s in body.get("unknowns") or []]
    row.investigation_direction = [
        str(s.get("text", "")) for s in body.get("investigation_direction") or []
    ]
    summary = body.get("interpretation_summary") or {}
    row.summary = str(summary.get("text", "")) or None
