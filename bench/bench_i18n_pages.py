"""Page time translated against English (issue 42), in one run.

Renders the seeded demo's main pages (Incidents, People, a search, a person, a report with
its Investigate panel, Reviews, Publish) through the app in this process, by an admin's
bearer token, in English and in Nepali and Arabic (``Accept-Language``), interleaved round
by round so that all see the same machine. Time is the process's CPU time (the client,
the app and its database, all in this process), so other work on a shared machine moves
it less than the wall clock. Prints, per language, the median and the best time of one
pass over the pages, and the ratio to English: the median of the rounds'
ratios and the ratio of the best passes (the machine's own cost, least disturbed by other
load); the target is at most 1.05x.

    .venv/bin/python bench/bench_i18n_pages.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import select

from signin import admin_headers
from trace_app.settings import TraceSettings
from trace_app.store.models import Incident, Person, Report
from trace_app.web.app import create_app

LANGUAGES = ("en", "ne", "ar")


def pages(app: object) -> list[str]:
    db = app.state.db  # type: ignore[attr-defined]
    with db.sessions() as session:
        incident = session.scalars(
            select(Incident).where(Incident.name == "Flood Relief Demo")
        ).one()
        person = session.scalars(select(Person).where(Person.incident_id == incident.id)).first()
        report = session.scalars(select(Report).where(Report.incident_id == incident.id)).first()
        assert person is not None and report is not None
    return [
        "/",
        f"/incidents/{incident.id}/people",
        f"/incidents/{incident.id}/people?q=Sunitta",
        f"/people/{person.id}",
        f"/reports/{report.id}",
        f"/incidents/{incident.id}/reviews",
        f"/publish?incident_id={incident.id}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        settings = TraceSettings(
            home=home,
            database_url=f"sqlite:///{home / 'trace.db'}",
            demo=True,
            recorded_investigations=Path(tmp) / "none.json",
        )
        app = create_app(settings)
        headers = admin_headers(app.state.db)
        paths = pages(app)
        times: dict[str, list[float]] = {lang: [] for lang in LANGUAGES}
        with TestClient(app, base_url="http://localhost") as client:
            for lang in LANGUAGES:  # warm: templates compiled, catalogues read
                for path in paths:
                    answer = client.get(path, headers={**headers, "accept-language": lang})
                    assert answer.status_code == 200, (path, answer.status_code)
                    assert f'<html lang="{lang}"' in answer.text
            for round_number in range(args.rounds):
                order = LANGUAGES if round_number % 2 == 0 else tuple(reversed(LANGUAGES))
                for lang in order:
                    start = time.process_time()
                    for path in paths:
                        client.get(path, headers={**headers, "accept-language": lang})
                    times[lang].append(time.process_time() - start)
    print(f"pages per pass: {len(paths)}; rounds: {args.rounds}")
    for lang in LANGUAGES:
        median, best = statistics.median(times[lang]), min(times[lang])
        print(f"{lang}: pass median {median * 1000:.1f} ms, best {best * 1000:.1f} ms")
    # each round ran every language back to back: its ratio sees the same machine load
    for lang in LANGUAGES[1:]:
        ratios = [t / e for t, e in zip(times[lang], times["en"], strict=True)]
        best = min(times[lang]) / min(times["en"])
        print(
            f"ratio {lang} / en: median of rounds {statistics.median(ratios):.3f}x, "
            f"best passes {best:.3f}x (target <= 1.05x)"
        )


if __name__ == "__main__":
    main()
