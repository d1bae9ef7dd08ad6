"""JsonFileLedger's two durability paths: which fsyncs happen, in which order.

The rename-then-fsync path (ext4 with ordered data and auto_da_alloc) fsyncs the file
once, *after* ``os.replace``, on reserve, and not at all on settle; the portable path
fsyncs the temp file before ``os.replace`` and, on reserve, the folder after it. A
first write always takes the portable path. A power cut cannot be staged in a test;
what is checked here is the order of the system calls the guarantee rests on.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from modelgate import ledger as ledger_module
from modelgate.errors import LedgerUnavailable
from modelgate.ledger import JsonFileLedger, journalled_ext4, mount_of
from modelgate.types import Usage

PROVIDER_USAGE = Usage(prompt_tokens=30, completion_tokens=4, source="provider")

MOUNTS = """\
sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0
/dev/vda / ext4 rw,relatime,discard 0 0
/dev/vdb /data xfs rw,relatime 0 0
/dev/vdc /data/ext ext4 rw,relatime 0 0
/dev/vdd /srv/with\\040space ext4 rw,noauto_da_alloc 0 0
"""

# what /proc/fs/ext4/<device>/options prints (every option, defaults included)
JOURNALLED = "rw\nbarrier\nauto_da_alloc\ndelalloc\ndata=ordered\ncommit=5\n"
NO_JOURNAL = "rw\nbarrier\nauto_da_alloc\ndelalloc\nnojournal_checksum\ncommit=5\n"


@pytest.mark.parametrize(
    ("folder", "expected"),
    [
        ("/", ("/dev/vda", "ext4")),
        ("/home/app/ledger", ("/dev/vda", "ext4")),
        ("/data/ledger", ("/dev/vdb", "xfs")),
        ("/database", ("/dev/vda", "ext4")),  # a sibling of /data, not inside it
        ("/data/ext/ledger", ("/dev/vdc", "ext4")),
        ("/srv/with space/ledger", ("/dev/vdd", "ext4")),
        ("/sys/x", ("sysfs", "sysfs")),
    ],
)
def test_mount_table_finds_the_deepest_mount(folder: str, expected: tuple[str, str]) -> None:
    mount = mount_of(folder, MOUNTS)
    assert mount is not None and mount[:2] == expected


def test_unknown_mount_is_none() -> None:
    assert mount_of("/anything", "") is None


@pytest.mark.parametrize(
    ("fstype", "options", "safe"),
    [
        ("ext4", JOURNALLED, True),
        ("ext4", JOURNALLED.replace("data=ordered", "data=journal"), True),
        ("ext4", NO_JOURNAL, False),  # no journal: no transaction to order anything
        ("ext4", JOURNALLED.replace("data=ordered", "data=writeback"), False),
        ("ext4", JOURNALLED.replace("auto_da_alloc", "noauto_da_alloc"), False),
        ("ext4", JOURNALLED.replace("barrier", "nobarrier"), False),
        ("xfs", JOURNALLED, False),
    ],
)
def test_only_journalled_ext4_takes_the_fast_path(fstype: str, options: str, safe: bool) -> None:
    assert journalled_ext4(fstype, frozenset(options.split())) is safe


def test_unreadable_ext4_options_take_the_portable_path() -> None:
    assert journalled_ext4("ext4", None) is False


class _SyscallLog:
    """Records ``os.fsync`` (file or folder) and ``os.replace`` in order."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, fail_fsync_after_replace: bool = False):
        self.events: list[str] = []
        self._fail = fail_fsync_after_replace
        real_fsync, real_replace = os.fsync, os.replace

        def fsync(fd: int) -> None:
            kind = "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
            if self._fail and "replace" in self.events:
                raise OSError(5, "Input/output error")
            self.events.append(f"fsync-{kind}")
            real_fsync(fd)

        def replace(src: str | Path, dst: str | Path) -> None:
            self.events.append("replace")
            real_replace(src, dst)

        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "replace", replace)

    def take(self) -> list[str]:
        events, self.events = self.events, []
        return events


def _force_path(monkeypatch: pytest.MonkeyPatch, fast: bool) -> None:
    monkeypatch.setattr(ledger_module, "rename_then_fsync", lambda folder: fast)


def _counts(path: Path) -> dict[str, int]:
    data = json.loads(path.read_text())
    return {k: data[k] for k in ("requests", "prompt_tokens", "completion_tokens")}


def test_rename_then_fsync_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _force_path(monkeypatch, True)
    path = tmp_path / "model-usage.json"
    ledger = JsonFileLedger(path, cap=10)
    log = _SyscallLog(monkeypatch)

    first = ledger.reserve(estimated_tokens=5)
    # no old file to fall back on: data on disk before the name, then the folder
    assert log.take() == ["fsync-file", "replace", "fsync-dir"]

    second = ledger.reserve(estimated_tokens=5)
    # one fsync, after the rename: it commits the data and the rename together
    assert log.take() == ["replace", "fsync-file"]
    assert _counts(path)["requests"] == 2

    ledger.settle(second, PROVIDER_USAGE)
    assert log.take() == ["replace"]  # atomic; durable with the next commit
    ledger.settle(first, PROVIDER_USAGE)
    log.take()
    assert _counts(path) == {"requests": 2, "prompt_tokens": 60, "completion_tokens": 8}
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "model-usage.json",
        "model-usage.json.lock",
    ]


def test_portable_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _force_path(monkeypatch, False)
    path = tmp_path / "model-usage.json"
    ledger = JsonFileLedger(path, cap=10)
    log = _SyscallLog(monkeypatch)

    ledger.reserve(estimated_tokens=5)
    assert log.take() == ["fsync-file", "replace", "fsync-dir"]
    reservation = ledger.reserve(estimated_tokens=5)
    assert log.take() == ["fsync-file", "replace", "fsync-dir"]
    ledger.settle(reservation, PROVIDER_USAGE)
    assert log.take() == ["fsync-file", "replace"]
    assert _counts(path) == {"requests": 2, "prompt_tokens": 30, "completion_tokens": 4}


@pytest.mark.parametrize("fast", [True, False])
def test_a_failed_sync_refuses_and_never_undercounts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool
) -> None:
    """When the durability step after the rename fails, ``reserve`` refuses (nothing is
    sent) and the request may stay counted: the ledger errs towards counting."""
    _force_path(monkeypatch, fast)
    path = tmp_path / "model-usage.json"
    ledger = JsonFileLedger(path, cap=10)
    ledger.reserve(estimated_tokens=5)
    _SyscallLog(monkeypatch, fail_fsync_after_replace=True)
    with pytest.raises(LedgerUnavailable):
        ledger.reserve(estimated_tokens=5)
    assert _counts(path)["requests"] == 2  # renamed in, so counted though refused
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "model-usage.json",
        "model-usage.json.lock",
    ]
