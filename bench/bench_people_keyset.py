"""A deep page of the incident's people listing by OFFSET against the same page by keyset
(ADR 0086), on SQLite or PostgreSQL, in one run.

Writes ``--people`` generated people (default 100,000; ``many_people``) into one
incident, then times, as medians over ``--rounds``, the page at ``--depth`` of the list
(default 0.9: page 1,801 of 2,000 at 50 a page) read both ways, and the first page:

- the whole page function (``people_queries.people_page`` with an offset, against
  ``people_queries.people_page_after`` with the cursor of the page before): the exact total
  (``count(*)``), the rows, the groups and the claims;
- the rows statement alone (OFFSET against the range after the cursor), which is what
  keyset paging changes; the total is counted the same way by both.

Both reads are checked to give the same people. Prints each median and the ratio
OFFSET / keyset for each.

    .venv/bin/python bench/bench_people_keyset.py [--people 100000] [--rounds 20]
        [--depth 0.9] [--db sqlite|postgres] [--pg-url URL]
"""

from __future__ import annotations

import argparse
import time
from contextlib import AbstractContextManager

import many_people
from timing import median_ms
from trace_app.domain import people_cursor, people_queries, queries
from trace_app.store.db import Database

LIMIT = queries.PEOPLE_PER_PAGE


def database(kind: str, pg_url: str) -> AbstractContextManager[Database]:
    return many_people.migrated_database(kind, pg_url, "keyset")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--people", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--depth", type=float, default=0.9)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--pg-url", default=many_people.DEFAULT_PG)
    args = parser.parse_args()
    with database(args.db, args.pg_url) as db:
        started = time.perf_counter()
        incident_id = many_people.fill(db.engine, args.people)
        print(f"{args.db}: {args.people:,} people written in {time.perf_counter() - started:.0f} s")
        deep = int(args.people * args.depth) // LIMIT * LIMIT
        with db.sessions() as s:
            before = people_queries.people_page(s, incident_id, offset=deep - LIMIT, limit=LIMIT)
            after = before.next_after
            assert after is not None
            cursor = people_cursor.decode(after)
            by_offset = people_queries.people_page(s, incident_id, offset=deep, limit=LIMIT)
            by_key = people_queries.people_page_after(s, incident_id, after=after, limit=LIMIT)
            assert [p.id for p in by_offset.items] == [p.id for p in by_key.items]
            assert by_key.offset == deep and len(by_key.items) == LIMIT
            offset_rows = {"incident_id": incident_id, "offset": deep, "limit": LIMIT + 1}
            key_rows = {
                "incident_id": incident_id,
                "name_key": cursor.name_key,
                "id": cursor.id,
                "limit": LIMIT + 1,
            }
            count = {"incident_id": incident_id}
            timings = {
                "first page (page function)": median_ms(
                    lambda: people_queries.people_page(s, incident_id, limit=LIMIT), args.rounds
                ),
                "deep page, OFFSET (page function)": median_ms(
                    lambda: people_queries.people_page(s, incident_id, offset=deep, limit=LIMIT),
                    args.rounds,
                ),
                "deep page, keyset (page function)": median_ms(
                    lambda: people_queries.people_page_after(
                        s, incident_id, after=after, limit=LIMIT
                    ),
                    args.rounds,
                ),
                "deep page, OFFSET (rows statement)": median_ms(
                    lambda: s.execute(people_queries._PEOPLE_ROWS, offset_rows).all(), args.rounds
                ),
                "deep page, keyset (rows statement)": median_ms(
                    lambda: s.execute(people_queries._PEOPLE_AFTER, key_rows).all(), args.rounds
                ),
                "exact total (count statement)": median_ms(
                    lambda: s.scalar(people_queries._COUNT_PEOPLE, count), args.rounds
                ),
            }
    page = deep // LIMIT + 1
    pages = -(-args.people // LIMIT)
    print(f"page {page:,} of {pages:,} ({LIMIT} a page), medians of {args.rounds} rounds:")
    for name, ms in timings.items():
        print(f"  {name:<36} {ms:9.2f} ms")
    whole = (
        timings["deep page, OFFSET (page function)"] / timings["deep page, keyset (page function)"]
    )
    rows = (
        timings["deep page, OFFSET (rows statement)"]
        / timings["deep page, keyset (rows statement)"]
    )
    print(f"RESULT {args.db} {args.people:,} people, page {page:,}: OFFSET / keyset")
    print(f"  page function {whole:.1f}x, rows statement {rows:.1f}x")


if __name__ == "__main__":
    main()
