"""Load test against real replicas: 3 ``trace serve`` processes on one PostgreSQL schema,
many generated people in one incident, 50 signed-in users for 60 s (Locust).

For each size (10,000 people, then ``--people``, default 1,000,000), in one run:

1. a fresh schema of the PostgreSQL server (``--pg-url``), migrated; the people written
   with ``COPY`` (``bench/many_people.py``);
2. ``--accounts`` reporters made with the CLI (``trace user create``, ``trace token
   create``): the users send their API tokens;
3. ``--replicas`` ``trace serve`` processes on free loopback ports, sharing the database;
4. Locust, headless, ``--users`` users for ``--seconds``: 70% search, 20% person page,
   10% publish (``bench/load/locustfile.py``), the users spread over the replicas.

Prints throughput, p50, p95, p99 per request kind and the errors, for both sizes, and the
ratios. Targets at a million people: p99 within 300 ms for search and person page, 500 ms
for publish, no errors, throughput within 2x of the 10,000-people run. The publish limit
per account (``TRACE_PUBLISH_LIMIT``) is lifted: this measures the app, not its limiter.

    .venv/bin/python bench/load/run_load.py [--people 1000000] [--seconds 60] [--users 50]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # bench/: many_people

from sqlalchemy import select  # noqa: E402

import many_people  # noqa: E402
from trace_app.store.db import make_engine, migrate  # noqa: E402
from trace_app.store.models import Person  # noqa: E402

SMALL = 10_000
KINDS = ("search", "person page", "publish")
P99_TARGET_MS = {"search": 300.0, "person page": 300.0, "publish": 500.0}
ORGANIZATION = "Load Test Desk"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def trace_cli(env: dict[str, str], *args: str, stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-m", "trace_app", *args],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout


def wait_healthy(url: str, process: subprocess.Popen[bytes], seconds: float = 90.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"a replica exited ({process.returncode}) before serving {url}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"no answer from {url}/healthz within {seconds:.0f} s")


def plan_data(url: str, incident_id: str, count: int) -> dict[str, object]:
    engine = make_engine(url)
    with engine.connect() as conn:
        people = conn.execute(
            select(Person.id, Person.name)
            .where(Person.incident_id == incident_id)
            .order_by(Person.id)
            .limit(2000)
        ).all()
    engine.dispose()
    rng = random.Random(11)
    names = [name for _, name in people]
    # what people type: a whole name, a first name, a typo, a prefix
    queries = [many_people.TARGET, "Sunitta", "sunita rai"]
    for name in rng.sample(names, min(200, len(names))):
        words = name.split()
        queries += [name, words[0], name[:-1] + "x" if len(name) > 6 else name, name[:2]]
    return {
        "incident_id": incident_id,
        "person_ids": [pid for pid, _ in people],
        "queries": queries,
        "names": [f"Load Person {i}" for i in range(500)] + names[:500],
        "people": count,
    }


def run_size(args: argparse.Namespace, people: int, work: Path) -> dict[str, dict[str, float]]:
    with many_people.postgres_schema(args.pg_url) as url:
        engine = make_engine(url)
        migrate(engine)
        started = time.perf_counter()
        incident_id = many_people.fill(engine, people, incident_name=f"Load {people}")
        engine.dispose()
        print(f"{people:,} people written in {time.perf_counter() - started:.0f} s", flush=True)
        home = work / f"home-{people}"
        home.mkdir()
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "TRACE_HOME": str(home),
            "TRACE_PUBLISH_LIMIT": "1000000/minute",
            # the replicas and the CLI run this checkout's code
            "PYTHONPATH": str(HERE.parent.parent / "src"),
        }
        tokens = []
        for n in range(args.accounts):
            name = f"load-{n}"
            trace_cli(
                env,
                "user",
                "create",
                name,
                "--role",
                "reporter",
                "--organization",
                ORGANIZATION,
                "--incident",
                incident_id,
                "--password-stdin",
                stdin=f"load-password-{n}-{incident_id}\n",
            )
            out = trace_cli(
                env, "token", "create", name, "--scope", "read", "--scope", "reports:write"
            )
            tokens.append(out.strip().splitlines()[-1])
        plan = {**plan_data(url, incident_id, people), "tokens": tokens}
        processes: list[subprocess.Popen[bytes]] = []
        try:
            replicas = []
            for _ in range(args.replicas):
                port = free_port()
                log = open(work / f"replica-{people}-{port}.log", "wb")
                processes.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "trace_app", "serve", "--port", str(port)],
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )
                replicas.append(f"http://127.0.0.1:{port}")
            for url_, process in zip(replicas, processes, strict=True):
                wait_healthy(url_, process)
            plan["replicas"] = replicas
            plan_file = work / f"plan-{people}.json"
            plan_file.write_text(json.dumps(plan), encoding="utf-8")
            prefix = work / f"locust-{people}"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "locust",
                    "-f",
                    str(HERE / "locustfile.py"),
                    "--headless",
                    "--only-summary",
                    "--users",
                    str(args.users),
                    "--spawn-rate",
                    str(args.users),
                    "--run-time",
                    f"{args.seconds}s",
                    "--stop-timeout",
                    "10",
                    "--csv",
                    str(prefix),
                    "--loglevel",
                    "WARNING",
                ],
                env={**env, "TRACE_LOAD_PLAN": str(plan_file)},
                check=False,
                timeout=args.seconds + 120,
            )
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
        return read_stats(Path(f"{prefix}_stats.csv"))


def read_stats(path: Path) -> dict[str, dict[str, float]]:
    stats: dict[str, dict[str, float]] = {}
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            stats[row["Name"]] = {
                "count": float(row["Request Count"]),
                "errors": float(row["Failure Count"]),
                "rps": float(row["Requests/s"]),
                "p50": float(row["50%"]),
                "p95": float(row["95%"]),
                "p99": float(row["99%"]),
            }
    return stats


def report(label: str, stats: dict[str, dict[str, float]]) -> None:
    print(f"\n{label}")
    heads = ("requests", "req/s", "p50", "p95", "p99", "errors")
    print(f"  {'kind':<12} " + " ".join(f"{h:>{max(6, len(h))}}" for h in heads))
    for kind in (*KINDS, "Aggregated"):
        s = stats.get(kind)
        if s is None:
            continue
        print(
            f"  {kind:<12} {s['count']:>8.0f} {s['rps']:>7.1f} {s['p50']:>6.0f} "
            f"{s['p95']:>6.0f} {s['p99']:>6.0f} {s['errors']:>6.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=SMALL)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--accounts", type=int, default=5)
    parser.add_argument("--pg-url", default=many_people.DEFAULT_PG)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trace-load-") as folder:
        work = Path(folder)
        small = run_size(args, args.small, work)
        large = run_size(args, args.people, work)
    print(f"\n{args.replicas} replicas, {args.users} users, {args.seconds} s per size; ms")
    report(f"{args.small:,} people", small)
    report(f"{args.people:,} people", large)
    total_small, total_large = small["Aggregated"], large["Aggregated"]
    ratio = total_small["rps"] / total_large["rps"] if total_large["rps"] else float("inf")
    print(
        f"\nthroughput {total_small['rps']:.1f} req/s at {args.small:,} people, "
        f"{total_large['rps']:.1f} at {args.people:,}: small / large = {ratio:.2f}"
    )
    misses = [
        f"{kind} p99 {large[kind]['p99']:.0f} ms > {P99_TARGET_MS[kind]:.0f}"
        for kind in KINDS
        if kind in large and large[kind]["p99"] > P99_TARGET_MS[kind]
    ]
    if total_large["errors"]:
        misses.append(f"{total_large['errors']:.0f} errors")
    if ratio > 2.0:
        misses.append(f"throughput small / large {ratio:.2f} (target at most 2)")
    print("targets: " + ("met" if not misses else "MISSED: " + "; ".join(misses)))


if __name__ == "__main__":
    main()
