"""`viano triage` of a backlog through a scripted provider that answers in 1 s (issue 39).

50 real Bugzilla reports (../shared/data or REAL_DATA_DIR, one file each) are triaged
at concurrency 8 through the real gateway, with a provider object that answers every
request with a valid answer for its catalogue after 1 s (``CatalogueModel`` of the
tests). The figure is a ratio measured in one run:

    triage wall time / (50 / 8 x 1 s + the time to import, add and build the same 50
    reports one after another in another store)

Target <= 1.5. Also printed: the same triage a second time over the same store (every
case already interpreted: no model call, the resume path).

Run: .venv/bin/python bench/bench_triage.py [--reports 50] [--concurrency 8] [--delay 1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "viano" / "interpretation")]

from triage_support import CatalogueModel, real_reports  # noqa: E402

from viano_bug_analysis.case import CaseBuilder  # noqa: E402
from viano_bug_analysis.intake import import_file  # noqa: E402
from viano_bug_analysis.llm import GatewayConfig, LLMGateway  # noqa: E402
from viano_bug_analysis.packages import PackageStore  # noqa: E402
from viano_bug_analysis.triage import expand_sources, run_triage  # noqa: E402
from viano_bug_analysis.triage.table import write_tables  # noqa: E402

CONFIG = GatewayConfig.from_mapping(
    {
        "providers": [
            {
                "name": "catalogue",
                "base_url": "http://192.0.2.1:9/v1",
                "model": "catalogue-model",
                "max_output_tokens": 8192,
                "structured_output": "json_schema",
                "timeout_s": 60,
            }
        ],
        "retry": {"max_attempts": 1},
    }
)


def _data() -> Path:
    configured = os.environ.get("REAL_DATA_DIR")
    return Path(configured) if configured else REPO.parent / "shared" / "data"


def build_only(folder: Path, root: Path) -> float:
    store = PackageStore.init(root / "build-store")
    started = time.perf_counter()
    for i, source in enumerate(expand_sources([str(folder)])):
        assert source.format is not None
        out = root / f"imports-{i}"
        out.mkdir()
        for pkg in import_file(source.format, source.path, out):
            store.add(pkg.path)
            CaseBuilder(store).build(pkg.case_id, pkg.package_id)
    return time.perf_counter() - started


async def triage(folder: Path, store: PackageStore, model: CatalogueModel, n: int) -> float:
    started = time.perf_counter()
    report = await run_triage(
        expand_sources([str(folder)]),
        store,
        lambda: LLMGateway(CONFIG, providers=[model]),
        concurrency=n,
        out=store.root / "reports",
    )
    write_tables(report, store)
    elapsed = time.perf_counter() - started
    assert report.counts() == {"COMPLETED": len(report.rows)}, report.counts()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reports", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delay", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-triage-") as tmp:
        root = Path(tmp)
        folder = real_reports(_data(), root / "backlog", bugzilla=args.reports, github=0)
        count = len(list(folder.iterdir()))
        building = build_only(folder, root)
        model = CatalogueModel(delay_s=args.delay)
        store = PackageStore.init(root / "store")
        wall = asyncio.run(triage(folder, store, model, args.concurrency))
        calls = sum(model.calls.values())
        again = asyncio.run(triage(folder, store, model, args.concurrency))
    ideal = count / args.concurrency * args.delay
    print(f"reports {count}, concurrency {args.concurrency}, provider delay {args.delay} s")
    print(f"import+add+build, one after another: {building:.2f} s")
    print(f"triage wall time: {wall:.2f} s ({calls} model calls)")
    baseline = ideal + building
    print(f"baseline {ideal:.2f} s of calls + {building:.2f} s of building = {baseline:.2f} s")
    print(f"ratio {wall / (ideal + building):.2f} (target <= 1.5)")
    print(
        f"second run over the same store: {again:.2f} s, "
        f"{sum(model.calls.values()) - calls} model calls"
    )


if __name__ == "__main__":
    main()
