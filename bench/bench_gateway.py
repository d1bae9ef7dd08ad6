"""Gateway overhead: a call through the gateway against a bare httpx POST, same stub.

Both sides talk to the same loopback OpenAI-compatible stub (modelgate.testing, run in
its own process like a real model server, so it does not compete for this process's
GIL) over a kept-alive connection: each side its own client with the same httpx
settings (keep-alive pool, no retries, no proxies from the environment) and the same
body bytes; paired rounds after a warm-up, the order swapped every round, so the
server's own cost and order effects cancel out. The gateway side builds the body,
fingerprints the request, runs the caller-side clock, parses and validates the typed
answer. A second figure adds a JSON ledger (reserve in a worker thread, settle) and the
audit log (one fsynced append), for information.

Run: .venv/bin/python bench/bench_gateway.py  (bounded to well under 60 s)
"""

from __future__ import annotations

import asyncio
import enum
import multiprocessing
import statistics
import tempfile
import time
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from pathlib import Path

import httpx
from pydantic import BaseModel

from modelgate.answers import output_schema
from modelgate.gateway import Gateway
from modelgate.ledger import JsonFileLedger
from modelgate.providers import OpenAICompatibleProvider, ProviderConfig
from modelgate.providers.openai_http import encode_body
from modelgate.recording import Recorder
from modelgate.testing import StubChatServer, StubResponse
from modelgate.types import Message, ModelRequest

ROUNDS = 2000
WARMUP = 100


class Colour(enum.StrEnum):
    RED = "RED"
    GREEN = "GREEN"


class Label(BaseModel):
    colour: Colour
    note: str


REQUEST = ModelRequest(
    messages=(Message("system", "Answer with JSON."), Message("user", "A ripe tomato?")),
    output_name="Label",
    output_schema=output_schema(Label),
    prompt_version="bench-v1",
    max_output_tokens=32,
)


def serve(ports: Queue[int], stop: Event) -> None:
    answer = StubResponse.answer('{"colour": "RED", "note": "seen"}')
    with StubChatServer(default=answer) as stub:
        ports.put(stub.port)
        stop.wait(120)


async def main() -> None:
    context = multiprocessing.get_context("spawn")
    ports: Queue[int] = context.Queue()
    stop = context.Event()
    server = context.Process(target=serve, args=(ports, stop), daemon=True)
    server.start()
    try:
        await measure(f"http://127.0.0.1:{ports.get(timeout=30)}/v1")
    finally:
        stop.set()
        server.join(timeout=10)


async def measure(base_url: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = ProviderConfig(name="stub", base_url=base_url, model="m", timeout_s=10)
        provider = OpenAICompatibleProvider(config)
        bare_gateway = Gateway([provider])
        guarded_gateway = Gateway(
            [OpenAICompatibleProvider(config)],
            ledger=JsonFileLedger(Path(tmp) / "ledger.json", cap=1000),
            recorder=Recorder(Path(tmp) / "audit.jsonl"),
        )
        body = encode_body(provider.request_body(REQUEST))  # the same bytes
        url = f"{base_url}/chat/completions"
        async with httpx.AsyncClient(  # the provider's own client settings
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            timeout=httpx.Timeout(config.timeout_s + 1.0),
            follow_redirects=False,
            transport=httpx.AsyncHTTPTransport(retries=0),
            trust_env=False,
        ) as client:

            async def bare() -> None:
                response = await client.post(url, content=body)
                response.raise_for_status()

            async def through_gateway() -> None:
                await bare_gateway.attempt(REQUEST, Label)

            for _ in range(WARMUP):
                await bare()
                await through_gateway()
            bare_times, gateway_times = [], []
            bare_cpu = gateway_cpu = 0.0
            for index in range(ROUNDS):
                # paired rounds, the order swapped every round (A B, B A, ...): whatever
                # the previous call leaves behind (a warm cache, a sleeping server
                # thread) falls on both sides equally
                for side in (0, 1) if index % 2 == 0 else (1, 0):
                    start, cpu = time.perf_counter(), time.process_time()
                    if side == 0:
                        await bare()
                        bare_times.append(time.perf_counter() - start)
                        bare_cpu += time.process_time() - cpu
                    else:
                        await through_gateway()
                        gateway_times.append(time.perf_counter() - start)
                        gateway_cpu += time.process_time() - cpu
            guarded_times = []
            for _ in range(ROUNDS // 10):
                start = time.perf_counter()
                await guarded_gateway.attempt(REQUEST, Label)
                guarded_times.append(time.perf_counter() - start)
        await bare_gateway.aclose()
        await guarded_gateway.aclose()
    bare_ms = statistics.median(bare_times) * 1000
    gateway_ms = statistics.median(gateway_times) * 1000
    guarded_ms = statistics.median(guarded_times) * 1000
    print(f"bare httpx POST          median {bare_ms:.3f} ms  ({ROUNDS} rounds)")
    print(f"gateway.attempt          median {gateway_ms:.3f} ms")
    print(f"  + JSON ledger + audit  median {guarded_ms:.3f} ms  ({ROUNDS // 10} rounds)")
    overhead_us = (
        statistics.median(g - b for g, b in zip(gateway_times, bare_times, strict=True)) * 1e6
    )
    print(f"median paired overhead   {overhead_us:.0f} us per call")
    print(
        f"client CPU per call       bare {bare_cpu / ROUNDS * 1e6:.0f} us, "
        f"gateway {gateway_cpu / ROUNDS * 1e6:.0f} us (less sensitive to a busy machine)"
    )
    print(f"ratio gateway/bare = {gateway_ms / bare_ms:.3f}  (target <= 1.10)")
    print(f"ratio guarded/bare = {guarded_ms / bare_ms:.3f}  (informational: ledger + audit log)")


if __name__ == "__main__":
    asyncio.run(main())
