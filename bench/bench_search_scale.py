"""People search at 10,000 people and at a larger N, on SQLite and PostgreSQL.

Prints the median latency of :func:`trace_app.domain.search.search_people` for a typo
("Sunitta"), a Latin query for a Devanagari name ("sunita rai") and a two-letter query
("ra"), at 10,000 people and at ``--people`` (default 1,000,000) in one incident, and the
ratio large / small per query: the index must keep it near flat (target: at most 3x, and
a median within 20 ms on PostgreSQL, 30 ms on SQLite, at a million). Each size is its own
database (a temporary SQLite file; a fresh schema of the test PostgreSQL server).

    .venv/bin/python bench/bench_search_scale.py [--people 1000000] [--rounds 30]
        [--db sqlite,postgres] [--pg-url postgresql+psycopg://postgres@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import time
from contextlib import AbstractContextManager

import many_people
from timing import median_ms
from trace_app.domain.search import search_people
from trace_app.store.db import Database

SMALL = 10_000
QUERIES = ("Sunitta", "sunita rai", "ra")
TARGET_MS = {"postgres": 20.0, "sqlite": 30.0}
TARGET_RATIO = 3.0


def database(kind: str, pg_url: str) -> AbstractContextManager[Database]:
    return many_people.migrated_database(kind, pg_url, "scale")


def measure(kind: str, people: int, rounds: int, pg_url: str) -> dict[str, float]:
    with database(kind, pg_url) as db:
        started = time.perf_counter()
        incident_id = many_people.fill(db.engine, people)
        print(f"  {kind}: {people:,} people written in {time.perf_counter() - started:.0f} s")
        with db.sessions() as s:
            found = search_people(s, incident_id, q="sunita rai")
            assert found[0].name == many_people.TARGET, found[:3]
            assert many_people.TARGET in [
                m.name for m in search_people(s, incident_id, q="Sunitta")
            ]
            return {
                q: median_ms(lambda q=q: search_people(s, incident_id, q=q), rounds)
                for q in QUERIES
            }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--pg-url", default=many_people.DEFAULT_PG)
    args = parser.parse_args()
    for kind in args.db.split(","):
        small = measure(kind, SMALL, args.rounds, args.pg_url)
        large = measure(kind, args.people, args.rounds, args.pg_url)
        print(f"{kind}: search_people median, {SMALL:,} vs {args.people:,} people")
        for q in QUERIES:
            ratio = large[q] / small[q]
            verdict = "within" if large[q] <= TARGET_MS[kind] and ratio <= TARGET_RATIO else "OVER"
            print(
                f"  {q!r}: {small[q]:.1f} ms -> {large[q]:.1f} ms, ratio {ratio:.2f}x "
                f"({verdict} {TARGET_MS[kind]:.0f} ms / {TARGET_RATIO:.0f}x)"
            )


if __name__ == "__main__":
    main()
