"""Crash injection, repair on open, and operation locks across processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from viano_helpers import intake_package, members

from viano_bug_analysis.case import CaseBuilder
from viano_bug_analysis.errors import LockBusy
from viano_bug_analysis.packages import CRASH_ENV, PUBLISH_STEPS, PackageReader, PackageStore

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _child(code: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, "PYTHONPATH": SRC, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


BUILD = """
from viano_bug_analysis.packages import PackageStore
from viano_bug_analysis.case import CaseBuilder
store = PackageStore.open({root!r})
print(CaseBuilder(store).build("demo-case", "supplied").status, flush=True)
"""


def _assert_consistent(store: PackageStore, original: dict[str, bytes]) -> int:
    current = store.current("demo-case", "supplied")
    assert current.generation == store.generations("demo-case", "supplied")[-1]
    got = members(current.path)
    for name, data in original.items():
        if name.startswith("original/"):
            assert got[name] == data
    folder = store.package_dir("demo-case", "supplied")
    assert not [p for p in folder.iterdir() if p.name.startswith(".tmp-")]
    return current.generation


@pytest.mark.parametrize("step", PUBLISH_STEPS)
@pytest.mark.parametrize("how", ["exit", "sigkill"])
def test_crash_at_each_publication_step(tmp_path: Path, step: str, how: str) -> None:
    store = PackageStore.init(tmp_path / "s")
    pkg = intake_package(tmp_path / "in.zip")
    store.add(pkg)
    original = members(pkg)
    if how == "exit":
        child = _child(BUILD.format(root=str(store.root)), {CRASH_ENV: step})
    else:  # a hook that SIGKILLs its own process at the step
        child = _child(
            f"""
            import os, signal
            from viano_bug_analysis.packages import PackageStore
            from viano_bug_analysis.case import CaseBuilder
            def hook(s):
                if s == {step!r}:
                    os.kill(os.getpid(), signal.SIGKILL)
            store = PackageStore.open({str(store.root)!r}, crash_hook=hook)
            CaseBuilder(store).build("demo-case", "supplied")
            """
        )
    _out, err = child.communicate(timeout=120)
    assert child.returncode == (86 if how == "exit" else -signal.SIGKILL), err
    reopened = PackageStore.open(store.root)
    generation = _assert_consistent(reopened, original)
    # before the link the old generation stays current; after it, the new one
    expected = 1 if step in ("temp_written", "temp_fsynced") else 2
    assert generation == expected
    # nothing lost: building again gives a built case, and a lock is free again
    result = CaseBuilder(reopened).build("demo-case", "supplied")
    assert result.status == ("built" if expected == 1 else "unchanged")
    assert result.analysis_revision == 1
    with PackageReader(reopened.current("demo-case", "supplied").path) as r:
        assert "analysis/revisions/0001/canonical_case.json" in r


def test_repair_quarantines_a_torn_generation_file(tmp_path: Path) -> None:
    store = PackageStore.init(tmp_path / "s")
    store.add(intake_package(tmp_path / "in.zip"))
    folder = store.package_dir("demo-case", "supplied")
    (folder / "gen-000002.zip").write_bytes(b"PK\x03\x04 torn")
    (folder / ".tmp-abc.zip").write_bytes(b"partial")
    reopened = PackageStore.open(store.root)
    assert reopened.current("demo-case", "supplied").generation == 1
    assert not (folder / ".tmp-abc.zip").exists()
    assert list((store.root / "quarantine").iterdir())


def test_index_lost_is_rebuilt_from_files(tmp_path: Path) -> None:
    store = PackageStore.init(tmp_path / "s")
    store.add(intake_package(tmp_path / "in.zip"))
    CaseBuilder(store).build("demo-case", "supplied")
    (store.root / "index.sqlite").unlink()
    reopened = PackageStore.open(store.root)
    assert reopened.current("demo-case", "supplied").generation == 2
    assert reopened.list_cases() == ["demo-case"]


def test_two_processes_building_at_once_one_gets_lock_busy(tmp_path: Path) -> None:
    store = PackageStore.init(tmp_path / "s")
    store.add(intake_package(tmp_path / "in.zip"))
    flag = tmp_path / "in-publish"
    slow = _child(
        f"""
        import time, pathlib
        from viano_bug_analysis.packages import PackageStore
        from viano_bug_analysis.case import CaseBuilder
        def hook(step):
            if step == "temp_written":
                pathlib.Path({str(flag)!r}).touch()
                time.sleep(3)
        store = PackageStore.open({str(store.root)!r}, crash_hook=hook)
        print(CaseBuilder(store).build("demo-case", "supplied").status, flush=True)
        """
    )
    deadline = time.monotonic() + 60
    while not flag.exists():
        assert slow.poll() is None, slow.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    other = _child(
        f"""
        from viano_bug_analysis.packages import PackageStore
        from viano_bug_analysis.case import CaseBuilder
        from viano_bug_analysis.errors import LockBusy
        try:
            CaseBuilder(PackageStore.open({str(store.root)!r})).build("demo-case", "supplied")
            print("built")
        except LockBusy as exc:
            print(exc.code)
        """
    )
    out_other, _ = other.communicate(timeout=60)
    out_slow, err = slow.communicate(timeout=60)
    assert out_other.strip() == "store.lock_busy"
    assert out_slow.strip() == "built", err
    with pytest.raises(LockBusy):
        with store.lock("demo-case", "supplied"), store.lock("demo-case", "supplied"):
            pass


def test_lock_of_a_killed_process_is_released(tmp_path: Path) -> None:
    store = PackageStore.init(tmp_path / "s")
    store.add(intake_package(tmp_path / "in.zip"))
    holder = _child(
        f"""
        import time
        from viano_bug_analysis.packages import PackageStore
        op = PackageStore.open({str(store.root)!r}).lock("demo-case", "supplied")
        op.__enter__()
        print("locked", flush=True)
        time.sleep(60)
        """
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "locked"
    with pytest.raises(LockBusy):
        with store.lock("demo-case", "supplied"):
            pass
    holder.kill()
    holder.communicate(timeout=30)
    with store.lock("demo-case", "supplied") as op:
        assert op.current().generation == 1


@pytest.mark.parametrize("step", PUBLISH_STEPS)
def test_crash_while_adding_a_package(tmp_path: Path, step: str) -> None:
    store = PackageStore.init(tmp_path / "s")
    pkg = intake_package(tmp_path / "in.zip")
    child = _child(
        f"""
        from viano_bug_analysis.packages import PackageStore
        PackageStore.open({str(store.root)!r}).add({str(pkg)!r})
        """,
        {CRASH_ENV: step},
    )
    _, err = child.communicate(timeout=120)
    assert child.returncode == 86, err
    reopened = PackageStore.open(store.root)
    if step in ("temp_written", "temp_fsynced"):
        assert reopened.list_packages() == []
        assert reopened.add(pkg)[1] == "added"
    else:
        assert reopened.current("demo-case", "supplied").generation == 1
        assert reopened.add(pkg)[1] == "unchanged"
    assert members(reopened.current("demo-case", "supplied").path) == members(pkg)


def test_exported_package_replays_in_another_store(tmp_path: Path) -> None:
    a = PackageStore.init(tmp_path / "a")
    a.add(intake_package(tmp_path / "in.zip"))
    built = CaseBuilder(a).build("demo-case", "supplied")
    a.export("demo-case", "supplied", tmp_path / "out.zip")
    b = PackageStore.init(tmp_path / "b")
    gen, status = b.add(tmp_path / "out.zip")
    assert (status, gen.generation, gen.analysis_revision) == ("added", 2, 1)
    again = CaseBuilder(b).build("demo-case", "supplied")
    assert again.status == "unchanged" and again.case_sha256 == built.case_sha256
    assert (tmp_path / "out.zip").read_bytes() == gen.path.read_bytes()
