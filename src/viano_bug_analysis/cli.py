"""The `viano` command.

Every command takes ``--json``: it then prints exactly one JSON object on stdout (with at
least ``case_id``, ``package_id``, ``package_generation``, ``analysis_revision`` and
``status``; on failure ``status: "error"`` and ``error.code``) and exits 1 on failure.
Without ``--json`` the output is for people and long work shows a progress bar.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from viano_bug_analysis import demo
from viano_bug_analysis.analysis.command import interpret_command
from viano_bug_analysis.cli_output import (
    JsonOpt,
    TypedTyper,
    emit,
    failures,
    identity,
    progress_bar,
)
from viano_bug_analysis.intake.formats import FORMATS, IntakeFormat
from viano_bug_analysis.triage.command import triage_command

app = TypedTyper(help="Viano bug analysis.", no_args_is_help=True)
store_app = typer.Typer(help="Package stores.", no_args_is_help=True)
import_app = typer.Typer(help="Write supplied packages from raw bug reports.", no_args_is_help=True)
app.add_typer(store_app, name="store")
app.add_typer(import_app, name="import")


@app.callback()
def main() -> None:
    """Viano bug analysis."""


# -- store ------------------------------------------------------------------------------


@store_app.command("init")
def store_init(directory: Path, as_json: bool = JsonOpt) -> None:
    """Create a package store in DIRECTORY."""
    from viano_bug_analysis.packages import PackageStore

    with failures(as_json, identity()):
        PackageStore.init(directory)
    emit(
        as_json,
        {**identity(), "status": "initialized", "store": str(directory)},
        lambda: typer.echo(f"store ready: {directory}"),
    )


# -- import -----------------------------------------------------------------------------


def _import(
    fmt: str, source: Path, out: Path, case_id: str | None, package_id: str, as_json: bool
) -> None:
    from viano_bug_analysis.intake import import_file

    with failures(as_json, identity(case_id, package_id)):
        with progress_bar(not as_json) as update:
            results = import_file(
                fmt, source, out, case_id=case_id, package_id=package_id, progress=update
            )
    first = results[0]
    payload: dict[str, Any] = {
        "case_id": first.case_id if len(results) == 1 else None,
        "package_id": package_id,
        "package_generation": 1,
        "analysis_revision": 0,
        "status": "imported",
        "packages": [r.to_json() for r in results],
    }

    def human() -> None:
        for r in results:
            typer.echo(f"{r.path}  case={r.case_id} package={r.package_id}")

    emit(as_json, payload, human)


_OUT = typer.Option(
    ..., "-o", "--output", help="Package file, or a directory (required for JSON Lines input)."
)
_CASE = typer.Option(None, "--case-id", help="Case id (default: derived from the report).")
_PKG = typer.Option("supplied", "--package-id", help="Package id.")


def _import_command(fmt: IntakeFormat) -> Any:
    def command(
        source: Path,
        out: Path = _OUT,
        case_id: str | None = _CASE,
        package_id: str = _PKG,
        as_json: bool = JsonOpt,
    ) -> None:
        _import(fmt.name, source, out, case_id, package_id, as_json)

    command.__doc__ = fmt.summary
    command.__name__ = f"import_{fmt.command.replace('-', '_')}"
    return command


for _format in FORMATS.values():
    import_app.command(_format.command)(_import_command(_format))


# -- store operations -------------------------------------------------------------------


@app.command("add")
def add(
    store: Path,
    package: Path,
    as_json: bool = JsonOpt,
    replace_inputs: bool = typer.Option(
        False,
        "--replace-inputs",
        help="The package exists: take this file's original/ as new raw inputs.",
    ),
) -> None:
    """Add a supplied package file to STORE (validated fully first)."""
    from viano_bug_analysis.packages import PackageStore

    with failures(as_json, identity()):
        with progress_bar(not as_json) as update:
            gen, status = PackageStore.open(store).add(
                package, replace_inputs=replace_inputs, progress=update
            )
    emit(
        as_json,
        {**gen.to_json(), "status": status},
        lambda: typer.echo(f"{status}: {gen.case_id}/{gen.package_id} generation {gen.generation}"),
    )


@app.command("build")
def build(store: Path, case_id: str, package_id: str, as_json: bool = JsonOpt) -> None:
    """Build the canonical case and confirm a new analysis revision (if inputs changed)."""
    from viano_bug_analysis.case import CaseBuilder
    from viano_bug_analysis.packages import PackageStore

    with failures(as_json, identity(case_id, package_id)):
        s = PackageStore.open(store)
        with progress_bar(not as_json) as update:
            result = CaseBuilder(s).build(case_id, package_id, progress=update)

    def human() -> None:
        typer.echo(
            f"{result.status}: {case_id}/{package_id} revision "
            f"{result.analysis_revision} generation {result.package_generation}"
        )
        typer.echo(
            "records: " + ", ".join(f"{k}={v}" for k, v in result.record_counts.items() if v)
        )

    emit(as_json, result.to_json(), human)


@app.command("show")
def show(
    store: Path,
    case_id: str,
    package_id: str,
    as_json: bool = JsonOpt,
    records: bool = typer.Option(False, "--records", help="List the case records."),
) -> None:
    """Show a package's current state, its case and (if any) its interpretation summary."""
    from viano_bug_analysis.case import load_canonical_case
    from viano_bug_analysis.packages import POINTER_CANONICAL_CASE, PackageStore

    summary_pointer = "case_interpretation_summary"
    with failures(as_json, identity(case_id, package_id)):
        gen = PackageStore.open(store).current(case_id, package_id)
        with gen.open() as reader:
            manifest = reader.require_manifest()
            case = None
            if POINTER_CANONICAL_CASE in manifest.pointers:
                case = load_canonical_case(reader.read(manifest.pointers[POINTER_CANONICAL_CASE]))
            summary = None
            if summary_pointer in manifest.pointers:
                summary = reader.read(manifest.pointers[summary_pointer]).decode("utf-8")
    payload: dict[str, Any] = {
        **gen.to_json(),
        "status": manifest.phase.lower(),
        "phase": manifest.phase,
        "checkpoints": [c.to_json() for c in manifest.checkpoints],
    }
    if case is not None:
        payload["case"] = {
            "record_counts": case["record_counts"],
            "completeness": case["completeness"],
            "raw_input_fingerprint": case["raw_input_fingerprint"],
        }
        if records:
            payload["case"]["records"] = case["records"]
    if summary is not None:
        payload["case_interpretation_summary"] = summary

    def human() -> None:
        typer.echo(
            f"{case_id}/{package_id}: generation {gen.generation}, analysis revision "
            f"{gen.analysis_revision}, phase {manifest.phase}"
        )
        for name, member in sorted(manifest.pointers.items()):
            typer.echo(f"  {name}: {member}")
        if case is not None:
            typer.echo(
                "records: " + ", ".join(f"{k}={v}" for k, v in case["record_counts"].items() if v)
            )
            typer.echo(f"expected behaviour: {case['completeness']['expected_behavior']}")
            if records:
                for rec in case["records"]:
                    text = str(rec.get("text") or rec.get("description") or rec.get("uri") or "")
                    typer.echo(f"{rec['id']:>7} {rec['kind']:<15} {text[:100]!r}")
        if summary is not None:
            typer.echo("")
            typer.echo(summary)

    emit(as_json, payload, human)


@app.command("export")
def export(
    store: Path,
    case_id: str,
    package_id: str,
    out: Path,
    generation: int | None = typer.Option(None, "--generation"),
    as_json: bool = JsonOpt,
) -> None:
    """Copy the current (or a given) generation of a package to OUT."""
    from viano_bug_analysis.packages import PackageStore

    with failures(as_json, identity(case_id, package_id)):
        gen = PackageStore.open(store).export(case_id, package_id, out, generation)
    emit(
        as_json,
        {**gen.to_json(), "status": "exported", "path": str(out)},
        lambda: typer.echo(f"exported generation {gen.generation} to {out}"),
    )


app.command("interpret")(interpret_command)
app.command("triage")(triage_command)
demo.register(app)
