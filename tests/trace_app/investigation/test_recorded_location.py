"""Where the recorded runs live: ``demo/recorded_investigations.json`` at the checkout's
root, found from the package's location (any working folder), overridable by
``TRACE_RECORDED_INVESTIGATIONS``; an installed package without the file replays nothing
and says so."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from trace_app.cli import app as trace_cli
from trace_app.investigation.model_settings import NEMOTRON_MODEL, ModelSettings
from trace_app.investigation.recorded import (
    PATH_ENV,
    checkout_root,
    default_output,
    default_path,
    load_recorded,
    recreate_replayed_runs,
)
from trace_app.settings import TraceSettings
from trace_app.store.db import Database, make_engine
from trace_app.store.models import InvestigationRun

from .conftest import saved_runs

REPO_ROOT = Path(__file__).resolve().parents[3]
SHIPPED = REPO_ROOT / "demo" / "recorded_investigations.json"


def test_the_recordings_live_at_the_checkouts_demo_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(PATH_ENV)
    monkeypatch.chdir(tmp_path)  # the working folder plays no part
    assert checkout_root() == REPO_ROOT
    assert default_path() == SHIPPED == default_output()
    assert SHIPPED.is_file()
    assert not (REPO_ROOT / "src" / "trace_app" / "demo" / "recorded_investigations.json").exists()
    assert len(load_recorded()) == 3


def test_the_environment_variable_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    chosen = tmp_path / "elsewhere.json"
    monkeypatch.setenv(PATH_ENV, str(chosen))
    override = TraceSettings.from_env().recorded_investigations
    assert override == chosen
    assert default_path(override) == chosen == default_output(override)


def test_an_installed_package_without_the_file_replays_nothing_and_logs_it(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    db: Database,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.delenv(PATH_ENV)
    installed = tmp_path / "site-packages" / "trace_app"
    installed.mkdir(parents=True)
    assert checkout_root(installed) is None
    assert (
        default_path(package_dir=installed) is None
        and default_output(package_dir=installed) is None
    )

    monkeypatch.setattr(
        "trace_app.investigation.recorded.default_path", lambda: default_path(package_dir=installed)
    )
    caplog.set_level(logging.WARNING, logger="trace_app.investigation.recorded")
    with db.session() as session:
        assert recreate_replayed_runs(session) == 0
    assert "no REPLAYED runs" in caplog.text and PATH_ENV in caplog.text

    # a copy a build step shipped inside the package is read
    (installed / "demo").mkdir()
    (installed / "demo" / "recorded_investigations.json").write_bytes(SHIPPED.read_bytes())
    assert (
        default_path(package_dir=installed) == installed / "demo" / "recorded_investigations.json"
    )
    assert default_output(package_dir=installed) is None  # record-demo never writes into a package


def test_trace_reset_from_any_folder_replays_the_shipped_runs_under_the_default_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(PATH_ENV)
    monkeypatch.delenv("TRACE_MODEL", raising=False)
    assert ModelSettings.from_env().model == NEMOTRON_MODEL
    elsewhere = tmp_path / "some" / "other" / "folder"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "home"))

    shown = CliRunner().invoke(trace_cli, ["reset"])

    assert shown.exit_code == 0, shown.output
    db = Database(make_engine(f"sqlite:///{tmp_path / 'home' / 'trace.db'}"))
    try:
        runs = saved_runs(db)
        assert sorted(r.mode for r in runs) == ["REPLAYED"] * 3
        recorded_models = {r.model for r in load_recorded(SHIPPED)}
        assert {r.model for r in runs} == recorded_models
        with db.session() as session:
            fingerprints = set(session.scalars(select(InvestigationRun.fingerprint)))
        assert fingerprints == {r.fingerprint for r in load_recorded(SHIPPED)}
    finally:
        db.dispose()


def test_record_demo_help_names_the_file_it_writes() -> None:
    shown = CliRunner().invoke(trace_cli, ["record-demo", "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0
    text = " ".join(shown.output.split())
    assert "demo/recorded_investigations.json" in text and PATH_ENV in text


def test_record_demo_outside_a_checkout_asks_for_an_output(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(PATH_ENV)
    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr("trace_app.investigation.recorded.checkout_root", lambda *a: None)
    shown = CliRunner().invoke(trace_cli, ["record-demo"])
    assert shown.exit_code == 2
    assert "--output" in shown.output
