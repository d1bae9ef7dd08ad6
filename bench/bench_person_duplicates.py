"""Possible duplicates of one person among 10,000 people of an incident, on SQLite.

Prints the median time of :func:`trace_app.domain.identity.possible_duplicates` (what
``GET /api/people/{id}`` and the person page compute on every read) and of
:func:`trace_app.domain.identity.match_or_create_person` for a name that is already
there (what each publish runs), in one temporary SQLite database.

    .venv/bin/python bench/bench_person_duplicates.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from sqlalchemy import insert

from timing import median_ms
from trace_app.domain.identity import match_or_create_person, possible_duplicates
from trace_app.domain.search import people_search_key
from trace_app.domain.text import name_key
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import Incident, Person
from trace_app.store.types import new_id

PEOPLE = 10_000
FIRST = ["Asha", "Binod", "Maya", "Gita", "Anil", "Kamala", "Deepak", "Sita", "Ram", "Nima"]
LAST = ["Lama", "Magar", "Gurung", "Rai", "Shrestha", "Tamang", "Thapa", "Karki", "Dahal"]


def fill(db: Database) -> tuple[str, str]:
    incident_id = new_id("inc")
    rows = []
    for i in range(PEOPLE - 2):
        name = f"{FIRST[i % 10]} {LAST[i % 9]} {i}"
        rows.append((new_id("per"), name, i % 90))
    target = new_id("per")
    rows += [(target, "Sunita Rai", 30), (new_id("per"), "Sunit\u0430 Rai", 31)]
    with db.session() as s:
        s.add(Incident(id=incident_id, name="Bench Duplicates Incident"))
        s.flush()
        s.execute(
            insert(Person),
            [
                {
                    "id": pid,
                    "incident_id": incident_id,
                    "name": name,
                    "name_key": name_key(name),
                    "search_key": people_search_key([name]),
                    "age": age,
                }
                for pid, name, age in rows
            ],
        )
    return incident_id, target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as folder:
        db = Database(make_engine(f"sqlite:///{Path(folder) / 'bench.db'}"))
        migrate(db.engine)
        incident_id, target = fill(db)
        with db.sessions() as s:
            person = s.get(Person, target)
            assert person is not None
            found = possible_duplicates(s, person)
            assert [d.name for d in found] == ["Sunit\u0430 Rai"], found
            dupes = median_ms(lambda: possible_duplicates(s, person), rounds)
            existing = match_or_create_person(s, incident_id, "Maya Shrestha 2002", 22)
            assert existing.name == "Maya Shrestha 2002" and existing in s and not s.new
            match = median_ms(
                lambda: match_or_create_person(s, incident_id, "Maya Shrestha 2002", 22), rounds
            )
            s.rollback()
        db.dispose()
    print(f"people: {PEOPLE:,}, rounds: {rounds}")
    print(f"  possible_duplicates: {dupes:.1f} ms")
    print(f"  match_or_create_person (existing name): {match:.2f} ms")


if __name__ == "__main__":
    main()
