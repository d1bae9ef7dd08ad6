"""JsonFileLedger's fsync order: which fsyncs happen, in which order, on every write.

The temp file is fsynced before ``os.replace`` and, on reserve, the folder after it;
settle skips the folder. A power cut cannot be staged in a test; what is checked here
is the order of the system calls the guarantee rests on.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from modelgate.errors import LedgerUnavailable
from modelgate.ledger import JsonFileLedger
from modelgate.types import Usage

PROVIDER_USAGE = Usage(prompt_tokens=30, completion_tokens=4, source="provider")


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


def _counts(path: Path) -> dict[str, int]:
    data = json.loads(path.read_text())
    return {k: data[k] for k in ("requests", "prompt_tokens", "completion_tokens")}


def test_portable_order_on_every_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "model-usage.json"
    ledger = JsonFileLedger(path, cap=10)
    log = _SyscallLog(monkeypatch)

    ledger.reserve(estimated_tokens=5)
    assert log.take() == ["fsync-file", "replace", "fsync-dir"]
    reservation = ledger.reserve(estimated_tokens=5)
    assert log.take() == ["fsync-file", "replace", "fsync-dir"]
    ledger.settle(reservation, PROVIDER_USAGE)
    assert log.take() == ["fsync-file", "replace"]  # atomic; the name durable later
    assert _counts(path) == {"requests": 2, "prompt_tokens": 30, "completion_tokens": 4}
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "model-usage.json",
        "model-usage.json.lock",
    ]


def test_a_failed_sync_refuses_and_never_undercounts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the durability step after the rename fails, ``reserve`` refuses (nothing is
    sent) and the request may stay counted: the ledger errs towards counting."""
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
