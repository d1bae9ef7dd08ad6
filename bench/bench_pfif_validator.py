"""A PFIF 1.3 export of 10,000 persons with 30,000 notes against Person Finder's own
validator (issue 23's target: 0 errors), and what the check costs against the export.

Person Finder's validator is read from the oracle folder outside the repository
(``PERSONFINDER_DIR`` or ``<repo>/../shared/oracles/personfinder``); without it the
benchmark says so and exits 0. It reuses the test suite's loader and data generator
(``tests/trace_app/interchange``). Prints the export time, the validator's time, their
ratio, and the number of messages (the target is 0).

    .venv/bin/python bench/bench_pfif_validator.py [--persons 10000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "trace_app"))

from interchange.conftest import DOMAIN, new_incident  # noqa: E402
from interchange.person_finder_oracle import candidates, validate  # noqa: E402
from interchange.test_person_finder_validator import fill  # noqa: E402

from trace_app.domain.pfif_export import iter_incident_pfif  # noqa: E402
from trace_app.store.db import Database, make_engine, migrate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--persons", type=int, default=10_000)
    args = parser.parse_args()
    if not any((p / "app" / "pfif.py").is_file() for p in candidates()):
        print(f"skipped: Person Finder's code is not in {', '.join(map(str, candidates()))}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        database = Database(make_engine(f"sqlite:///{tmp}/bench.db"))
        migrate(database.engine)
        incident = new_incident(database, "Bench Flood")
        fill(database, incident, persons=args.persons, notes_each=3)
        started = time.perf_counter()
        with database.sessions() as session:
            document = b"".join(iter_incident_pfif(session, incident, domain=DOMAIN, version="1.3"))
        exported = time.perf_counter() - started
        database.dispose()
    started = time.perf_counter()
    messages = validate(document)
    checked = time.perf_counter() - started
    errors = sum(1 for m in messages if m.is_error)
    print(
        f"PFIF 1.3: {args.persons:,} persons, {document.count(b'<pfif:note>'):,} notes, "
        f"{len(document) / 1e6:.1f} MB"
    )
    print(f"our export: {exported:.1f} s; Person Finder's validator: {checked:.1f} s")
    print(f"RESULT validator/export time ratio: {checked / exported:.1f}x")
    verdict = "meets" if not messages else "MISSES"
    print(f"RESULT validator messages: {len(messages)} ({errors} errors; {verdict} the 0 target)")
    return 0 if not messages else 1


if __name__ == "__main__":
    raise SystemExit(main())
