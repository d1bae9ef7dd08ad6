"""Fingerprints of the canonical cases built from every real bug report, to check that a
change of the case rules keeps every case byte for byte.

For each record of each file in ``REAL_DATA_DIR/bug_reports`` (or ../shared/data), the
record is imported, added to a scratch store and built; the SHA-256 of the stored
canonical case JSON is written under ``<file>:<line>``. The bench intakes of
bench_case_build.py (synthetic and real-text, 1 MiB each) are built in memory and added
too. Nothing of the data is written, only hashes.

Run:  .venv/bin/python bench/case_fingerprints.py OUT.json
      .venv/bin/python bench/case_fingerprints.py OUT.json --compare BEFORE.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

from bench_case_build import (
    make_intake,
    make_log_intake,
    make_real_intake,
    real_data_dir,
    write_package,
)
from viano_bug_analysis.case import CaseBuilder, build_canonical_case
from viano_bug_analysis.intake import import_file
from viano_bug_analysis.packages import PackageReader, PackageStore

FILES = [
    ("github-issue", "bug_reports/inex_bug/msrv3_closed.subset.jsonl"),
    ("bugzilla", "bug_reports/bugbug/bugs.json"),
    ("github-issue", "bug_reports/bugbug/github_webcompat_web-bugs_issues.subset.json"),
]


def fingerprints(tmp: Path) -> dict[str, str]:
    root = real_data_dir()
    if root is None:
        sys.exit("no bug_reports in REAL_DATA_DIR or ../shared/data")
    store = PackageStore.init(tmp / "store")
    builder = CaseBuilder(store)
    out: dict[str, str] = {}
    for fmt, rel in FILES:
        for r in import_file(fmt, root / rel, tmp / rel.replace("/", "_")):
            store.add(r.path)
            builder.build(r.case_id, r.package_id)
            with store.current(r.case_id, r.package_id).open() as reader:
                data = reader.read(reader.require_manifest().pointers["canonical_case"])
            out[f"{rel}:{r.line}"] = hashlib.sha256(data).hexdigest()
    bench = {
        "bench:short-records": make_intake(1 << 20),
        "bench:long-logs": make_log_intake(1 << 20),
        "bench:real-texts": make_real_intake(1 << 20),
    }
    for label, intake in bench.items():
        assert intake is not None
        pkg = tmp / f"{label.replace(':', '-')}.zip"
        write_package(pkg, {"original/intake.json": intake}, set())
        with PackageReader(pkg) as reader:
            out[label] = build_canonical_case(reader, 1).sha256
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--compare", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        found = fingerprints(Path(d))
    args.out.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    print(f"{len(found)} cases fingerprinted into {args.out}")
    if args.compare:
        before = json.loads(args.compare.read_text())
        differ = sorted(k for k in before.keys() | found.keys() if before.get(k) != found.get(k))
        print(f"compared with {args.compare}: {len(differ)} differ")
        for key in differ[:20]:
            print("  differs:", key)
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
