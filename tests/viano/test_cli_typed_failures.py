"""Every failure of `viano` is a typed answer (issue 39, items 1 and 2; ADR 0101).

- ``/dev/zero`` and a FIFO that never ends, as inputs of ``viano import`` and ``viano
  add``, in a child process under a memory limit: a typed code, memory bounded.
- An unexpected exception prints ``internal.unexpected`` under ``--json`` (one JSON
  object) and one sentence without it, with the traceback in the log file it names.
- Every error code the source raises is documented in docs/viano-errors.md.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from viano_bug_analysis import cli
from viano_bug_analysis.cli import app

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()

# the child runs `viano` with its address space capped: an unbounded read of /dev/zero
# would fail with MemoryError long before it could fill the machine
_LIMITED = (
    "import resource, sys; "
    "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)); "
    "from viano_bug_analysis.cli import app; sys.argv[0] = 'viano'; app()"
)


def _viano_limited(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _LIMITED, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "VIANO_LOG_DIR": str(Path(args[-1]).parent)},
        check=False,
    )


def _one_error(result: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    payload = json.loads(result.stdout)
    assert payload["status"] == "error"
    error = payload["error"]
    assert isinstance(error, dict)
    return error


def test_dev_zero_as_an_import_input_is_counted_and_refused(tmp_path: Path) -> None:
    out = tmp_path / "x.zip"
    error = _one_error(_viano_limited("import", "intake", "/dev/zero", "-o", str(out), "--json"))
    assert error["code"] == "intake.too_large"
    assert not out.exists()


def test_a_fifo_that_never_ends_is_counted_and_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "endless.json"
    os.mkfifo(fifo)
    stop = threading.Event()

    def feed() -> None:
        try:
            with open(fifo, "wb") as w:
                chunk = b" " * (1 << 20)
                while not stop.is_set():
                    w.write(chunk)
        except (BrokenPipeError, OSError):
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        out = tmp_path / "x.zip"
        result = _viano_limited("import", "markdown", str(fifo), "-o", str(out), "--json")
    finally:
        stop.set()
    error = _one_error(result)
    assert error["code"] == "intake.too_large"
    assert not out.exists()


def test_dev_zero_and_a_fifo_are_no_package(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert runner.invoke(app, ["store", "init", str(store)]).exit_code == 0
    fifo = tmp_path / "pipe.zip"
    os.mkfifo(fifo)  # no writer: opening it must not wait for one
    for source in ("/dev/zero", str(fifo)):
        error = _one_error(_viano_limited("add", str(store), source, "--json", timeout=30))
        assert error["code"] == "package.not_regular_file"


def _boom(*args: object, **kwargs: object) -> None:
    raise RuntimeError("a bug nobody expected")


def test_an_unexpected_error_is_internal_unexpected_with_a_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    runner.invoke(app, ["store", "init", str(store)])
    monkeypatch.setenv("VIANO_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setattr("viano_bug_analysis.packages.PackageStore.open", _boom)
    result = runner.invoke(app, ["show", str(store), "c", "p", "--json"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["error"]["code"] == "internal.unexpected"
    log = Path(payload["error"]["details"]["log"])
    assert log.parent == tmp_path / "logs" and str(log) in payload["error"]["message"]
    text = log.read_text(encoding="utf-8")
    assert "Traceback" in text and "a bug nobody expected" in text

    human = runner.invoke(app, ["show", str(store), "c", "p"])
    assert human.exit_code == 1
    assert "Traceback" not in human.output
    assert "internal.unexpected" in human.output and len(human.output.strip().splitlines()) <= 3


def test_an_error_outside_a_command_block_is_typed_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The app itself turns what escapes a command (here: its output) into the answer."""
    store = tmp_path / "store"
    runner.invoke(app, ["store", "init", str(store)])
    monkeypatch.setenv("VIANO_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setattr(cli, "emit", _boom)
    args = ["store", "init", str(store), "--json"]
    monkeypatch.setattr(sys, "argv", ["viano", *args])
    with pytest.raises(SystemExit) as done:
        app(args)
    assert done.value.code == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["error"]["code"] == "internal.unexpected"


_CODE = re.compile(r"""code(?:=| = )["']([a-z_]+\.[a-z_.]+)["']""")
_FAMILIES = (
    "package.",
    "store.",
    "intake.",
    "case.",
    "llm.",
    "eval.",
    "limit.",
    "demo.",
    "triage.",
)


def test_every_error_code_is_documented() -> None:
    source = REPO / "src" / "viano_bug_analysis"
    codes = {
        m.group(1)
        for path in source.rglob("*.py")
        for m in _CODE.finditer(path.read_text(encoding="utf-8"))
        if m.group(1).startswith(_FAMILIES)
    }
    interp = {
        f"interpretation.{m.group(1)}"
        for path in (source / "analysis").glob("*.py")
        for m in re.finditer(r'_fail\(\s*"([a-z_]+)"', path.read_text(encoding="utf-8"))
    }
    doc = (REPO / "docs" / "viano-errors.md").read_text(encoding="utf-8")
    missing = sorted(c for c in codes | interp if f"`{c}`" not in doc)
    assert not missing, f"undocumented in docs/viano-errors.md: {missing}"
    for code in ("internal.unexpected", "io.error", "cancelled"):
        assert f"`{code}`" in doc
