"""People search with 10,000 people on SQLite, against an indexed exact lookup.

Prints the median latency of :func:`trace_app.domain.search.search_people` (a typo
query, a Latin query for a Devanagari name, and a filtered query) and of an exact
``name_key`` lookup that the (incident, name_key) index serves, and their ratio,
measured in one run. The target is at most 50 ms per search. A temporary SQLite
database; the people are inserted with Core statements, shaped like what publish_report
writes.

    .venv/bin/python bench/bench_people_search.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from sqlalchemy import insert, select

from timing import median_ms
from trace_app.domain.search import search_key, search_people
from trace_app.domain.text import name_key
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import Incident, Person
from trace_app.store.types import new_id

PEOPLE = 10_000
FIRST = ["Asha", "Binod", "Maya", "Gita", "Anil", "Kamala", "Deepak", "Sita", "Ram", "Nima"]
LAST = ["Lama", "Magar", "Gurung", "Rai", "Shrestha", "Tamang", "Thapa", "Karki", "Dahal"]
TARGET_MS = 50.0


def fill(db: Database) -> str:
    incident_id = new_id("inc")
    with db.session() as s:
        s.add(Incident(id=incident_id, name="Bench Search Incident"))
        s.flush()
        names = [f"{FIRST[i % 10]} {LAST[i % 9]} {i}" for i in range(PEOPLE - 1)]
        names.append("सुनिता राई")
        s.execute(
            insert(Person),
            [
                {
                    "id": new_id("per"),
                    "incident_id": incident_id,
                    "name": name,
                    "name_key": name_key(name),
                    "search_key": search_key(name),
                    "age": i % 90,
                }
                for i, name in enumerate(names)
            ],
        )
    return incident_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as folder:
        db = Database(make_engine(f"sqlite:///{Path(folder) / 'bench.db'}"))
        migrate(db.engine)
        incident_id = fill(db)
        exact = (
            select(Person.id)
            .where(Person.incident_id == incident_id, Person.name_key == name_key("Maya Rai 42"))
            .limit(1)
        )
        with db.sessions() as s:
            assert search_people(s, incident_id, q="sunita rai")[0].name == "सुनिता राई"
            baseline = median_ms(lambda: s.execute(exact).all(), rounds)
            results = {
                q: median_ms(lambda q=q: search_people(s, incident_id, q=q), rounds)
                for q in ("Sunitta", "sunita rai", "maya gurung 42")
            }
            results["status=missing"] = median_ms(
                lambda: search_people(s, incident_id, q="asha", status="missing"), rounds
            )
        db.dispose()
    print(f"people: {PEOPLE:,}, rounds: {rounds}, exact indexed lookup: {baseline:.3f} ms")
    worst = 0.0
    for label, ms in results.items():
        worst = max(worst, ms)
        print(f"  search {label!r}: {ms:.1f} ms, ratio to exact lookup {ms / baseline:.0f}x")
    verdict = "within" if worst <= TARGET_MS else "OVER"
    print(f"slowest search {worst:.1f} ms: {verdict} the {TARGET_MS:.0f} ms target")


if __name__ == "__main__":
    main()
