"""The review queue in priority order against today's order (oldest run first), at 100,000
undecided runs in one incident (issue 40, item 5; ADR 0150).

Besides them the incident holds 20,000 runs decided COMPLETED and 10,000 NEEDS_REVIEW runs
a person has decided on. One report in ten is about a child and one in ten about an older
person; two people in 100 have an open alert (``--alert-every``); a third of the runs relay
a source; 500 reviews are assigned to one account; four organisations. Runs are built by
the investigation's own row builder (via ``bench_review_queue.run_row``) and go in with
Core inserts, so their queue keys are unset and the first read sets them (timed once).

Prints the median of the domain call (page 1, 20 items and the exact total) for today's
order (``evidence_store.awaiting_count`` and ``awaiting_runs``, what the queue read
before) and the new one, their ratio, the same for a deep page and each filter, and the
query plans of the new statements (``EXPLAIN QUERY PLAN`` on SQLite, ``EXPLAIN`` on
PostgreSQL).

    .venv/bin/python bench/bench_review_queue_priority.py [--rounds 30] [--undecided 100000]
    .venv/bin/python bench/bench_review_queue_priority.py --postgres  # 127.0.0.1:5432/test
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event, insert, text

from bench_review_queue import run_row
from timing import median_ms
from trace_app.domain import reviews
from trace_app.investigation import evidence_store, review_queue
from trace_app.investigation.review_queue import QueueFilter, ReviewReason
from trace_app.investigation.vocabulary import Status
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.store.models import (
    Alert,
    Claim,
    Incident,
    InvestigationRun,
    Organization,
    Person,
    Report,
    ReviewAssignment,
    ReviewDecision,
)
from trace_app.store.types import new_id

COMPLETED = 20_000
DECIDED = 10_000
START = datetime(2026, 8, 1, tzinfo=UTC)
PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
ASSIGNEE = "bench-reviewer"


def fill(db: Database, undecided: int, alert_every: int) -> tuple[str, str]:
    """The bench incident; returns its id and one organisation's id."""
    total = undecided + COMPLETED + DECIDED
    with db.session() as s:
        incident = {"id": new_id("inc"), "name": "Bench Priority Incident"}
        s.execute(insert(Incident), [incident])
        orgs = [
            {"id": new_id("org"), "name": f"Bench Org {n}", "name_key": f"bench org {n}"}
            for n in range(4)
        ]
        s.execute(insert(Organization), orgs)
        people, reports, claims, alerts = [], [], [], []
        for i in range(total):
            age = 7 if i % 10 == 0 else 70 if i % 10 == 1 else 35
            person = {
                "id": new_id("per"),
                "incident_id": incident["id"],
                "name": f"Bench Person {i:06d}",
                "name_key": f"bench person {i:06d}",
                "age": age,
            }
            people.append(person)
            report = {
                "id": new_id("rep"),
                "incident_id": incident["id"],
                "organization_id": orgs[i % 4]["id"],
                "person_id": person["id"],
                "summary": f"Bench report {i}",
                "original_text": f"{person['name']}, tent {i % 400}.",
                "reported_at": START + timedelta(seconds=i),
                "references": [],
                "person_name": person["name"],
                "person_age": age,
                "status": "missing" if i % alert_every in (0, 2) else "seen",
                "published_at": START + timedelta(seconds=i),
                "position": i + 1,
            }
            reports.append(report)
            if i % alert_every in (0, 2):
                claim = {
                    "id": new_id("clm"),
                    "incident_id": incident["id"],
                    "person_id": person["id"],
                    "report_id": report["id"],
                    "status": "missing",
                    "position": i + 1,
                }
                claims.append(claim)
                alerts.append(
                    {
                        "id": new_id("alr"),
                        "incident_id": incident["id"],
                        "person_id": person["id"],
                        "claim_id": claim["id"],
                        "state": "open",
                        "raised_at": report["reported_at"],
                        "position": i + 1,
                    }
                )
        s.execute(insert(Person), people)
        s.execute(insert(Report), reports)
        s.execute(insert(Claim), claims)
        s.execute(insert(Alert), alerts)
        kinds = ["undecided"] * undecided + ["completed"] * COMPLETED + ["decided"] * DECIDED
        random.Random(40).shuffle(kinds)
        runs, decisions = [], []
        for i, (report, kind) in enumerate(zip(reports, kinds, strict=True)):
            status = Status.COMPLETED if kind == "completed" else Status.NEEDS_REVIEW
            row = run_row(incident["id"], report, i, status)
            if status is Status.NEEDS_REVIEW and i % 3 == 0:
                row["attribution"] = "RELAY"
            runs.append(row)
            if kind == "decided":
                decisions.append(
                    {
                        "id": new_id("rev"),
                        "incident_id": incident["id"],
                        "report_id": report["id"],
                        "run_id": row["id"],
                        "sequence": 1,
                        "decision": "not_reliable",
                        "note": "bench",
                        "decided_at": START,
                        "decided_by": "bench",
                    }
                )
        s.execute(insert(InvestigationRun), runs)
        s.execute(insert(ReviewDecision), decisions)
        evidence_store.refresh_awaiting(s, [r["id"] for r in reports])
        held = [r for r, k in zip(reports, kinds, strict=True) if k == "undecided"][::200]
        s.execute(
            insert(ReviewAssignment),
            [
                {
                    "report_id": r["id"],
                    "incident_id": incident["id"],
                    "assigned_to": ASSIGNEE,
                    "assigned_at": START,
                }
                for r in held
            ],
        )
    return incident["id"], orgs[1]["id"]


