"""The search's ``status`` filter by the person's linked group (ADR 0160) against the
filter it replaced (each record's own latest claim), at 100,000 people, in the same run.

The corpus is ``many_people``'s generated names (``--people``, default 100,000) in one
incident; each person gets 1 to 3 claims (a report each, statuses drawn at random, from
four sources), and one record in ten (``--grouped``) is in a linked group of two or three
(``people.group_id`` written as the decisions would). Each measured call is
:func:`trace_app.domain.search.search_results`, once with the group's status (today's
code) and once with the old expression swapped in, alternating round by round so that
both see the same load; then the filter's SQL alone (a count of the filtered people).
Prints each median and the ratio group / record; the target is at most 1.2x.

    .venv/bin/python bench/bench_group_status_filter.py [--people 100000] [--rounds 15]
        [--db sqlite,postgres] [--analyze] [--with-query-only] [--grouped 0.1]
        [--pg-url postgresql+psycopg://postgres@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ScalarSelect, func, insert, select, update
from sqlalchemy.orm import Session

import many_people
from trace_app.domain import search, status_rule
from trace_app.store.db import Database
from trace_app.store.models import Claim, ClaimStatus, Organization, Person, Report
from trace_app.store.types import new_id

TARGET_RATIO = 1.2
START = datetime(2026, 8, 1, tzinfo=UTC)
# (query, status): a filter alone lists every person with that status (natural order);
# with a query, the candidates the index finds are filtered in the same SQL
CASES = (
    ("", "missing"),
    ("", "safe"),
    ("sunita rai", "missing"),
    ("ra", "seen"),
    ("Sunitta", "safe"),
)


def record_status_before() -> ScalarSelect[str]:
    """The filter as it was before ADR 0160 (search._latest_status): the record's own
    latest claim, by reported time, then publication order."""
    return (
        select(Claim.status)
        .join(Report, Report.id == Claim.report_id)
        .where(Claim.person_id == Person.id)
        .order_by(Report.reported_at.desc(), Claim.position.desc())
        .limit(1)
        .scalar_subquery()
    )


def database(kind: str, pg_url: str) -> AbstractContextManager[Database]:
    return many_people.migrated_database(kind, pg_url, "groups")


def add_claims_and_groups(
    db: Database, incident_id: str, seed: int = 11, analyze: bool = False, share: float = 0.1
) -> tuple[int, int]:
    """1-3 claims a person and groups of 2-3 records for one person in ten; returns the
    counts of claims and grouped records."""
    rng = random.Random(seed)
    with db.engine.begin() as conn:
        ids = list(
            conn.scalars(
                select(Person.id).where(Person.incident_id == incident_id).order_by(Person.id)
            )
        )
        sources = [new_id("org") for _ in range(4)]
        conn.execute(
            insert(Organization.__table__),  # type: ignore[arg-type]
            [
                {"id": o, "name": f"Bench Org {i}", "name_key": f"bench org {i} {o}"}
                for i, o in enumerate(sources)
            ],
        )
        reports: list[dict[str, Any]] = []
        claims: list[dict[str, Any]] = []
        position = 0

        def flush() -> None:
            conn.execute(insert(Report.__table__), reports)  # type: ignore[arg-type]
            conn.execute(insert(Claim.__table__), claims)  # type: ignore[arg-type]
            reports.clear()
            claims.clear()

        count = 0
        for pid in ids:
            for _ in range(rng.randint(1, 3)):
                position += 1
                status = rng.choice(list(ClaimStatus)).value
                report_id = new_id("rep")
                at = START + timedelta(minutes=rng.randint(0, 60 * 24 * 10))
                reports.append(
                    {
                        "id": report_id,
                        "incident_id": incident_id,
                        "organization_id": rng.choice(sources),
                        "person_id": pid,
                        "summary": "bench",
                        "original_text": "bench",
                        "reported_at": at,
                        "references": [],
                        "person_name": "bench",
                        "status": status,
                        "location": "",
                        "published_at": at,
                        "position": position,
                    }
                )
                claims.append(
                    {
                        "id": new_id("clm"),
                        "incident_id": incident_id,
                        "person_id": pid,
                        "report_id": report_id,
                        "status": status,
                        "location": "",
                        "position": position,
                    }
                )
                count += 1
            if len(reports) >= 10_000:
                flush()
        if reports:
            flush()
        grouped = 0
        shuffled = list(ids)
        rng.shuffle(shuffled)
        taken = 0
        while grouped < len(ids) * share:
            size = rng.randint(2, 3)
            members = sorted(shuffled[taken : taken + size])
            taken += size
            grouped += len(members)
            conn.execute(update(Person).where(Person.id.in_(members)).values(group_id=members[0]))
    # PostgreSQL: what autovacuum gathers within minutes; SQLite: none unless asked, as
    # Trace leaves a deployment (statistics gathered before the groups existed, when
    # every group_id was null, make SQLite scan people for a group's records)
    if db.engine.dialect.name == "postgresql":
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            for table in ("people", "reports", "claims"):
                conn.exec_driver_sql(f"VACUUM (ANALYZE) {table}")
    elif analyze:
        with db.engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
    return count, grouped


def interleaved(calls: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median milliseconds of each call, the calls alternating round by round (one
    warm-up each)."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for call in calls.values():
        call()
    for _ in range(rounds):
        for name, call in calls.items():
            started = time.perf_counter()
            call()
            times[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(found) for name, found in times.items()}


def measure(
    kind: str,
    people: int,
    rounds: int,
    pg_url: str,
    analyze: bool,
    cases: list[tuple[str, str]],
    share: float = 0.1,
) -> None:
    with database(kind, pg_url) as db:
        started = time.perf_counter()
        incident_id = many_people.fill(db.engine, people, analyze=False)
        claims, grouped = add_claims_and_groups(db, incident_id, analyze=analyze, share=share)
        print(
            f"{kind}: {people:,} people, {claims:,} claims, {grouped:,} records in groups, "
            f"written in {time.perf_counter() - started:.0f} s"
            + (", SQLite statistics gathered" if analyze and kind == "sqlite" else "")
        )
        group_sql = status_rule.group_status_sql
        with Session(db.engine) as s:

            def call(q: str, status: str, by_group: bool) -> Callable[[], object]:
                def run() -> object:
                    status_rule.group_status_sql = group_sql if by_group else record_status_before
                    try:
                        return search.search_results(s, incident_id, q=q, status=status)
                    finally:
                        status_rule.group_status_sql = group_sql

                return run

            def sql_only(status: str, by_group: bool) -> Callable[[], object]:
                expression = group_sql() if by_group else record_status_before()
                counting = (
                    select(func.count())
                    .select_from(Person)
                    .where(Person.incident_id == incident_id, expression == status)
                )
                return lambda: s.execute(counting).scalar()

            worst = 0.0
            for q, status in cases:
                found = {
                    by: len(call(q, status, by == "group")().matches)  # type: ignore[attr-defined]
                    for by in ("record", "group")
                }
                medians = interleaved(
                    {"record": call(q, status, False), "group": call(q, status, True)}, rounds
                )
                ratio = medians["group"] / medians["record"]
                worst = max(worst, ratio)
                print(
                    f"  search_results(q={q!r}, status={status!r}): "
                    f"record {medians['record']:.1f} ms ({found['record']:,} found), "
                    f"group {medians['group']:.1f} ms ({found['group']:,} found), "
                    f"ratio {ratio:.2f}x"
                )
            for status in ("missing", "safe") if len(cases) == len(CASES) else ():
                medians = interleaved(
                    {"record": sql_only(status, False), "group": sql_only(status, True)}, rounds
                )
                ratio = medians["group"] / medians["record"]
                print(
                    f"  the filter's SQL alone (count, status={status!r}): "
                    f"record {medians['record']:.1f} ms, group {medians['group']:.1f} ms, "
                    f"ratio {ratio:.2f}x"
                )
            verdict = "within" if worst <= TARGET_RATIO else "OVER"
            print(f"  worst search_results ratio {worst:.2f}x ({verdict} {TARGET_RATIO}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--db", default="sqlite")
    parser.add_argument("--pg-url", default=many_people.DEFAULT_PG)
    parser.add_argument("--analyze", action="store_true", help="SQLite: gather statistics")
    parser.add_argument(
        "--grouped", type=float, default=0.1, help="the share of records in linked groups"
    )
    parser.add_argument(
        "--with-query-only",
        action="store_true",
        help="only the searches with a name (the filter alone reads every person: seconds)",
    )
    args = parser.parse_args()
    for kind in args.db.split(","):
        cases = [c for c in CASES if c[0]] if args.with_query_only else list(CASES)
        measure(kind, args.people, args.rounds, args.pg_url, args.analyze, cases, args.grouped)


if __name__ == "__main__":
    main()
