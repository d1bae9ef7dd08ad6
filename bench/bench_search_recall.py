"""How many of the names one typo away from a two-word search the search returns, at
10,000 people and at ``--people`` (default 1,000,000), on SQLite or PostgreSQL.

The search promises every name that holds the query, or holds it with one typo (a letter
left out, added or replaced, or two neighbours swapped), within a line of the person's
key (docs/trace.md; the Hypothesis test ``test_indexed_search_ranks_like_the_full_scan``
checks it on small incidents). This benchmark draws ``--queries`` (default 20) of the
incident's generated names at random (a fixed seed), searches each as typed with
:func:`trace_app.domain.search.search_people`, and counts the incident's names one typo
away from it, found by a full scan (``rapidfuzz`` ``partial_ratio`` to narrow, then the
optimal string alignment distance over every window), that the search returned. It
prints, per size, the names one typo away, how many were returned (recall), the median
and slowest search, then the queries that missed some; the ratio compares the two sizes
of the same run.

    PYTHONPATH=src:bench .venv/bin/python bench/bench_search_recall.py [--people 1000000]
        [--queries 20] [--db sqlite|postgres]
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process
from sqlalchemy import select

import many_people
from bench_search_scale import database
from trace_app.domain.search import one_typo_away, search_key, search_people
from trace_app.store.models import Person

SMALL = 10_000
# partial_ratio of a name one typo away from a query of 5 letters or more is at least
# 80 (one change in ten characters); the windows decide
NARROW_SCORE = 80.0


@dataclass
class Recall:
    present: int = 0
    returned: int = 0
    times_ms: list[tuple[float, str]] = field(default_factory=list)  # time, query
    missed: list[tuple[str, int, int]] = field(default_factory=list)  # query, missing, near


def measure(kind: str, people: int, queries: int, seed: int, pg_url: str) -> Recall:
    recall = Recall()
    with database(kind, pg_url) as db:
        incident_id = many_people.fill(db.engine, people)
        with db.sessions() as s:
            # in name order, so that both databases draw the same names
            rows = s.execute(
                select(Person.id, Person.name, Person.search_key)
                .where(Person.incident_id == incident_id)
                .order_by(Person.name_key, Person.name)
            ).all()
            keys = [row[2] for row in rows]
            drawn = random.Random(seed).sample(range(len(rows)), queries)
            for at in drawn:
                query = search_key(rows[at][1])
                narrowed = process.extract(
                    query, keys, scorer=fuzz.partial_ratio, score_cutoff=NARROW_SCORE, limit=None
                )
                near = {rows[i][0] for _, _, i in narrowed if one_typo_away(query, keys[i])}
                started = time.perf_counter()
                found = {m.person_id for m in search_people(s, incident_id, q=query)}
                recall.times_ms.append(((time.perf_counter() - started) * 1000, query))
                recall.present += len(near)
                recall.returned += len(near & found)
                if near - found:
                    recall.missed.append((query, len(near - found), len(near)))
    return recall


def report(label: str, recall: Recall) -> float:
    share = recall.returned / recall.present if recall.present else 1.0
    times = sorted(recall.times_ms) or [(0.0, "")]
    print(
        f"  {label}: {recall.present} names one typo away, {recall.returned} returned "
        f"(recall {share:.3f}); search median {times[len(times) // 2][0]:.1f} ms, "
        f"slowest {times[-1][0]:.1f} ms ({times[-1][1]!r})"
    )
    for query, missing, near in recall.missed:
        print(f"    {query!r}: {missing} of {near} missing")
    return share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--db", default="sqlite", choices=("sqlite", "postgres"))
    parser.add_argument("--pg-url", default=many_people.DEFAULT_PG)
    args = parser.parse_args()
    print(f"{args.db}: {args.queries} generated names drawn at random (seed {args.seed})")
    small = report(
        f"{SMALL:,} people", measure(args.db, SMALL, args.queries, args.seed, args.pg_url)
    )
    large = report(
        f"{args.people:,} people",
        measure(args.db, args.people, args.queries, args.seed, args.pg_url),
    )
    print(f"  recall at {args.people:,} people / at {SMALL:,}: {large / small:.3f} (promise: 1)")


if __name__ == "__main__":
    main()
