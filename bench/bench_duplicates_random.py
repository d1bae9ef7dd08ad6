"""Possible duplicates of people drawn at random from a large incident, with the stored-key
check (:func:`trace_app.domain.identity.may_be_alike`) and with the reason rules run on
every candidate, in the same run.

``bench_person_duplicates.py`` asks for one name again and again, whose candidates'
readings are soon cached; a person page or an import meets people it has not seen. This
one draws ``--sample`` people of ``--people`` generated people (one incident), computes
each one's possible duplicates once with the check and once without it (the order
alternates), and prints the median CPU time of each and their ratio. The two must find
the same duplicates: it stops if they differ.

    PYTHONPATH=src:bench .venv/bin/python bench/bench_duplicates_random.py
        [--people 1000000] [--sample 100] [--db sqlite|postgres]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

import many_people
from bench_search_scale import database
from trace_app.domain import identity
from trace_app.store.models import Person


def cpu_ms(call: Callable[[], object]) -> tuple[float, object]:
    started = time.process_time()
    result = call()
    return 1000 * (time.process_time() - started), result


def duplicates_cpu_ms(s: Session, person: Person, use_check: bool) -> tuple[float, object]:
    """One ``possible_duplicates`` call's CPU time and result, with or without the check."""
    checked = identity.may_be_alike
    identity.may_be_alike = checked if use_check else _keep_everyone
    try:
        return cpu_ms(lambda: identity.possible_duplicates(s, person))
    finally:
        identity.may_be_alike = checked


def _keep_everyone(my_keys: Sequence[str], their_names: Sequence[str], stored_key: str) -> bool:
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--db", default="sqlite", choices=["sqlite", "postgres"])
    parser.add_argument("--pg-url", default=many_people.DEFAULT_PG)
    args = parser.parse_args()
    rng = random.Random(2026)
    with database(args.db, args.pg_url) as db:
        started = time.perf_counter()
        incident_id = many_people.fill(db.engine, args.people)
        print(f"{args.db}: {args.people:,} people written in {time.perf_counter() - started:.0f} s")
        with db.sessions() as s:
            ids = s.scalars(
                select(Person.id).where(Person.incident_id == incident_id).order_by(Person.id)
            ).all()
            assert len(ids) == s.scalar(select(func.count()).select_from(Person))
            people = [s.get(Person, pid) for pid in rng.sample(ids, args.sample)]
            with_check: list[float] = []
            without: list[float] = []
            for turn, person in enumerate(people):
                assert person is not None
                order = (True, False) if turn % 2 == 0 else (False, True)
                found: dict[bool, object] = {}
                for use_check in order:
                    ms, found[use_check] = duplicates_cpu_ms(s, person, use_check)
                    (with_check if use_check else without).append(ms)
                assert found[True] == found[False], person.name
    a, b = statistics.median(with_check), statistics.median(without)
    print(
        f"{args.db}, {args.sample} people drawn from {args.people:,}: possible_duplicates "
        f"median CPU {a:.1f} ms with the stored-key check, {b:.1f} ms with the rules on every "
        f"candidate: ratio {a / b:.2f}"
    )


if __name__ == "__main__":
    main()
