"""The incident's Duplicates queue over 10,000 people, on SQLite, against a person page's
own look-alike scan, in one run.

Prints the first view (every pair found: one all-names pass in C, then the near pairs
name by name), a later page of the same queue (the pairs are kept until the incident's
people, names or decisions change: only that page's facts are read) and, as the baseline,
the median of :func:`trace_app.domain.identity.possible_duplicates` for one person (what
every person page computes). A later page must cost no more than a few person pages.

    .venv/bin/python bench/bench_duplicates_queue.py [--people 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert, select

from timing import median_ms
from trace_app.domain import duplicate_queue
from trace_app.domain.identity import possible_duplicates
from trace_app.domain.search import people_search_key
from trace_app.domain.text import name_key
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import Incident, Person
from trace_app.store.types import new_id

FIRST = ["Maya", "Sunita", "Ram", "Hari", "Bishnu", "Sita", "Gita", "Kamala", "Anil", "Nima"]
LAST = ["Gurung", "Rai", "Thapa", "Lama", "Shrestha", "Tamang", "Magar", "Karki", "Dahal"]


def fill(db: Database, people: int) -> str:
    rng = random.Random(7)
    incident_id = new_id("inc")
    rows = []
    for i in range(people):
        name = f"{rng.choice(FIRST)} {rng.choice(FIRST)[:3]}{i} {rng.choice(LAST)}"
        rows.append(
            {
                "id": new_id("per"),
                "incident_id": incident_id,
                "name": name,
                "name_key": name_key(name),
                "search_key": people_search_key([name]),
                "age": rng.randint(1, 90),
            }
        )
    with db.session() as s:
        s.add(Incident(id=incident_id, name="Bench Queue Incident"))
        s.flush()
        s.execute(insert(Person), rows)
    return incident_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Database(make_engine(f"sqlite:///{Path(folder) / 'bench.db'}"))
        migrate(db.engine)
        incident_id = fill(db, args.people)
        with db.sessions() as s:
            started = time.perf_counter()
            first = duplicate_queue.duplicates_page(s, incident_id)
            first_ms = (time.perf_counter() - started) * 1000
            later_ms = median_ms(
                lambda: duplicate_queue.duplicates_page(s, incident_id, offset=20), args.rounds
            )
            person = s.scalars(select(Person).where(Person.incident_id == incident_id)).first()
            assert person is not None
            page_ms = median_ms(lambda: possible_duplicates(s, person), args.rounds)
        db.dispose()
    print(f"{args.people:,} people, {first.total} pairs in the queue")
    print(f"  first view (all pairs found):    {first_ms:8.1f} ms")
    print(f"  a later page (pairs kept):       {later_ms:8.1f} ms")
    print(f"  one person page's look-alikes:   {page_ms:8.1f} ms (baseline)")
    print(f"  later page / person page:        {later_ms / page_ms:8.2f}")


if __name__ == "__main__":
    main()
