"""`trace incident create` and `trace incident list` on the configured database (SQLite
and PostgreSQL through DATABASE_URL), with clear refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trace_app.cli import app as cli


@pytest.fixture
def configured(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.delenv("TRACE_DEMO", raising=False)
    return db_url


def test_create_then_list(configured: str) -> None:
    runner = CliRunner()
    empty = runner.invoke(cli, ["incident", "list"])
    assert empty.exit_code == 0 and "No incidents" in empty.output
    made = runner.invoke(
        cli, ["incident", "create", "  Koshi   Flood 2026 ", "--description", "River flood"]
    )
    assert made.exit_code == 0, made.output
    assert "Created incident 'Koshi Flood 2026': inc_" in made.output
    listed = runner.invoke(cli, ["incident", "list"])
    assert listed.exit_code == 0
    [line] = listed.output.strip().splitlines()
    fields = line.split("\t")
    assert fields[0].startswith("inc_") and fields[1] == "Koshi Flood 2026"
    assert fields[2:] == ["0 reports", "0 people", "0 open alerts"]


@pytest.mark.parametrize("name", ["   ", "x" * 201, "bad\x07name"])
def test_bad_names_are_refused(configured: str, name: str) -> None:
    result = CliRunner().invoke(cli, ["incident", "create", name])
    assert result.exit_code == 2 and "error:" in result.output
    assert "No incidents" in CliRunner().invoke(cli, ["incident", "list"]).output


def test_same_name_in_another_case_is_refused(configured: str) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["incident", "create", "Quake"]).exit_code == 0
    again = runner.invoke(cli, ["incident", "create", "QUAKE"])
    assert again.exit_code == 2 and "already exists" in again.output
    assert len(runner.invoke(cli, ["incident", "list"]).output.strip().splitlines()) == 1


def test_a_name_differing_only_in_non_ascii_case_is_refused(database: Any) -> None:
    """SQLite's lower() folds only ASCII: the check is done on case-folded names in Python,
    so a second "È" is a clear refusal, not the unique index's error."""
    from trace_app.domain.audit import Actor
    from trace_app.domain.errors import InvalidInputError
    from trace_app.domain.incidents import create_incident

    with database.session() as session:
        create_incident(session, "Éboulement", actor=Actor.operator("t"))
    for again in ("Éboulement", "éboulement"):
        with pytest.raises(InvalidInputError, match="already exists"), database.session() as s:
            create_incident(s, again, actor=Actor.operator("t"))
