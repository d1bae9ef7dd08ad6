"""Possible duplicates and publishing at 10,000 people and at a larger N, on SQLite and
PostgreSQL.

Prints the median time of :func:`trace_app.domain.identity.possible_duplicates` (what
``GET /api/people/{id}`` and the person page compute on every read, and each imported
person), of :func:`trace_app.domain.identity.match_or_create_person` for a name that is
already there, and of :func:`trace_app.domain.publish.publish_report` for a new person
(committed), at 10,000 people and at ``--people`` (default 1,000,000) generated people in
one incident, and the ratios. Targets at a million: possible_duplicates within 20 ms,
publish_report within 2x its cost at 10,000. Each size is its own database.

    .venv/bin/python bench/bench_person_duplicates.py [--people 1000000] [--rounds 10]
        [--db sqlite,postgres]
"""

from __future__ import annotations

import argparse
import itertools
import time
from datetime import UTC, datetime

from sqlalchemy import insert

import many_people
from bench_search_scale import database
from timing import median_ms
from trace_app.domain.identity import match_or_create_person, possible_duplicates
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.domain.search import people_search_key
from trace_app.domain.text import name_key
from trace_app.store.models import ClaimStatus, Person
from trace_app.store.types import new_id

SMALL = 10_000
TARGET_DUPLICATES_MS = 20.0
TARGET_PUBLISH_RATIO = 2.0
LOOKALIKE = "Sunit\u0430 Rai"  # a Cyrillic "а"


def measure(kind: str, people: int, rounds: int, pg_url: str) -> dict[str, float]:
    with database(kind, pg_url) as db:
        started = time.perf_counter()
        incident_id = many_people.fill(db.engine, people)
        print(f"  {kind}: {people:,} people written in {time.perf_counter() - started:.0f} s")
        target = new_id("per")
        with db.engine.begin() as conn:
            conn.execute(
                insert(Person.__table__),  # type: ignore[arg-type]
                [
                    {
                        "id": pid,
                        "incident_id": incident_id,
                        "name": name,
                        "name_key": name_key(name),
                        "search_key": people_search_key([name]),
                        "age": age,
                    }
                    for pid, name, age in (
                        (target, "Sunita Rai", 30),
                        (new_id("per"), LOOKALIKE, 31),
                    )
                ],
            )
        with db.sessions() as s:
            person = s.get(Person, target)
            assert person is not None
            found = {d.name: [r.code for r in d.reasons] for d in possible_duplicates(s, person)}
            assert found.get(LOOKALIKE) == ["confusable_characters"], found
            dupes = median_ms(lambda: possible_duplicates(s, person), rounds)
            existing = many_people.TARGET
            match = median_ms(
                lambda: match_or_create_person(s, incident_id, existing, None), rounds
            )
            s.rollback()
        counter = itertools.count()

        def publish() -> None:
            with db.session() as s:
                publish_report(
                    s,
                    PublishReportInput(
                        incident_id=incident_id,
                        source="Bench Desk",
                        summary="A bench report.",
                        original_text="A volunteer reports a person as missing.",
                        reported_at=datetime(2026, 7, 15, 8, 0, tzinfo=UTC),
                        person=PersonInput(name=f"Bench Person {next(counter)}", age=40),
                        status=ClaimStatus.MISSING,
                    ),
                )

        published = median_ms(publish, rounds)
    return {
        "possible_duplicates": dupes,
        "match_or_create_person": match,
        "publish_report": published,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--pg-url", default=many_people.DEFAULT_PG)
    args = parser.parse_args()
    for kind in args.db.split(","):
        small = measure(kind, SMALL, args.rounds, args.pg_url)
        large = measure(kind, args.people, args.rounds, args.pg_url)
        print(f"{kind}: medians, {SMALL:,} vs {args.people:,} people, {args.rounds} rounds")
        for label in small:
            print(
                f"  {label}: {small[label]:.2f} ms -> {large[label]:.2f} ms, "
                f"ratio {large[label] / small[label]:.2f}x"
            )
        verdict = "within" if large["possible_duplicates"] <= TARGET_DUPLICATES_MS else "OVER"
        print(f"  possible_duplicates {verdict} the {TARGET_DUPLICATES_MS:.0f} ms target")
        ratio = large["publish_report"] / small["publish_report"]
        verdict = "within" if ratio <= TARGET_PUBLISH_RATIO else "OVER"
        print(
            f"  publish_report ratio {ratio:.2f}x: {verdict} the {TARGET_PUBLISH_RATIO:.0f}x target"
        )


if __name__ == "__main__":
    main()
