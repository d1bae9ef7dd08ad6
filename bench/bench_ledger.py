"""Ledger cost: reserve + settle on the JSON file backend against a bare os.replace.

The baseline is a bare ``os.replace`` of the same file (temp file written in the same
folder, renamed over the ledger, the same bytes each time, no fsync), measured in the
same run and interleaved. Printed alongside, so a reader can judge the disk: one
``fsync`` of the file just replaced (its data and its new name: what the one-fsync
path pays), and a durable replace (write, fsync, replace). Where the folder takes the
portable path, the one-fsync path is also timed, labelled as not safe there.

The ledger side is one ``reserve`` (lock, read, validate, write, replace, made durable
before it returns) plus one ``settle`` with provider-reported tokens (a second atomic
replace). Which durability path the folder gets (see ``JsonFileLedger``) is printed:
``rename-then-fsync`` (journalled ext4 with ordered data and auto_da_alloc: 1 fsync
per reserve + settle) or ``portable`` (fsync before each rename, folder fsync on reserve:
3 fsyncs).

Run: .venv/bin/python bench/bench_ledger.py [folder]   (bounded to well under 60 s)
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from modelgate import ledger as ledger_module
from modelgate.ledger import JsonFileLedger, rename_then_fsync
from modelgate.types import Usage

ROUNDS = 300
USAGE = Usage(prompt_tokens=120, completion_tokens=12, source="provider")


def bare_replace(path: Path, data: bytes, *, durable: bool) -> None:
    tmp = path.with_name(path.name + ".bench.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())
    os.replace(tmp, path)


def main() -> None:
    base = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    with tempfile.TemporaryDirectory(dir=base) as tmp:
        path = Path(tmp) / "model-usage.json"
        ledger = JsonFileLedger(path, cap=1000)
        ledger.reserve(estimated_tokens=1)
        data = path.read_bytes()
        bare_durable, bare_plain, fsyncs, ledger_times = [], [], [], []
        deadline = time.monotonic() + 40
        for index in range(ROUNDS):
            if time.monotonic() > deadline:
                break
            if index % 900 == 899:  # stay under the cap
                path.unlink()
            start = time.perf_counter()
            bare_replace(path, data, durable=True)
            bare_durable.append(time.perf_counter() - start)
            start = time.perf_counter()
            bare_replace(path, data, durable=False)
            bare_plain.append(time.perf_counter() - start)
            fd = os.open(path, os.O_RDWR)
            try:
                start = time.perf_counter()
                os.fsync(fd)  # right after the bare replace: its data and its rename
                fsyncs.append(time.perf_counter() - start)
            finally:
                os.close(fd)
            start = time.perf_counter()
            reservation = ledger.reserve(estimated_tokens=180)
            ledger.settle(reservation, USAGE)
            ledger_times.append(time.perf_counter() - start)
        fast = rename_then_fsync(Path(tmp))
        other_times = []
        if not fast:
            # for comparison only: the one-fsync path this folder does NOT qualify for
            # (its crash guarantees need a journalled ext4)
            ledger_module.rename_then_fsync = lambda folder: True  # type: ignore[assignment]
            try:
                for _ in range(len(ledger_times) // 2):
                    start = time.perf_counter()
                    reservation = ledger.reserve(estimated_tokens=180)
                    ledger.settle(reservation, USAGE)
                    other_times.append(time.perf_counter() - start)
            finally:
                ledger_module.rename_then_fsync = rename_then_fsync
    durable_ms = statistics.median(bare_durable) * 1000
    plain_ms = statistics.median(bare_plain) * 1000
    fsync_ms = statistics.median(fsyncs) * 1000
    ledger_ms = statistics.median(ledger_times) * 1000
    path_name = "rename-then-fsync (1 fsync)" if fast else "portable (3 fsyncs)"
    print(f"folder: {base or tempfile.gettempdir()}  rounds: {len(ledger_times)}")
    print(f"durability path: {path_name}")
    print(f"fsync of the file just replaced       median {fsync_ms:.3f} ms")
    print(f"bare os.replace (no fsync)            median {plain_ms:.3f} ms  (baseline)")
    print(f"bare write + fsync + os.replace       median {durable_ms:.3f} ms")
    print(f"ledger reserve + settle (2 replaces)  median {ledger_ms:.3f} ms  (target < 1 ms)")
    if other_times:
        other_ms = statistics.median(other_times) * 1000
        print(
            f"  (rename-then-fsync path, not safe here, for comparison: median {other_ms:.3f} ms)"
        )
    print(f"ratio ledger / bare os.replace = {ledger_ms / plain_ms:.2f}")
    print(f"ratio ledger / durable replace = {ledger_ms / durable_ms:.2f}")


if __name__ == "__main__":
    main()
