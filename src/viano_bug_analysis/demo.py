"""``viano demo``: one bug report, imported, built and interpreted end to end.

By default the report is the one shipped in the package
(``demo_reports/timezone-reminder.md``, written for the project in its own words), so the
demo needs nothing beside it: it runs in an empty folder. With ``--real``, or when
``REAL_DATA_DIR`` is set, it is a real Bugzilla bug from the real public data
(``REAL_DATA_DIR``, else ``../shared/data`` next to the current folder;
``bug_reports/bugbug/bugs.json``, ``--bug-id``). Everything is written under a new
folder ``.viano-local/demo/<UTC time>/`` (input, package, store), so a rerun never
touches an earlier one. The model is the gateway configuration's (``--config``, else
``config/llm.local.toml`` of the current folder, else the embedded configuration shipped
in the package); when its first provider is a loopback URL where nothing answers, the
embedded local model is started on a free port for the duration of the command
(``llm.local_model``).

Every interpretation outcome is shown as it is: an answer the validation rejected
(ERROR, with its violations) is a legitimate result, not a crash.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import typer

from viano_bug_analysis.demo_data import DemoError, real_data_dir
from viano_bug_analysis.errors import VianoError

__all__ = ["DemoError", "extract_bug", "real_data_dir", "run_demo"]

DEFAULT_BUG_FILE = Path("bug_reports") / "bugbug" / "bugs.json"
DEFAULT_BUG_ID = 1389136  # a short Firefox display bug with a few comments
SHIPPED_REPORT = "demo_reports/timezone-reminder.md"
SHIPPED_CASE_ID = "demo-timezone-reminder"


def extract_bug(source: Path, bug_id: int, target: Path) -> Path:
    """Copy one Bugzilla bug (one JSON line of ``source``) to ``target``, byte for byte."""
    with source.open("rb") as lines:
        for line in lines:
            if not line.strip():
                continue
            if json.loads(line).get("id") == bug_id:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(line)
                return target
    raise DemoError(f"bug {bug_id} is not in {source}")


def shipped_report(target: Path) -> Path:
    """Write the report shipped in the package to ``target``."""
    text = resources.files("viano_bug_analysis").joinpath(SHIPPED_REPORT).read_bytes()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text)
    return target


def wants_real(real: bool) -> bool:
    """A real report is used when asked for (``--real``) or when ``REAL_DATA_DIR`` names
    the data folder."""
    return real or bool(os.environ.get("REAL_DATA_DIR", "").strip())


Echo = Callable[[str], None]


def run_demo(
    config_path: Path | None,
    bug_id: int,
    workdir: Path | None,
    echo: Echo,
    *,
    real: bool = False,
) -> int:
    """Import, build and interpret one report; print each step. Returns an exit code."""
    from viano_bug_analysis.analysis.command import EXIT_CODES, violation_lines
    from viano_bug_analysis.analysis.interpreter import CaseInterpreter
    from viano_bug_analysis.case import CaseBuilder
    from viano_bug_analysis.intake import import_file
    from viano_bug_analysis.llm import LLMGateway
    from viano_bug_analysis.llm.config import resolve_config
    from viano_bug_analysis.llm.local_model import model_for
    from viano_bug_analysis.packages import PackageStore

    config, config_source = resolve_config(config_path)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    folder = workdir if workdir is not None else Path(".viano-local") / "demo" / stamp
    folder.mkdir(parents=True, exist_ok=True)
    echo(f"0. configuration: {config_source}")
    if wants_real(real):
        source = real_data_dir() / DEFAULT_BUG_FILE
        raw = extract_bug(source, bug_id, folder / "input" / f"bug-{bug_id}.json")
        echo(f"1. real report: Bugzilla bug {bug_id} from {source} -> {raw}")
        imported = import_file("bugzilla", raw, folder / "package.zip")[0]
    else:
        raw = shipped_report(folder / "input" / "report.md")
        echo(f"1. report shipped with Viano (written for the demo) -> {raw}")
        imported = import_file("markdown", raw, folder / "package.zip", case_id=SHIPPED_CASE_ID)[0]
    echo(f"2. imported: case {imported.case_id}, package {imported.package_id}")
    store = PackageStore.init(folder / "store")
    generation, _status = store.add(folder / "package.zip")
    case_id, package_id = generation.case_id, generation.package_id
    built = CaseBuilder(store).build(case_id, package_id)
    counts = ", ".join(f"{k}={v}" for k, v in built.record_counts.items() if v)
    echo(f"3. built: analysis revision {built.analysis_revision}; records {counts}")
    with model_for(config, folder) as endpoint:
        echo(f"4. model: {endpoint.where}")
        echo("   interpreting (a small CPU model can take a few minutes)...")
        gateway = LLMGateway(config, endpoints=endpoint.endpoints)

        async def interpret() -> object:
            try:
                return await CaseInterpreter(store, gateway).interpret(case_id, package_id)
            finally:
                await gateway.aclose()

        result = asyncio.run(interpret())
    from viano_bug_analysis.analysis.interpreter import InterpretationResult

    assert isinstance(result, InterpretationResult)
    status = result.status.value
    echo(f"5. outcome: {status} (package generation {result.package_generation})")
    if status == "COMPLETED":
        summary_ref = result.pointers.get("case_interpretation_summary")
        if summary_ref:
            with store.current(case_id, package_id).open() as reader:
                echo("")
                echo(reader.read(summary_ref).decode("utf-8"))
    elif result.violations:
        rules = len({v["rule"] for v in result.violations})
        echo(
            f"   the answer was rejected by validation ({len(result.violations)} problems, "
            f"{rules} rules; report {result.rejection_ref}); nothing was published:"
        )
        for line in violation_lines(result.violations):
            echo(f"   - {line}" if not line.startswith(" ") else f"   {line}")
    if result.error:
        echo(f"   gateway: [{result.error.get('code')}] {result.error.get('message')}")
    echo(f"\nstore: {folder / 'store'}  (viano show {folder / 'store'} {case_id} {package_id})")
    if status == "ERROR" and result.violations:
        return 0  # a rejected interpretation is a legitimate outcome of the demo
    return EXIT_CODES[status]


_CONFIG_HELP = (
    "Gateway configuration (TOML); default config/llm.local.toml when the current folder "
    "has one, else the embedded local model shipped with Viano."
)


def demo_command(
    config: Path | None = typer.Option(None, "--config", help=_CONFIG_HELP),
    real: bool = typer.Option(
        False, "--real", help="A real Bugzilla bug from the real data folder (REAL_DATA_DIR)."
    ),
    bug_id: int = typer.Option(
        DEFAULT_BUG_ID, "--bug-id", help="Bugzilla bug id in bugs.json (with --real)."
    ),
    workdir: Path | None = typer.Option(None, "--workdir", help="Folder for this run."),
) -> None:
    """Import, build and interpret one bug report with the configured (local) model."""
    try:
        code = run_demo(config, bug_id, workdir, typer.echo, real=real)
    except VianoError as exc:
        typer.echo(f"error {exc}", err=True)
        raise typer.Exit(1) from exc
    raise typer.Exit(code)


def eval_command(
    cases: Path = typer.Argument(..., help="Case folder with cases.jsonl (docs/evaluation.md)."),
    config: Path | None = typer.Option(None, "--config", help=_CONFIG_HELP),
    out: Path | None = typer.Option(None, "--out", help="Also write the figures as JSON here."),
) -> None:
    """Interpret a labelled set of bug reports with the configured model and count."""
    from viano_bug_analysis.cli_output import progress_bar
    from viano_bug_analysis.evaluation import (
        VianoOutcome,
        load_cases,
        render_text,
        run_evaluation,
        write_json,
    )
    from viano_bug_analysis.llm import LLMGateway
    from viano_bug_analysis.llm.config import resolve_config
    from viano_bug_analysis.llm.local_model import model_for

    done: list[VianoOutcome] = []
    bar: list[Any] = [None]  # the progress bar's update, while it shows

    def show(o: VianoOutcome) -> None:
        done.append(o)
        typer.echo(
            f"  {o.id}: {o.status}, label {'GAP' if o.expected_gap else 'NO_GAP'}, "
            f"answer {o.label}, {sum(o.violations.values())} violations, {o.latency_s:.1f} s"
        )
        if bar[0] is not None:
            bar[0]("evaluate", len(done), len(loaded))

    try:
        loaded = load_cases(cases)
        gateway_config, _source = resolve_config(config)
        with tempfile.TemporaryDirectory(prefix="viano-eval-log-") as logs:
            with model_for(gateway_config, Path(logs)) as endpoint:
                typer.echo(f"Evaluating {len(loaded)} cases; {endpoint.where}")

                def gateway(cfg: Any) -> Any:
                    return LLMGateway(cfg, endpoints=endpoint.endpoints)

                with progress_bar(True) as update:  # the same bar as `viano triage`, with ETA
                    bar[0] = update
                    if update is not None:
                        update("evaluate", 0, len(loaded))
                    report = run_evaluation(
                        loaded, gateway_config, progress=show, gateway_factory=gateway
                    )
                    bar[0] = None
    except VianoError as exc:
        typer.echo(f"error {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo("")
    typer.echo(render_text(report))
    if out is not None:
        write_json(report, out)
        typer.echo(f"\nwrote {out}")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)
    app.command("eval")(eval_command)
