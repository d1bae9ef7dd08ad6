"""The embedded model during `trace eval` on the dev set: per-call latency and server memory.

Starts the embedded llama.cpp server (modelgate.local_server), runs eval/trace_dev.jsonl
through Trace's real investigation (trace_app.evaluation), and samples the server
process's resident memory (VmRSS from /proc/<pid>/status) every 50 ms meanwhile.

Baseline, measured in the same run against the same server: the exact request bodies
the investigation sent, POSTed again with a bare httpx client (no gateway, ledger,
database or validation). The ratio is our per-call latency over the bare one.

Bounded: cases run one by one until --budget-s (default 18 s) is spent, then the
baseline replays the same bodies within the same budget, so a run takes about 40-45 s
on 2 CPU cores (each call is at most 96 output tokens; a machine busy with other work
can stretch one call). Skips (exit 0, with the reason) when the
local model is not installed.

    .venv/bin/python bench/bench_local_model.py [--cases eval/trace_dev.jsonl] [--budget-s 18]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from modelgate.local_server import LocalModelMissing, LocalModelServer, missing_runtime_modules
from modelgate.providers import Provider, ProviderConfig, build_provider
from modelgate.types import ModelRequest, ProviderResponse
from trace_app.evaluation import EvalReport, load_cases, run_evaluation
from trace_app.investigation.model_settings import ModelSettings
from trace_app.local_model import model_for_commands

REPO = Path(__file__).resolve().parents[1]


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class RssSampler(threading.Thread):
    def __init__(self, pid: int, every_s: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.every_s = every_s
        self.samples: list[int] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            value = rss_kib(self.pid)
            if value is not None:
                self.samples.append(value)
            self._stop_event.wait(self.every_s)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


class TimedProvider(Provider):
    """Wraps the real provider: times each ``complete`` and keeps the body it sent."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.timeout_s = inner.timeout_s
        self.seconds: list[float] = []
        self.bodies: list[dict[str, Any]] = []

    async def complete(self, request: ModelRequest) -> ProviderResponse:
        started = time.perf_counter()
        response: ProviderResponse = await self.inner.complete(request)
        self.seconds.append(time.perf_counter() - started)
        self.bodies.append(response.request_body)
        return response

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        return self.inner.request_body(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def warm_up(server: LocalModelServer) -> None:
    """One short request first, so neither side pays the first call's page faults."""
    body = {
        "model": server.model_alias,
        "messages": [{"role": "user", "content": "Say OK."}],
        "max_tokens": 4,
        "temperature": 0,
    }
    with httpx.Client(timeout=60, trust_env=False) as client:
        client.post(f"{server.base_url}/chat/completions", json=body).raise_for_status()


def bare_calls(base_url: str, bodies: list[dict[str, Any]], budget_s: float) -> list[float]:
    """POST the bodies in order with a bare client until they are done or the budget is."""
    seconds: list[float] = []
    started = time.perf_counter()
    with httpx.Client(timeout=60, trust_env=False) as client:
        for body in bodies:
            began = time.perf_counter()
            reply = client.post(f"{base_url}/chat/completions", json=body)
            reply.raise_for_status()
            seconds.append(time.perf_counter() - began)
            if time.perf_counter() - started > budget_s:
                break
    return seconds


def run_within_budget(cases: list[Any], settings: Any, factory: Any, budget_s: float) -> EvalReport:
    """Cases one at a time (each through the whole real flow) until the budget is spent."""
    started = time.perf_counter()
    reports: list[EvalReport] = []
    for case in cases:
        reports.append(asyncio.run(run_evaluation([case], settings, provider_factory=factory)))
        if time.perf_counter() - started > budget_s:
            break
    first = reports[0]
    return EvalReport(
        model=first.model,
        base_url=first.base_url,
        prompt_version=first.prompt_version,
        started_at=first.started_at,
        outcomes=tuple(o for r in reports for o in r.outcomes),
        ledger_requests=sum(r.ledger_requests for r in reports),
    )


def fmt(values: list[float]) -> str:
    return (
        f"mean {statistics.fmean(values):.3f} s, median {statistics.median(values):.3f} s, "
        f"max {max(values):.3f} s (n={len(values)})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=REPO / "eval" / "trace_dev.jsonl")
    parser.add_argument("--budget-s", type=float, default=18.0, help="time for the eval part")
    args = parser.parse_args()
    if missing_runtime_modules():
        print(f"skipped: local model runtime missing {missing_runtime_modules()}")
        return 0
    cases = load_cases(args.cases)
    env: dict[str, str] = {}  # an empty environment: always the embedded model
    timed: list[TimedProvider] = []

    def factory(config: ProviderConfig) -> Provider:
        wrapper = TimedProvider(build_provider(config))
        timed.append(wrapper)
        return wrapper

    wall = time.perf_counter()
    try:
        with model_for_commands(ModelSettings.from_env(env)) as choice:
            server = choice.local_server
            assert isinstance(server, LocalModelServer) and server.pid is not None
            started_s = time.perf_counter() - wall
            idle_rss = rss_kib(server.pid) or 0
            warm_up(server)
            sampler = RssSampler(server.pid)
            sampler.start()
            report = run_within_budget(cases, choice.settings, factory, args.budget_s)
            sampler.stop()
            ours = [s for t in timed for s in t.seconds]
            bodies = [b for t in timed for b in t.bodies]
            bare = bare_calls(server.base_url, bodies, args.budget_s)
    except LocalModelMissing as error:
        print(f"skipped: {error.message}")
        return 0
    summary = report.summary()
    per_investigation = [o.latency_s for o in report.outcomes if o.requests_sent]
    calls = summary["model_calls"]
    paired = len(bare)  # the same bodies, in the same order, on both sides
    ours_per_call = statistics.fmean(ours[:paired])
    bare_per_call = statistics.fmean(bare)
    peak = max(sampler.samples)
    print(f"server start to ready: {started_s:.2f} s; RSS idle {idle_rss / 1024:.0f} MiB")
    print(
        f"server RSS during eval: peak {peak / 1024:.0f} MiB, "
        f"mean {statistics.fmean(sampler.samples) / 1024:.0f} MiB "
        f"({len(sampler.samples)} samples)"
    )
    print(f"model calls: {calls} over {len(report.outcomes)} of {len(cases)} cases")
    print(f"per call, bare httpx POST (baseline): {fmt(bare)}")
    print(f"per call, provider.complete:         {fmt(ours)}")
    print(f"per investigation, whole flow:        {fmt(per_investigation)}")
    print(
        f"tokens: prompt {summary['tokens']['prompt']}, "
        f"completion {summary['tokens']['completion']}"
    )
    print(
        f"label accuracy {summary['label_accuracy']}, valid answers "
        f"{summary['valid_answer_share']}, misleading COMPLETED "
        f"{summary['misleading_completed']}"
    )
    print(
        f"ratio (provider.complete / bare POST, same {paired} bodies): "
        f"{ours_per_call / bare_per_call:.2f}; "
        f"whole investigation per call {sum(per_investigation) / calls:.3f} s"
    )
    print(f"total bench time: {time.perf_counter() - wall:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
