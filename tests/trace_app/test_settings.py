from __future__ import annotations

from pathlib import Path

import pytest

from trace_app.settings import SettingsError, TraceSettings, normalize_database_url


def test_defaults_live_under_cwd(tmp_path: Path) -> None:
    s = TraceSettings.from_env(env={}, cwd=tmp_path)
    assert s.home == tmp_path / ".trace-local"
    assert s.database_url == f"sqlite:///{tmp_path / '.trace-local' / 'trace.db'}"
    assert s.ledger_path == tmp_path / ".trace-local" / "model-usage.json"
    assert not s.demo  # a deployment unless told otherwise
    assert not s.home.exists()  # nothing is created by reading settings
    s.ensure_home()
    assert s.home.is_dir()


def test_environment_overrides(tmp_path: Path) -> None:
    s = TraceSettings.from_env(
        env={
            "TRACE_HOME": "data",
            "DATABASE_URL": "postgresql://u@h/db",
            "TRACE_MAX_BODY_BYTES": "4096",
            "TRACE_DEMO": "1",
        },
        cwd=tmp_path,
    )
    assert s.home == tmp_path / "data"
    assert s.database_url == "postgresql+psycopg://u@h/db"
    assert s.max_body_bytes == 4096 and s.demo


@pytest.mark.parametrize("value", ["lots", "12"])
def test_bad_body_limit(value: str) -> None:
    with pytest.raises(SettingsError):
        TraceSettings.from_env(env={"TRACE_MAX_BODY_BYTES": value})


def test_normalize() -> None:
    assert normalize_database_url("postgres://x/y") == "postgresql+psycopg://x/y"
    assert normalize_database_url("sqlite:///a.db") == "sqlite:///a.db"
