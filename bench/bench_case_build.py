"""Benchmark: building a canonical case with the plain case rules (issue 17 targets).

1. Time: CaseBuilder.build on a package holding a native intake, with a plain
   ``zipfile`` read of the same member plus ``json.loads`` in the same run for scale.
   Reported twice: the whole build (parse, records, canonical JSON, hash, publication of
   a new generation with fsync) and the in-memory part alone (build_canonical_case).
   Intakes: the texts of the real public bug threads in REAL_DATA_DIR (or
   ../shared/data) as one ~300 KB thread (target <= 100 ms) and repeated to 8 MiB
   (target <= 3 s), both skipped with a message when that folder is absent; 8 MiB of
   many short synthetic records and of a few records with long logs.
   Baseline and build run interleaved; the figures are medians of REPEATS runs.
2. Memory: tracemalloc peak of CaseBuilder.build on a ~50 MiB package with large
   attachments, against its largest member (target <= 2x).

Run: .venv/bin/python bench/bench_case_build.py   (bounded well under 60 s)
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path

from viano_bug_analysis.case import CaseBuilder, build_canonical_case
from viano_bug_analysis.packages import Manifest, PackageReader, PackageStore, PackageWriter

MiB = 1 << 20
WORDS = (
    "export button spinner stops table rows timeout worker queue page render "
    "user clicks save draft editor crash value field null undefined request"
).split()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def make_log_intake(target_bytes: int) -> bytes:
    """Few records, each carrying a long fenced log (kept as unread references)."""
    rng = random.Random(11)
    observations = []
    size = 0
    while size < target_bytes:
        log = "\n".join(
            f"2024-05-02T09:00:{i % 60:02d} ERROR worker {rng.randrange(10**6)} timeout"
            for i in range(3000)
        )
        observations.append(f"The export fails with this log:\n```\n{log}\n```\nThen it stops.")
        size += len(log)
    return json.dumps(
        {
            "intake_format": "viano-intake/1",
            "case_id": "bench-case",
            "title": "Export stops",
            "observations": observations,
        }
    ).encode()


def make_intake(target_bytes: int) -> bytes:
    rng = random.Random(7)
    intake: dict[str, object] = {
        "intake_format": "viano-intake/1",
        "case_id": "bench-case",
        "title": "Export stops for large tables",
        "expected_behavior": "The export finishes and a CSV file is downloaded.",
        "steps": ["Open /reports", "Click Export"],
        "observations": [],
        "comments": [],
    }
    size = 0
    i = 0
    while size < target_bytes:
        text = " ".join(_sentence(rng, 14) for _ in range(6))
        if i % 3 == 0:
            intake["observations"].append(text)  # type: ignore[attr-defined]
        else:
            intake["comments"].append(  # type: ignore[attr-defined]
                {
                    "author": f"tester{i % 17}",
                    "timestamp": "2024-05-02T09:00:00Z",
                    "text": text + (" I think the worker queue is full." if i % 5 == 0 else ""),
                }
            )
        size += len(text) + 80
        i += 1
    return json.dumps(intake).encode()


def real_data_dir() -> Path | None:
    """``REAL_DATA_DIR`` or ``<repo>/../shared/data`` (as the tests find it)."""
    folder = Path(
        os.environ.get("REAL_DATA_DIR")
        or Path(__file__).resolve().parents[1].parent / "shared" / "data"
    )
    return folder if (folder / "bug_reports").is_dir() else None


def make_real_intake(target_bytes: int) -> bytes | None:
    """The texts of the real public bug threads in the data folder (GitHub issue bodies
    and comments, Bugzilla comments), in file order and repeated until the intake holds
    ``target_bytes``: real lengths, code blocks, logs, links and hedges. Read at run
    time; nothing of it is stored in the repository."""
    folder = real_data_dir()
    if folder is None:
        return None
    texts: list[dict[str, str]] = []
    for path in sorted((folder / "bug_reports").rglob("*.json*")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if not isinstance(item, dict):
                continue
            if isinstance(item.get("body"), str):  # a GitHub issue
                texts.append({"text": item["body"], "author": "reporter"})
            comments_of = item.get("comments")
            for comment in comments_of if isinstance(comments_of, list) else []:
                if isinstance(comment, dict):
                    body = comment.get("body", comment.get("text"))
                    if isinstance(body, str):
                        texts.append({"text": body, "author": "commenter"})
    comments: list[dict[str, str]] = []
    size = 0
    while texts and size < target_bytes:
        for entry in texts:
            comments.append(entry)
            size += len(entry["text"]) + 40
            if size >= target_bytes:
                break
    return json.dumps(
        {
            "intake_format": "viano-intake/1",
            "case_id": "bench-case",
            "title": "A long thread of real bug-report texts",
            "comments": comments,
        }
    ).encode()


def write_package(path: Path, files: dict[str, bytes], stored: set[str]) -> None:
    writer = PackageWriter.new(
        Manifest(
            package_id="supplied",
            case_id="bench-case",
            inputs=({"member": "original/intake.json", "format": "viano-intake"},),
        )
    )
    for name, data in files.items():
        writer.add_bytes(name, data, compress=name not in stored)
    with open(path, "wb") as f:
        writer.write(f)


REPEATS = 5


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench_time(tmp: Path, intake: bytes, label: str, target_s: float | None = None) -> None:
    """Baseline and build run interleaved, REPEATS times after one warm-up each, so load
    changes on the machine hit both alike; the ratio is of the medians."""
    pkg = tmp / f"intake-{label}.zip"
    write_package(pkg, {"original/intake.json": intake}, set())

    def baseline() -> None:
        with zipfile.ZipFile(pkg) as z:
            json.loads(z.read("original/intake.json"))

    def in_memory() -> None:
        with PackageReader(pkg) as r:
            build_canonical_case(r, 1)

    def full() -> float:
        root = tmp / f"store-{time.perf_counter_ns()}"
        store = PackageStore.init(root)
        store.add(pkg)
        elapsed = timed(lambda: CaseBuilder(store).build("bench-case", "supplied"))
        shutil.rmtree(root)
        return elapsed

    baseline()  # warm-up: imports, caches, thread pool
    in_memory()
    full()
    base_t: list[float] = []
    mem_t: list[float] = []
    full_t: list[float] = []
    for _ in range(REPEATS):
        base_t.append(timed(baseline))
        mem_t.append(timed(in_memory))
        full_t.append(full())
    base, mem, whole = (statistics.median(t) for t in (base_t, mem_t, full_t))
    target = f"  (target <= {target_s * 1000:.0f} ms)" if target_s else ""
    print(f"intake ({label}): {len(intake) / 1024:.0f} KiB")
    print(f"baseline zipfile read + json.loads: {base * 1000:.0f} ms")
    print(f"build_canonical_case (in memory):   {mem * 1000:.0f} ms  ratio {mem / base:.2f}x")
    print(
        f"CaseBuilder.build (with publish):   {whole * 1000:.0f} ms  ratio {whole / base:.2f}x"
        + target
    )


def bench_memory(tmp: Path) -> None:
    rng = random.Random(3)
    attachments = {
        "original/attachments/core.dump": rng.randbytes(24 * MiB),
        "original/attachments/trace.bin": rng.randbytes(16 * MiB),
        "original/attachments/server.log": b"".join(
            f"2024-05-02T09:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d} ERROR worker "
            f"{rng.randrange(10**6)} timeout on queue {i % 13}\n".encode()
            for i in range(10 * MiB // 64)
        ),
    }
    intake = make_intake(64 * 1024)
    files = {"original/intake.json": intake, **attachments}
    pkg = tmp / "big.zip"
    write_package(pkg, files, {"original/attachments/core.dump", "original/attachments/trace.bin"})
    largest = max(len(v) for v in files.values())
    total = sum(len(v) for v in files.values())
    del attachments, files
    store = PackageStore.init(tmp / "store-mem")
    store.add(pkg)
    tracemalloc.start()
    CaseBuilder(store).build("bench-case", "supplied")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"package: {total / MiB:.0f} MiB of members ({os.path.getsize(pkg) / MiB:.0f} MiB "
        f"on disk), largest member {largest / MiB:.0f} MiB"
    )
    print(
        f"tracemalloc peak during build: {peak / MiB:.1f} MiB  ratio {peak / largest:.2f}x "
        "of the largest member (target <= 2x)"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        t0 = time.perf_counter()
        thread = make_real_intake(300 * 1024)
        if thread is None:
            print(
                "real bug-thread texts: skipped (no bug_reports in REAL_DATA_DIR or ../shared/data)"
            )
        else:
            bench_time(tmp, thread, "one real bug thread", 0.1)
            bench_time(tmp, make_real_intake(8 * MiB) or b"", "real bug-thread texts", 3.0)
        bench_time(tmp, make_intake(8 * MiB), "many short records")
        bench_time(tmp, make_log_intake(8 * MiB), "few records with long logs")
        bench_memory(tmp)
        from viano_bug_analysis.packages.reader import fast_zlib

        print(
            f"total benchmark time {time.perf_counter() - t0:.1f} s; times are medians of "
            f"{REPEATS} interleaved runs; large members deflated and inflated by "
            f"{fast_zlib().__name__}"
        )


if __name__ == "__main__":
    main()