def todays_order(db: Database, incident_id: str, offset: int = 0) -> Any:
    """What the queue read before: a count and a page of the (incident, awaiting, run_at,
    id) index, then the page's decisions and results."""
    with db.sessions() as s:
        evidence_store.has_stale_runs(s, incident_id)
        total = evidence_store.awaiting_count(s, incident_id)
        runs = evidence_store.awaiting_runs(s, incident_id, offset=offset, limit=20)
        reviews.latest_reviews(s, [r.report_id for r in runs])
        return total, [evidence_store.result_from_run(r) for r in runs]


def priority_order(
    db: Database, incident_id: str, offset: int = 0, only: QueueFilter | None = None
) -> Any:
    with db.sessions() as s:
        return review_queue.review_queue(s, incident_id, offset=offset, limit=20, only=only)


@contextmanager
def statements(db: Database) -> Iterator[list[tuple[str, Any]]]:
    """The SELECTs run inside the block, with their parameters."""
    seen: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, sql: str, params: Any, _ctx: Any, _many: bool) -> None:
        if sql.lstrip().upper().startswith("SELECT"):
            seen.append((sql, params))

    event.listen(db.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", record)


def print_plans(db: Database, incident_id: str, only: QueueFilter | None, label: str) -> None:
    with statements(db) as seen:
        priority_order(db, incident_id, only=only)
    postgres = db.engine.dialect.name == "postgresql"
    print(f"\n--- query plans: {label} ({db.engine.dialect.name}) ---")
    with db.engine.connect() as conn:
        for sql, params in seen:
            if "investigation_runs" not in sql:
                continue
            explain = "EXPLAIN " if postgres else "EXPLAIN QUERY PLAN "
            raw = conn.exec_driver_sql(explain + sql, params).all()
            head = " ".join(sql.split())[:150]
            print(f"* {head}...")
            for row in raw:
                print("    " + (row[0] if postgres else str(row[-1])))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--undecided", type=int, default=100_000)
    parser.add_argument("--alert-every", type=int, default=100)
    parser.add_argument("--postgres", action="store_true", help=f"use {PG} (a fresh schema)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, database_url(tmp, args.postgres) as url:
        settings = TraceSettings(home=Path(tmp) / ".trace-local", database_url=url)
        db = Database.from_settings(settings)
        started = time.perf_counter()
        incident_id, org_id = fill(db, args.undecided, args.alert_every)
        setup_s = time.perf_counter() - started
        if db.engine.dialect.name == "postgresql":  # as autovacuum would after the load
            with db.engine.begin() as conn:
                conn.exec_driver_sql("ANALYZE")
        started = time.perf_counter()
        first = priority_order(db, incident_id)
        keys_s = time.perf_counter() - started
        before = todays_order(db, incident_id)
        assert first.total == before[0] == args.undecided, (first.total, before[0])
        assert [i.priority for i in first.items][:1] == [reviews.Priority.ALERT_CHILD_OR_OLDER]
        print(
            f"{db.engine.dialect.name}: {args.undecided:,} undecided runs, {COMPLETED:,} "
            f"COMPLETED, {DECIDED:,} decided; two people in {args.alert_every} with an open "
            f"alert; setup {setup_s:.1f} s; the first read set the queue keys of every run "
            f"in {keys_s:.2f} s (once)"
        )
        cases: list[tuple[str, Any, Any]] = [
            (
                "page 1",
                lambda: todays_order(db, incident_id),
                lambda: priority_order(db, incident_id),
            ),
            (
                "page 2,501 (offset 50,000)",
                lambda: todays_order(db, incident_id, 50_000),
                lambda: priority_order(db, incident_id, 50_000),
            ),
        ]
        for name, only in (
            ("organisation filter", QueueFilter(organization_id=org_id)),
            ("reason filter (relay)", QueueFilter(reason=ReviewReason.RELAY)),
            ("assigned to me (500)", QueueFilter(assigned_to=ASSIGNEE)),
        ):
            cases.append(
                (
                    name,
                    lambda: todays_order(db, incident_id),
                    lambda only=only: priority_order(db, incident_id, only=only),
                )
            )
        for name, today, new in cases:
            today_ms = median_ms(today, args.rounds)
            new_ms = median_ms(new, args.rounds)
            print(
                f"RESULT {name}: priority {new_ms:.2f} ms, today's order (page 1 unfiltered "
                f"for the filters) {today_ms:.2f} ms, ratio {new_ms / today_ms:.2f}x"
            )
        print_plans(db, incident_id, None, "page 1")
        print_plans(db, incident_id, QueueFilter(organization_id=org_id), "organisation filter")
        print_plans(db, incident_id, QueueFilter(assigned_to=ASSIGNEE), "assigned to me")
        db.dispose()


@contextmanager
def database_url(tmp: str, postgres: bool) -> Iterator[str]:
    if not postgres:
        yield f"sqlite:///{Path(tmp) / 'trace.db'}"
        return
    schema = f"bench_rq_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        # pg_trgm lives in a schema of its own here (tests/pg_trigram.py)
        yield f"{PG}?options=-csearch_path%3D{schema},trace_pg_trgm,public"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


if __name__ == "__main__":
    main()
