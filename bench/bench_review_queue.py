"""The review queue with 100,000 undecided NEEDS_REVIEW runs in one incident (issue 24).

Besides them the incident holds 20,000 runs decided COMPLETED, 10,000 NEEDS_REVIEW runs a
person has decided on and 10,000 runs superseded by a newer run of their report, so the
queue's rule has something to leave out. Runs are built by the investigation's own row
builder (``evidence_store.run_from_result``, which stores the decision) and their queue
flag is set by its own statement (``evidence_store.refresh_awaiting``); the bulk rows go in
with Core inserts. A real uvicorn server on 127.0.0.1, a temporary SQLite database.

Prints the median of the Reviews page (first page, 20 items, its exact total included),
of the JSON queue (``limit=20``) and of the domain call alone, each against
``/static/trace.css`` from the same server in the same run; the target is <= 50 ms for the
page. The total is checked against what was inserted.

    .venv/bin/python bench/bench_review_queue.py [--rounds 30] [--undecided 100000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from sqlalchemy import insert, select

from signin import admin_headers
from timing import median_ms
from trace_app.investigation import evidence_store, review_queue
from trace_app.investigation.outcome import Citation, InvestigationResult, UsageTotals
from trace_app.investigation.rules import RULES_VERSION
from trace_app.investigation.vocabulary import Mode, Status
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.store.models import (
    Incident,
    InvestigationRun,
    Organization,
    Person,
    Report,
    ReviewDecision,
)
from trace_app.store.types import new_id
from trace_app.web.app import create_app

COMPLETED = 20_000
DECIDED = 10_000
SUPERSEDED = 10_000
START = datetime(2026, 8, 1, tzinfo=UTC)
UNCLEAR_REASON = "The model could not tell where the information came from."
FIRST_HAND_REASON = "The report reads as first-hand."


def run_row(incident_id: str, report: dict[str, Any], n: int, status: Status) -> dict[str, Any]:
    """One saved run's columns, as the investigation's row builder writes them."""
    result = InvestigationResult(
        report_id=report["id"],
        status=status,
        reason=UNCLEAR_REASON
        if status is Status.NEEDS_REVIEW
        else "The report reads as first-hand.",
        mode=Mode.LIVE,
        attribution="UNCLEAR" if status is Status.NEEDS_REVIEW else "DIRECT",
        referenced_source="NONE",
        model="bench-model",
        prompt_version="bench-v1",
        run_at=START + timedelta(hours=1, seconds=n),
        usage=UsageTotals(estimated_tokens=300),
        citations=(
            Citation(
                role="report",
                report_id=report["id"],
                source="Bench Org",
                excerpt=report["original_text"],
                reported_at=START.isoformat(),
            ),
        ),
        fingerprint=f"bench-{n}",
        rules_version=RULES_VERSION,
    )
    row = evidence_store.run_from_result(incident_id, result)
    return {c.key: getattr(row, c.key) for c in InvestigationRun.__table__.columns}


def fill(db: Database, incident_id: str, undecided: int) -> tuple[int, float]:
    """The bench incident; returns the queue's expected total (the demo's own waiting runs
    and the undecided ones) and the seconds it took."""
    with db.sessions() as s:
        already = review_queue.review_queue(s, incident_id, offset=0, limit=1).total
        s.commit()
    started = time.perf_counter()
    total_reports = undecided + COMPLETED + DECIDED + SUPERSEDED
    with db.session() as s:
        org = {"id": new_id("org"), "name": "Bench Org", "name_key": "bench org"}
        s.execute(insert(Organization), [org])
        offset = s.scalar(select(Report.position).order_by(Report.position.desc())) or 0
        people, reports = [], []
        for i in range(total_reports):
            person = {
                "id": new_id("per"),
                "incident_id": incident_id,
                "name": f"Bench Person {i:06d}",
                "name_key": f"bench person {i:06d}",
            }
            people.append(person)
            reports.append(
                {
                    "id": new_id("rep"),
                    "incident_id": incident_id,
                    "organization_id": org["id"],
                    "person_id": person["id"],
                    "summary": f"Bench report {i}",
                    "original_text": f"{person['name']}, tent {i % 400}.",
                    "reported_at": START + timedelta(seconds=i),
                    "references": [],
                    "person_name": person["name"],
                    "status": "seen",
                    "published_at": START + timedelta(seconds=i),
                    "position": offset + i + 1,
                }
            )
        s.execute(insert(Person), people)
        s.execute(insert(Report), reports)
        # the four kinds, shuffled through the incident (the same order every run)
        kinds = ["undecided"] * undecided + ["completed"] * COMPLETED
        kinds += ["decided"] * DECIDED + ["superseded"] * SUPERSEDED
        random.Random(24).shuffle(kinds)
        runs, decisions = [], []
        for i, (report, kind) in enumerate(zip(reports, kinds, strict=True)):
            status = Status.COMPLETED if kind == "completed" else Status.NEEDS_REVIEW
            runs.append(run_row(incident_id, report, i, status))
            if kind == "decided":
                decisions.append(
                    {
                        "id": new_id("rev"),
                        "incident_id": incident_id,
                        "report_id": report["id"],
                        "run_id": runs[-1]["id"],
                        "sequence": 1,
                        "decision": "not_reliable",
                        "note": "bench",
                        "decided_at": START,
                        "decided_by": "bench",
                    }
                )
            elif kind == "superseded":  # a newer run decided COMPLETED is the one shown
                runs.append(run_row(incident_id, report, total_reports + i, Status.COMPLETED))
        s.execute(insert(InvestigationRun), runs)
        s.execute(insert(ReviewDecision), decisions)
        evidence_store.refresh_awaiting(s, [r["id"] for r in reports])
    return already + undecided, time.perf_counter() - started


def timed(client: httpx.Client, path: str) -> float:
    t0 = time.perf_counter()
    response = client.get(path)
    elapsed = time.perf_counter() - t0
    if response.status_code != 200:
        raise SystemExit(f"{path} answered {response.status_code}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--undecided", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / ".trace-local"
        settings = TraceSettings(
            home=home, database_url=f"sqlite:///{home / 'trace.db'}", demo=True
        )
        app = create_app(settings)
        db: Database = app.state.db
        with db.sessions() as s:
            incident_id = s.scalars(select(Incident.id)).one()
        expected, setup_s = fill(db, incident_id, args.undecided)
        headers = admin_headers(db)

        with db.sessions() as s:
            page = review_queue.review_queue(s, incident_id, offset=0, limit=20)
            assert page.total == expected, (page.total, expected)
            assert len(page.items) == 20
            assert all(i.result.status is Status.NEEDS_REVIEW for i in page.items)

            def domain() -> object:
                return review_queue.review_queue(s, incident_id, offset=0, limit=20)

            domain_ms = median_ms(domain, args.rounds)

        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        html = f"/incidents/{incident_id}/reviews"
        api = f"/api/incidents/{incident_id}/reviews?limit=20"
        static = "/static/trace.css"
        samples: dict[str, list[float]] = {html: [], api: [], static: []}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30, headers=headers) as c:
            assert c.get(api).json()["total"] == expected
            assert f'<span class="count">{expected}</span>' in c.get(html).text
            for path in samples:  # warm up
                timed(c, path)
            for _ in range(args.rounds):
                for path in samples:
                    samples[path].append(timed(c, path))
        server.should_exit = True
        thread.join(timeout=10)

    medians = {path: statistics.median(values) * 1000 for path, values in samples.items()}
    base = medians[static]
    print(
        f"data: {expected:,} undecided NEEDS_REVIEW runs, {COMPLETED:,} COMPLETED, "
        f"{DECIDED:,} decided by a person, {SUPERSEDED:,} superseded (+ demo seed); "
        f"setup {setup_s:.1f} s; total checked exact: {expected:,}"
    )
    print(f"static {static}: median {base:.2f} ms over {args.rounds} requests")
    print(f"domain review_queue(limit=20): median {domain_ms:.2f} ms")
    print(f"JSON queue (limit=20): median {medians[api]:.2f} ms, ratio {medians[api] / base:.2f}x")
    verdict = "within" if medians[html] <= 50 else "ABOVE"
    print(
        f"RESULT Reviews page (20 items + exact total): median {medians[html]:.2f} ms, "
        f"ratio {medians[html] / base:.2f}x to the static file ({verdict} the 50 ms target)"
    )


if __name__ == "__main__":
    main()
