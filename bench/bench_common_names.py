"""Search and possible duplicates when many people share a name (issue 43), on SQLite and
PostgreSQL, at 10,000 people and at ``--people`` (default 300,000), in one run.

The incident is the common-name corpus of ``many_people.common_names``: first and family
names drawn with Zipf-like weights (Nepali, Arabic, Spanish, English), "Maya Gurung" the
commonest full name, a third of the people told apart by a number, one rare name and
one Devanagari name. Prints the median (p50) of
:func:`trace_app.domain.search.search_people` for the commonest full name, the same with
a number, with a typo, a rare name and a one-word typo of a common first name, and of
:func:`trace_app.domain.identity.possible_duplicates` for holders of the commonest name
and for holders of it with a number ("Maya Gurung 42"; several people each, asked in
turn), then the ratio of the larger incident to 10,000
people (targets: p50 within 30 ms for search and 40 ms for duplicates at 300,000, at most
3x the cost at 10,000).

``--keep`` keeps the filled databases (``/tmp/trace-bench-common/N.db`` and the
PostgreSQL schema ``bench_common_N``) and reuses them on the next run, so that code
before and after a change is measured on the same data; ``--drop`` removes them.

    PYTHONPATH=src:bench .venv/bin/python bench/bench_common_names.py
        [--people 300000] [--rounds 20] [--db sqlite,postgres] [--keep | --drop]
"""

from __future__ import annotations

import argparse
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url

import many_people
from bench_search_scale import database
from timing import median_ms
from trace_app.domain.identity import possible_duplicates
from trace_app.domain.search import search_people
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import Incident, Person

SMALL = 10_000
QUERIES = ("Maya Gurung", "maya gurung 42", "Maya Gurng", many_people.RARE, "Sunitta")
TARGET_SEARCH_MS = 30.0
TARGET_DUPLICATES_MS = 40.0
TARGET_RATIO = 3.0
HOLDERS = 5  # holders of the commonest name whose duplicates are asked, in turn
KEEP_DIR = Path("/tmp/trace-bench-common")


@contextmanager
def kept(kind: str, people: int, pg_url: str) -> Iterator[Database]:
    """A database kept between runs (``--keep``)."""
    if kind == "sqlite":
        KEEP_DIR.mkdir(exist_ok=True)
        db = Database(make_engine(f"sqlite:///{KEEP_DIR / f'{people}.db'}"))
    else:
        schema = f"bench_common_{people}"
        admin = create_engine(make_url(pg_url), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
            trgm = conn.execute(
                text(
                    "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n "
                    "ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'"
                )
            ).scalar()
        admin.dispose()
        url = make_url(pg_url).update_query_dict(
            {"options": f"-csearch_path={schema},{trgm or 'public'}"}
        )
        db = Database(make_engine(url.render_as_string(hide_password=False)))
    try:
        migrate(db.engine)
        yield db
    finally:
        db.dispose()


def drop(pg_url: str) -> None:
    shutil.rmtree(KEEP_DIR, ignore_errors=True)
    admin = create_engine(make_url(pg_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        for (schema,) in conn.execute(
            text("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench_common_%'")
        ):
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


def incident_of(db: Database, people: int) -> str:
    """The corpus' incident in ``db``, filled when missing."""
    name = f"Common names {people}"
    with db.sessions() as s:
        found = s.scalar(select(Incident.id).where(Incident.name == name))
    if found:
        return found
    started = time.perf_counter()
    # no ANALYZE on SQLite: a deployment has no statistics (the plans must not need them)
    incident_id = many_people.fill(
        db.engine, people, incident_name=name, corpus="common", analyze=False
    )
    print(f"    {people:,} people written in {time.perf_counter() - started:.0f} s")
    return incident_id


def measure(db: Database, kind: str, people: int, rounds: int) -> dict[str, float]:
    incident_id = incident_of(db, people)
    figures: dict[str, float] = {}
    with db.sessions() as s:
        found = [m.name for m in search_people(s, incident_id, q=many_people.RARE)]
        assert found[:1] == [many_people.RARE], found[:3]
        for q in QUERIES:
            figures[q] = median_ms(lambda q=q: search_people(s, incident_id, q=q), rounds)
            print(f"    {kind} {people:,} search {q!r}: {figures[q]:.1f} ms")
        holders = s.scalars(
            select(Person)
            .where(Person.incident_id == incident_id, Person.name == many_people.COMMONEST)
            .order_by(Person.id)
            .limit(HOLDERS)
        ).all()
        turn = iter(range(10**9))

        def duplicates() -> object:
            return possible_duplicates(s, holders[next(turn) % len(holders)])

        figures["duplicates"] = median_ms(duplicates, max(rounds, len(holders)))
        print(f"    {kind} {people:,} possible_duplicates: {figures['duplicates']:.1f} ms")
        numbered = s.scalars(
            select(Person)
            .where(
                Person.incident_id == incident_id,
                Person.name.like(f"{many_people.COMMONEST} %"),
            )
            .order_by(Person.id)
            .limit(HOLDERS)
        ).all()
        again = iter(range(10**9))

        def numbered_duplicates() -> object:
            return possible_duplicates(s, numbered[next(again) % len(numbered)])

        figures["numbered"] = median_ms(numbered_duplicates, max(rounds, len(numbered)))
        print(f"    {kind} {people:,} possible_duplicates, numbered: {figures['numbered']:.1f} ms")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--pg-url", default=many_people.DEFAULT_PG)
    parser.add_argument("--keep", action="store_true", help="keep and reuse the databases")
    parser.add_argument("--drop", action="store_true", help="remove kept databases, then stop")
    args = parser.parse_args()
    if args.drop:
        drop(args.pg_url)
        return
    for kind in args.db.split(","):
        results = {}
        for people in (SMALL, args.people):
            opened = kept(kind, people, args.pg_url) if args.keep else database(kind, args.pg_url)
            with opened as db:
                results[people] = measure(db, kind, people, args.rounds)
        small, large = results[SMALL], results[args.people]
        print(f"{kind}: medians, {SMALL:,} -> {args.people:,} people")
        labels = {"duplicates": "possible_duplicates", "numbered": "possible_duplicates, numbered"}
        for what in (*QUERIES, "duplicates", "numbered"):
            target = TARGET_SEARCH_MS if what in QUERIES else TARGET_DUPLICATES_MS
            ratio = large[what] / small[what]
            verdict = "within" if large[what] <= target and ratio <= TARGET_RATIO else "OVER"
            label = labels.get(what, f"search {what!r}")
            print(
                f"  {label}: {small[what]:.1f} -> {large[what]:.1f} ms, ratio {ratio:.2f}x "
                f"({verdict} {target:.0f} ms / {TARGET_RATIO:.0f}x)"
            )


if __name__ == "__main__":
    main()
