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


def test_recorded_runs_and_request_cap_are_trace_settings(tmp_path: Path) -> None:
    s = TraceSettings.from_env(env={}, cwd=tmp_path)
    assert s.recorded_investigations is None and s.request_cap == 200
    s = TraceSettings.from_env(
        env={"TRACE_RECORDED_INVESTIGATIONS": "~/runs.json", "TRACE_MODEL_REQUEST_CAP": "7"},
        cwd=tmp_path,
    )
    assert s.recorded_investigations == Path("~/runs.json").expanduser()
    assert s.request_cap == 7


@pytest.mark.parametrize(("raw", "cap"), [("0", 1), ("5000", 1000), ("x", 200), (" ", 200)])
def test_request_cap_is_clamped(raw: str, cap: int) -> None:
    assert TraceSettings.from_env(env={"TRACE_MODEL_REQUEST_CAP": raw}).request_cap == cap


def test_model_settings_own_the_audit_log_and_say_whether_a_model_is_named() -> None:
    from trace_app.investigation.model_settings import ModelSettings

    plain = ModelSettings.from_env({})
    assert plain.audit_log is None and not plain.configured
    named = ModelSettings.from_env({"TRACE_MODEL_AUDIT_LOG": "/tmp/a.jsonl", "TRACE_MODEL": "m"})
    assert named.audit_log == Path("/tmp/a.jsonl") and named.configured


def test_only_the_settings_classes_read_the_environment() -> None:
    """Item 7 of issue 17: every variable is read by TraceSettings or ModelSettings."""
    package = Path(__file__).resolve().parents[2] / "src" / "trace_app"
    readers = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "os.environ" in path.read_text(encoding="utf-8")
        or "getenv" in path.read_text(encoding="utf-8")
    )
    assert readers == ["investigation/model_settings.py", "settings.py"]
