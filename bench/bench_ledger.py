"""Ledger cost: reserve + settle on the JSON file backend against a bare os.replace.

The baseline is a bare ``os.replace`` of the same file (temp file written in the same
folder, renamed over the ledger, the same bytes each time, no fsync), measured in the
same run and interleaved. Printed alongside, so a reader can judge the disk: one
``fsync`` of the file just replaced, and a durable replace (write, fsync, replace).

The ledger side is one ``reserve`` (lock, read, validate, write, replace, made durable
before it returns: temp file fsynced, renamed, folder fsynced) plus one ``settle`` with
provider-reported tokens (a second atomic replace, temp file fsynced, no folder fsync):
three fsyncs, on every file system (decision 0066).

Run: .venv/bin/python bench/bench_ledger.py [folder]   (bounded to well under 60 s)
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from modelgate.ledger import JsonFileLedger
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
    durable_ms = statistics.median(bare_durable) * 1000
    plain_ms = statistics.median(bare_plain) * 1000
    fsync_ms = statistics.median(fsyncs) * 1000
    ledger_ms = statistics.median(ledger_times) * 1000
    print(f"folder: {base or tempfile.gettempdir()}  rounds: {len(ledger_times)}")
    print("fsync order: portable (3 fsyncs per reserve + settle), on every file system")
    print(f"fsync of the file just replaced       median {fsync_ms:.3f} ms")
    print(f"bare os.replace (no fsync)            median {plain_ms:.3f} ms  (baseline)")
    print(f"bare write + fsync + os.replace       median {durable_ms:.3f} ms")
    print(f"ledger reserve + settle (2 replaces)  median {ledger_ms:.3f} ms")
    print(f"ratio ledger / bare os.replace = {ledger_ms / plain_ms:.2f}")
    print(f"ratio ledger / durable replace = {ledger_ms / durable_ms:.2f}")


if __name__ == "__main__":
    main()
