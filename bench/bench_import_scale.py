"""A shelter-list (CSV) import into an empty incident and into one already holding many
people, on SQLite and PostgreSQL: the import must stay flat (target: into the full
incident at least 0.8x as fast as into the empty one).

Imports ``--rows`` (default 2,000) generated rows with
:func:`trace_app.domain.shelter_import.import_shelter_csv` (the identity rule for every row,
look-alikes through the trigram index, one report and claim each) into an empty incident,
then into an incident of ``--people`` (default 1,000,000) generated people, in the same
database, and prints rows per second for both and the ratio. A tenth of the rows name
someone already there (a confident match); the others are new. Then the same again with
other names and the look-alike checks of the import summary switched off
(``MAX_LOOK_ALIKE_CHECKS`` set to 0 for that round), so that the cost of the checks and
of the rest of the import can be told apart.

    .venv/bin/python bench/bench_import_scale.py [--people 1000000] [--rows 2000]
        [--db sqlite,postgres]
"""

from __future__ import annotations

import argparse
import csv
import io
import time
from collections.abc import Iterator
from contextlib import contextmanager

import many_people
from bench_search_scale import database
from trace_app.domain import pfif_import
from trace_app.domain.audit import Actor
from trace_app.domain.shelter_import import import_shelter_csv
from trace_app.store.db import Database

TARGET = 0.8
BENCH = Actor.operator("benchmark")


def shelter_csv(rows: int, known: list[str], seed: int = 99) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["full_name", "age", "status", "last_known_location"])
    fresh = many_people.names(rows, seed=seed)
    for i in range(rows):
        name = known[i % len(known)] if known and i % 10 == 0 else next(fresh)
        writer.writerow([name, str(20 + i % 60), "", "Camp 2 hall"])
    return out.getvalue().encode()


def timed_import(db: Database, incident_id: str, document: bytes, rows: int) -> float:
    started = time.perf_counter()
    with db.session() as s:
        summary = import_shelter_csv(
            s,
            incident_id,
            io.BytesIO(document),
            source_name="Camp 2 Desk",
            domain="bench.example.org",
            actor=BENCH,
        )
    elapsed = time.perf_counter() - started
    assert summary is not None
    return rows / elapsed


@contextmanager
def look_alike_checks(count: int) -> Iterator[None]:
    """The import summary's look-alike checks limited to ``count`` people, for a while."""
    was = pfif_import.MAX_LOOK_ALIKE_CHECKS
    pfif_import.MAX_LOOK_ALIKE_CHECKS = count
    try:
        yield
    finally:
        pfif_import.MAX_LOOK_ALIKE_CHECKS = was


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=1_000_000)
    parser.add_argument("--rows", type=int, default=2_000)
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--pg-url", default=many_people.DEFAULT_PG)
    args = parser.parse_args()
    known = list(many_people.names(200))
    rounds = (
        ("with the look-alike checks", pfif_import.MAX_LOOK_ALIKE_CHECKS, 99),
        ("without them", 0, 98),
    )
    for kind in args.db.split(","):
        with database(kind, args.pg_url) as db:
            empties = [many_people.fill(db.engine, 1, incident_name=f"Empty {n}") for n in "ab"]
            started = time.perf_counter()
            full = many_people.fill(db.engine, args.people)
            print(
                f"  {kind}: {args.people:,} people written in {time.perf_counter() - started:.0f} s"
            )
            for (label, checks, seed), empty in zip(rounds, empties, strict=True):
                with look_alike_checks(checks):
                    empty_rate = timed_import(
                        db, empty, shelter_csv(args.rows, [], seed), args.rows
                    )
                    full_rate = timed_import(
                        db, full, shelter_csv(args.rows, known, seed), args.rows
                    )
                ratio = full_rate / empty_rate
                verdict = "met" if ratio >= TARGET else "MISSED"
                print(
                    f"{kind}, {label}: {args.rows:,} CSV rows into an empty incident "
                    f"{empty_rate:.0f} rows/s, into {args.people:,} people {full_rate:.0f} "
                    f"rows/s: ratio {ratio:.2f} ({verdict}, target >= {TARGET})"
                )


if __name__ == "__main__":
    main()
