"""``viano interpret STORE CASE PACKAGE [--config FILE] [--attempt-id ID] [--resume] [--json]``.

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
import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import typer

from viano_bug_analysis.cli_output import emit, failures, identity

EXIT_CODES = {"COMPLETED": 0, "ERROR": 10, "RETRY_PENDING": 11, "DEFERRED": 12, "BLOCKED": 13}
EXAMPLES_PER_RULE = 3


def violation_lines(
    violations: Sequence[Mapping[str, str]], examples: int = EXAMPLES_PER_RULE
) -> list[str]:
    """Validation problems for people: one line per rule (most frequent first, then by
    name) with its count, then its first ``examples`` problems in answer order."""
    by_rule: dict[str, list[Mapping[str, str]]] = {}
    for violation in violations:
        by_rule.setdefault(violation["rule"], []).append(violation)
    lines: list[str] = []
    for rule, found in sorted(by_rule.items(), key=lambda item: (-len(item[1]), item[0])):
        lines.append(f"{rule}: {len(found)}")
        for violation in found[:examples]:
            lines.append(f"    at {violation['at'] or '/'}: {violation['message']}")
        if len(found) > examples:
            lines.append(f"    ... and {len(found) - examples} more")
    return lines


def interpret_command(
    store: Path,
    case_id: str,
    package_id: str,
    config: Path | None = typer.Option(
        None,
        "--config",
        help="Gateway configuration (TOML); default config/llm.local.toml when the current "
        "folder has one, else the embedded local model shipped with Viano.",
    ),
    attempt_id: str = typer.Option("default", "--attempt-id", help="Attempt identity."),
    resume: bool = typer.Option(
        False, "--resume", help="Explicitly resume after a BLOCKED attempt (new --attempt-id)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Interpret the built case of a package (Case Interpretation v1)."""
    from rich.console import Console

    from viano_bug_analysis.analysis.interpreter import CaseInterpreter, InterpretationResult
    from viano_bug_analysis.llm import LLMGateway
    from viano_bug_analysis.llm.config import resolve_config
    from viano_bug_analysis.llm.local_model import model_for
    from viano_bug_analysis.packages import PackageStore

    console = Console(stderr=True)
    with failures(as_json, identity(case_id, package_id)), contextlib.ExitStack() as stack:
        gateway_config = resolve_config(config)[0]
        package_store = PackageStore.open(store)
        with console.status("interpreting", spinner="dots") as status:
            # the embedded model on a port of its own when nothing answers at a loopback
            # URL (llm.local_model); if it cannot start, the refused connection is a
            # transient failure (RETRY_PENDING by the retry policy)
            endpoint = stack.enter_context(
                model_for(gateway_config, None, required=False, lazy=True)
            )
            gateway = LLMGateway(gateway_config, endpoints=endpoint.endpoints)

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
        if result.violations:
            rules = len({v["rule"] for v in result.violations})
            typer.echo(
                f"  rejected by validation: {len(result.violations)} problems, {rules} rules "
                "(all of them in the rejection report and in --json)"
            )
            for line in violation_lines(result.violations):
                typer.echo(f"  - {line}" if not line.startswith(" ") else f"  {line}")
        if result.error:
            typer.echo(f"  gateway: [{result.error.get('code')}] {result.error.get('message')}")

    emit(as_json, payload, human)
    raise typer.Exit(EXIT_CODES[result.status.value])
