"""What authorisation costs a request, and what a sign-in's Argon2id costs.

The same request (``GET /api/incidents/{id}/people``, 50 people of 2,000, over a real
uvicorn server on 127.0.0.1 and SQLite) is timed three ways, interleaved round by round:
with a session cookie, with a bearer token, and with authorisation turned off (the
principal is fixed by a FastAPI dependency override, so no cookie or token is looked up;
the routes' permission and incident checks still run: a middleware puts the principal on
the request's state, where the route's gate looks first). It prints each median and the
ratio to "off"; the target is at most 1.1x.

It also prints the median time of one Argon2id hash and one check at the shipped cost
(RFC 9106: 3 passes over 64 MiB, 4 lanes): what each sign-in costs the server, on purpose.

    .venv/bin/python bench/bench_auth.py [--rounds 200]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from sqlalchemy import insert, select
from starlette.types import ASGIApp, Receive, Scope, Send

from signin import BENCH, admin_headers
from trace_app.accounts import passwords
from trace_app.accounts.permissions import Role
from trace_app.accounts.principal import MembershipView, Principal
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.store.models import Incident, Person
from trace_app.store.types import new_id
from trace_app.web.app import create_app

PEOPLE = 2_000
PASSWORD = "a bench passphrase of some length"


def fill(db: Database, incident_id: str) -> None:
    with db.session() as s:
        s.execute(
            insert(Person),
            [
                {
                    "id": new_id("per"),
                    "incident_id": incident_id,
                    "name": f"Bench Person {i:05d}",
                    "name_key": f"bench person {i:05d}",
                    "age": i % 90,
                }
                for i in range(PEOPLE)
            ],
        )


def session_cookie(base: str, db: Database) -> dict[str, str]:
    from trace_app.accounts.users import NewMembership, create_user
    from trace_app.domain.audit import require_audit

    with require_audit(db.sessions()) as session:
        create_user(session, BENCH, "bench-browser", PASSWORD, NewMembership("viewer", "Camp"))
        session.commit()
    with httpx.Client(base_url=base) as client:
        client.get("/login")
        token = client.cookies["trace_csrf"]
        response = client.post(
            "/login", data={"name": "bench-browser", "password": PASSWORD, "csrf_token": token}
        )
        assert response.status_code == 303, response.text
        return {"Cookie": f"trace_session={client.cookies['trace_session']}"}


def argon2_ms(rounds: int) -> tuple[float, float]:
    passwords.use_cost(passwords.DEFAULT_COST)
    stored = passwords.hash_password(PASSWORD)
    hashes, checks = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        passwords.hash_password(PASSWORD)
        hashes.append(time.perf_counter() - t)
        t = time.perf_counter()
        assert passwords.verify_password(stored, PASSWORD)
        checks.append(time.perf_counter() - t)
    return statistics.median(hashes) * 1000, statistics.median(checks) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
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
        fill(db, incident_id)
        token = admin_headers(db)
        fixed = Principal(
            actor=BENCH,
            user_id="bench",
            user_name="bench",
            memberships=(MembershipView("*", Role.ADMIN, None, None),),
        )
        switch = {"off": False}

        class FixedPrincipal:
            """With authorisation "off": the principal is set, no cookie or token read."""

            def __init__(self, inner: ASGIApp) -> None:
                self.inner = inner

            async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
                if switch["off"] and scope["type"] == "http":
                    scope.setdefault("state", {})["principal"] = fixed
                await self.inner(scope, receive, send)

        app.add_middleware(FixedPrincipal)
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", access_log=False
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        base = f"http://127.0.0.1:{port}"
        cookie = session_cookie(base, db)
        path = f"/api/incidents/{incident_id}/people?limit=50&offset=1000"
        samples: dict[str, list[float]] = {"off": [], "session": [], "token": []}
        with httpx.Client(base_url=base, timeout=30) as client:

            def timed(headers: dict[str, str]) -> float:
                t = time.perf_counter()
                response = client.get(path, headers=headers)
                elapsed = time.perf_counter() - t
                assert response.status_code == 200, response.text
                assert len(response.json()["items"]) == 50
                return elapsed

            for _ in range(20):  # warm-up
                timed(cookie)
                timed(token)
            for _ in range(args.rounds):
                samples["session"].append(timed(cookie))
                samples["token"].append(timed(token))
                switch["off"] = True
                samples["off"].append(timed({}))
                switch["off"] = False
        server.should_exit = True
        thread.join(timeout=10)
        db.dispose()

    medians = {name: statistics.median(values) * 1000 for name, values in samples.items()}
    print(f"GET {path.split('?')[0]}?limit=50 ({PEOPLE:,} people), {args.rounds} rounds each")
    print(f"authorisation off: median {medians['off']:.2f} ms")
    worst = 0.0
    for name in ("session", "token"):
        ratio = medians[name] / medians["off"]
        worst = max(worst, ratio)
        print(f"with a {name}: median {medians[name]:.2f} ms, ratio {ratio:.3f}x")
    verdict = "within" if worst <= 1.1 else "ABOVE"
    print(f"RESULT authorised/unauthorised median ratio: {worst:.3f}x ({verdict} the 1.1x target)")
    hash_ms, check_ms = argon2_ms(10)
    print(
        f"Argon2id at the shipped cost (t=3, m=64 MiB, p=4): hash {hash_ms:.0f} ms, "
        f"check {check_ms:.0f} ms per sign-in (median of 10; deliberate)"
    )


if __name__ == "__main__":
    main()
