"""``viano interpret STORE CASE PACKAGE --config FILE [--attempt-id ID] [--resume] [--json]``.

Registered in ``viano_bug_analysis.cli``. With ``--json`` it prints one object: the
outcome (``status``), identities, ``package_generation``, ``analysis_revision``,
``interpretation_index``, ``pointers`` and, where they apply, ``due_at``,
``round_ref``, ``rejection_ref``, ``violations`` and ``error``.

Exit codes (documented in docs/case-interpretation.md):
0 COMPLETED, 1 a storage/input/configuration problem or LockBusy (``error.code``),
10 ERROR (answer rejected or refused), 11 RETRY_PENDING, 12 DEFERRED, 13 BLOCKED.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

EXIT_CODES = {"COMPLETED": 0, "ERROR": 10, "RETRY_PENDING": 11, "DEFERRED": 12, "BLOCKED": 13}


def interpret_command(
    store: Path,
    case_id: str,
    package_id: str,
    config: Path = typer.Option(..., "--config", help="Gateway configuration (TOML)."),
    attempt_id: str = typer.Option("default", "--attempt-id", help="Attempt identity."),
    resume: bool = typer.Option(
        False, "--resume", help="Explicitly resume after a BLOCKED attempt (new --attempt-id)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Interpret the built case of a package (Case Interpretation v1)."""
    from rich.console import Console

    from viano_bug_analysis.analysis.interpreter import CaseInterpreter, InterpretationResult
    from viano_bug_analysis.cli import _identity, emit, failures
    from viano_bug_analysis.llm import GatewayConfig, LLMGateway
    from viano_bug_analysis.packages import PackageStore

    console = Console(stderr=True)
    with failures(as_json, _identity(case_id, package_id)):
        gateway = LLMGateway(GatewayConfig.load(config))
        package_store = PackageStore.open(store)
        with console.status("interpreting", spinner="dots") as status:

            def progress(message: str) -> None:
                if not as_json:
                    status.update(message)

            interpreter = CaseInterpreter(package_store, gateway, progress=progress)

            async def run() -> InterpretationResult:
                try:
                    return await interpreter.interpret(
                        case_id, package_id, attempt_id=attempt_id, resume=resume
                    )
                finally:
                    await gateway.aclose()

            result = asyncio.run(run())
    payload = result.to_json()

    def human() -> None:
        typer.echo(
            f"{case_id}/{package_id}: {result.status.value} (generation "
            f"{result.package_generation}, revision {result.analysis_revision}, "
            f"interpretation {result.interpretation_index}, attempt {result.attempt_id})"
        )
        if result.due_at:
            typer.echo(f"  next attempt due at {result.due_at}")
        for name, member in sorted(result.pointers.items()):
            typer.echo(f"  {name}: {member}")
        if result.rejection_ref:
            typer.echo(f"  rejection report: {result.rejection_ref}")
        for violation in result.violations[:20]:
            where = violation["at"] or "/"
            typer.echo(f"  - {violation['rule']} at {where}: {violation['message']}")
        if result.error:
            typer.echo(f"  gateway: [{result.error.get('code')}] {result.error.get('message')}")

    emit(as_json, payload, human)
    raise typer.Exit(EXIT_CODES[result.status.value])
