"""The person page of a linked group (5 records decided "same", 50 claims in all) against
the plain person page (one record with the same 50 claims), in the same run.

Both are ``GET /people/{id}`` through the app over HTTP (an in-process ASGI client,
``fastapi.testclient``, signed in with a bearer token), so the time includes the routing,
the access check, :func:`trace_app.domain.person_view.person_detail`, the saved
investigation results and the rendering. The incident also holds 1,000 other people.
Prints both medians and their ratio; the target is at most 2x.

    .venv/bin/python bench/bench_person_group.py [--rounds 40]
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import insert

from signin import BENCH, admin_headers
from timing import median_ms
from trace_app.domain.links import decide_link
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_reports
from trace_app.domain.search import people_search_key
from trace_app.domain.text import name_key
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.store.models import ClaimStatus, Incident, LinkDecision, Person
from trace_app.store.types import new_id
from trace_app.web.app import create_app

CLAIMS = 50
RECORDS = 5
OTHERS = 1_000
SPELLINGS = ["Sunita Rai", "सुनिता राई", "Sunitha Rai", "Suneeta Rai", "Sunita Raai"]
STATUSES = [ClaimStatus.MISSING, ClaimStatus.SEEN, ClaimStatus.MISSING, ClaimStatus.SAFE]
START = datetime(2026, 8, 1, tzinfo=UTC)


def _reports(incident_id: str, people: list[tuple[str, str]]) -> list[PublishReportInput]:
    """CLAIMS reports spread over ``people`` (id, name), from four sources."""
    return [
        PublishReportInput(
            incident_id=incident_id,
            source=f"Bench Source {i % 4}",
            summary=f"Bench report {i}",
            original_text=f"A volunteer's note number {i} about the person.",
            reported_at=START + timedelta(minutes=17 * i),
            person=PersonInput(
                name=people[i % len(people)][1], person_id=people[i % len(people)][0]
            ),
            status=STATUSES[i % len(STATUSES)],
            location="Bench camp",
        )
        for i in range(CLAIMS)
    ]


def fill(db: Database) -> tuple[str, str]:
    """The incident's people; returns (a group record's id, the plain record's id)."""
    incident_id = new_id("inc")
    group = [(new_id("per"), name) for name in SPELLINGS[:RECORDS]]
    plain = (new_id("per"), "Plain Bench Person")
    others = [(new_id("per"), f"Other Bench Person {i}") for i in range(OTHERS)]
    with db.session() as s:
        s.add(Incident(id=incident_id, name="Bench Group Incident"))
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
                    "age": 30,
                }
                for pid, name in [*group, plain, *others]
            ],
        )
        publish_reports(s, _reports(incident_id, group))
        publish_reports(s, _reports(incident_id, [plain]))
        for (first, _), (other, _) in itertools.pairwise(group):
            decide_link(s, first, other, LinkDecision.SAME, "bench: the same woman", actor=BENCH)
    return group[0][0], plain[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        settings = TraceSettings(home=home, database_url=f"sqlite:///{home / 'trace.db'}")
        app = create_app(settings)
        db: Database = app.state.db
        group_id, plain_id = fill(db)
        headers = admin_headers(db)
        with TestClient(app, base_url="http://localhost") as client:

            def get(person_id: str) -> None:
                page = client.get(f"/people/{person_id}", headers=headers)
                assert page.status_code == 200, page.text[:300]

            group_page = client.get(f"/people/{group_id}", headers=headers).text
            assert (
                group_page.count('id="claim-') == CLAIMS and "One person, 5 records" in group_page
            )
            plain_page = client.get(f"/people/{plain_id}", headers=headers).text
            assert plain_page.count('id="claim-') == CLAIMS
            plain_ms = median_ms(lambda: get(plain_id), rounds)
            group_ms = median_ms(lambda: get(group_id), rounds)
        db.dispose()
    print(
        f"person page over HTTP (TestClient), {CLAIMS} claims, {OTHERS:,} other people, "
        f"rounds: {rounds}"
    )
    print(f"  plain record: {plain_ms:.1f} ms")
    print(f"  group of {RECORDS} linked records: {group_ms:.1f} ms")
    print(f"  ratio group / plain: {group_ms / plain_ms:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
