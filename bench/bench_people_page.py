"""People page latency with 10,000 reports and 5,000 people, against a static file of the
same server in the same run.

Prints the median latency of ``/incidents/{id}/people`` (first page and a middle page,
50 people per page) divided by the median latency of ``/static/trace.css``; the target
is at most 5x. A real uvicorn server on 127.0.0.1 and a temporary SQLite database; the
bulk data is inserted with Core statements, shaped like what publish_report writes.

    .venv/bin/python bench/bench_people_page.py [--rounds 40]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import uvicorn
from sqlalchemy import insert, select

from signin import admin_headers
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.store.models import Alert, Claim, ClaimStatus, Incident, Organization, Person, Report
from trace_app.store.types import new_id
from trace_app.web.app import create_app

PEOPLE = 5_000
REPORTS = 10_000


def fill(db: Database, incident_id: str) -> None:
    start = datetime(2026, 8, 1, tzinfo=UTC)
    statuses = [s.value for s in ClaimStatus]
    with db.session() as s:
        orgs = [
            {"id": new_id("org"), "name": f"Bench Org {i}", "name_key": f"bench org {i}"}
            for i in range(20)
        ]
        s.execute(insert(Organization), orgs)
        offset = s.scalar(select(Report.position).order_by(Report.position.desc())) or 0
        people = [
            {
                "id": new_id("per"),
                "incident_id": incident_id,
                "name": f"Bench Person {i:05d}",
                "name_key": f"bench person {i:05d}",
                "age": i % 90,
            }
            for i in range(PEOPLE)
        ]
        s.execute(insert(Person), people)
        reports, claims, alerts = [], [], []
        for i in range(REPORTS):
            person = people[i % PEOPLE]
            status = statuses[i % len(statuses)]
            position = offset + i + 1
            when = start + timedelta(minutes=i)
            report_id, claim_id = new_id("rep"), new_id("clm")
            reports.append(
                {
                    "id": report_id,
                    "incident_id": incident_id,
                    "organization_id": orgs[i % len(orgs)]["id"],
                    "person_id": person["id"],
                    "summary": f"Bench report {i} about {person['name']}",
                    "original_text": f"Bench report text number {i}. " * 8,
                    "reported_at": when,
                    "references": [f"ref-{i}"],
                    "person_name": person["name"],
                    "person_age": person["age"],
                    "status": status,
                    "location": f"Place {i % 37}",
                    "published_at": when,
                    "position": position,
                }
            )
            claims.append(
                {
                    "id": claim_id,
                    "incident_id": incident_id,
                    "person_id": person["id"],
                    "report_id": report_id,
                    "status": status,
                    "location": f"Place {i % 37}",
                    "position": position,
                }
            )
            if status == "missing":
                alerts.append(
                    {
                        "id": new_id("alr"),
                        "incident_id": incident_id,
                        "person_id": person["id"],
                        "claim_id": claim_id,
                        "state": "open",
                        "raised_at": when,
                        "position": position,
                    }
                )
        s.execute(insert(Report), reports)
        s.execute(insert(Claim), claims)
        s.execute(insert(Alert), alerts)


def timed(client: httpx.Client, path: str) -> float:
    t0 = time.perf_counter()
    response = client.get(path)
    elapsed = time.perf_counter() - t0
    if response.status_code != 200:
        raise SystemExit(f"{path} answered {response.status_code}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / ".trace-local"
        settings = TraceSettings(
            home=home, database_url=f"sqlite:///{home / 'trace.db'}", demo=True
        )
        t0 = time.perf_counter()
        app = create_app(settings)
        db: Database = app.state.db
        with db.sessions() as s:
            incident_id = s.scalars(select(Incident.id)).one()
        fill(db, incident_id)
        headers = admin_headers(db)
        setup_s = time.perf_counter() - t0

        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        base = f"http://127.0.0.1:{port}"
        first_page = f"/incidents/{incident_id}/people"
        middle_page = f"/incidents/{incident_id}/people?page=50"
        static = "/static/trace.css"
        samples: dict[str, list[float]] = {first_page: [], middle_page: [], static: []}
        with httpx.Client(base_url=base, timeout=30, headers=headers) as client:
            page = client.get(first_page).text
            people_total = page.count('class="person"')
            for path in samples:  # warm up
                timed(client, path)
            for _ in range(args.rounds):
                for path in samples:
                    samples[path].append(timed(client, path))
        server.should_exit = True
        thread.join(timeout=10)

    medians = {path: statistics.median(values) for path, values in samples.items()}
    base_ms = medians[static] * 1000
    print(
        f"data: {REPORTS:,} bench reports, {PEOPLE:,} bench people (+ demo seed); "
        f"setup {setup_s:.1f} s; {people_total} people rendered per page"
    )
    print(f"static {static}: median {base_ms:.2f} ms over {args.rounds} requests")
    worst = 0.0
    for path in (first_page, middle_page):
        ratio = medians[path] / medians[static]
        worst = max(worst, ratio)
        print(
            f"people {path.split('/people')[1] or '(page 1)'}: median "
            f"{medians[path] * 1000:.2f} ms, ratio {ratio:.2f}x"
        )
    verdict = "within" if worst <= 5 else "ABOVE"
    print(f"RESULT people/static median ratio: {worst:.2f}x ({verdict} the 5x target)")


if __name__ == "__main__":
    main()
