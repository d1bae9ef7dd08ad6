"""``trace --help`` stays fast: the ``trace`` command and its subcommand table import no
database, web or model library (those load inside the commands that need them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("sqlalchemy", "fastapi", "starlette", "uvicorn", "httpx", "pydantic", "modelgate")
PROBE = f"""
import json, sys
import trace_app.cli
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))))
"""


def test_the_trace_command_imports_nothing_heavy() -> None:
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, env=env
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_every_subcommand_is_registered() -> None:
    from typer.main import get_command

    from trace_app.cli import app

    names = set(get_command(app).commands)  # type: ignore[attr-defined]
    assert {"serve", "reset", "incident", "investigate", "ledger", "record-demo"} <= names
    assert {"demo", "eval"} <= names
