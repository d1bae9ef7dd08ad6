"""Where one interpretation's time goes on the embedded model (issue 39, item 4).

Starts the embedded llama.cpp server (SmolLM2-135M, Q4_1) and sends the real request of
two real Bugzilla reports (../shared/data or REAL_DATA_DIR), built exactly as
``viano interpret`` builds them (PromptBuilder, derived schema, llama.cpp's
``json_object_schema`` form), and measures:

- prompt evaluation: a request with ``max_tokens = 1`` (no generation to speak of);
  the second report's probe shows whether the prefix every case shares (the system
  prompt) is reused from the server's cache;
- generation under Viano's schema grammar: wall time, completion tokens, tokens/s of
  generation (completion tokens / (wall - prompt evaluation));
- generation without a schema, the same prompt and token limit: tokens/s;
- tokens the answer needed: the completion tokens against the length of the same
  answer written compactly (``json.dumps`` with no spaces), in tokens by the server's
  own tokenizer (``/extras/tokenize``) when it has one, else characters / 2.5.

Run: .venv/bin/python bench/bench_embedded_profile.py [--bugs 1389223,1389136]
[--answer-tokens N] (the schema's answer size; 2048 gives the bounds before ADR 0105)
Takes a few minutes on 2 cores; the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from modelgate.local_server import LocalModelServer, embedded_settings
from viano_bug_analysis.analysis.budget import ContextBudget
from viano_bug_analysis.analysis.case_access import verify_built_case
from viano_bug_analysis.analysis.limits import InterpretationLimits
from viano_bug_analysis.analysis.prompt_builder import PromptBuilder
from viano_bug_analysis.case import CaseBuilder, CaseBuilderLimits
from viano_bug_analysis.evaluation import extract_record
from viano_bug_analysis.intake import import_file
from viano_bug_analysis.llm import GatewayConfig, LLMGateway
from viano_bug_analysis.packages import PackageStore

REPO = Path(__file__).resolve().parents[1]


def _data() -> Path:
    configured = os.environ.get("REAL_DATA_DIR")
    return Path(configured) if configured else REPO.parent / "shared" / "data"


def request_for(bug: int, tmp: Path, max_tokens: int, answer_tokens: int | None) -> dict[str, Any]:
    """The chat-completions body ``viano interpret`` would send for this bug."""
    source = _data() / "bug_reports" / "bugbug" / "bugs.json"
    report = extract_record(source, bug, tmp / f"{bug}.json")
    zipped = tmp / f"{bug}-{answer_tokens}.zip"
    (pkg,) = import_file("bugzilla", report, zipped, case_id=f"bz-{bug}")
    store = PackageStore.init(tmp / f"store-{bug}-{answer_tokens}")
    store.add(pkg.path)
    CaseBuilder(store).build(pkg.case_id, pkg.package_id)
    with store.current(pkg.case_id, pkg.package_id).open() as reader:
        case = verify_built_case(
            reader, pkg.case_id, pkg.package_id, InterpretationLimits(), CaseBuilderLimits()
        )
    gateway = LLMGateway(GatewayConfig.embedded())
    window = gateway.context_window_tokens or 8192
    builder = PromptBuilder(InterpretationLimits(), ContextBudget(window, max_tokens))
    prepared = builder.prepare(case)  # fitted to the window, as ``viano interpret`` does
    request = builder.request(
        prepared,
        max_tokens,
        distinct_ids=gateway.grammar_keeps_ids_distinct,
        answer_tokens=gateway.answer_tokens if answer_tokens is None else answer_tokens,
    )
    return {
        "model": "smollm2-135m-instruct",
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "temperature": 0.0,
        "max_tokens": max_tokens,
        "response_format": {"type": "json_object", "schema": request.output_schema},
    }


def post(client: httpx.Client, base: str, body: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    response = client.post(f"{base}/chat/completions", json=body)
    if response.status_code != 200:
        raise SystemExit(f"HTTP {response.status_code}: {response.text[:500]}")
    return time.perf_counter() - started, response.json()


def tokens(client: httpx.Client, base: str, text: str) -> tuple[int, str]:
    root = base.removesuffix("/v1")
    try:
        r = client.post(f"{root}/extras/tokenize", json={"input": text})
        if r.status_code == 200:
            return len(r.json()["tokens"]), "tokenizer"
    except (httpx.HTTPError, KeyError, ValueError):
        pass
    return round(len(text) / 2.5), "chars/2.5"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bugs", default="1389223,1389136")
    parser.add_argument("--max-tokens", type=int, default=2048)
    parser.add_argument(
        "--answer-tokens",
        default="",
        help="answer sizes the schema is bounded to, comma-separated, each measured on "
        "the same prompt (default: the embedded configuration's answer_tokens; 2048 gives "
        "the bounds before ADR 0105)",
    )
    args = parser.parse_args()
    bugs = [int(b) for b in args.bugs.split(",")]
    sizes = [int(n) for n in args.answer_tokens.split(",") if n] or [None]
    with tempfile.TemporaryDirectory() as tmp, LocalModelServer(embedded_settings()) as server:
        base = server.base_url
        client = httpx.Client(timeout=900)
        print(f"load average before: {os.getloadavg()}", flush=True)
        for bug in bugs:
            bodies = [request_for(bug, Path(tmp), args.max_tokens, n) for n in sizes]
            probe = {**bodies[0], "max_tokens": 1}
            probe.pop("response_format")
            prompt_s, probe_answer = post(client, base, probe)
            prompt_tokens = probe_answer["usage"]["prompt_tokens"]
            print(f"bug {bug}: prompt {prompt_tokens} tokens, evaluated in {prompt_s:.1f} s")
            # the same prompt again: all of it is a cached prefix now
            again_s, _ = post(client, base, probe)
            print(f"  same prompt again (cached prefix): {again_s:.1f} s")
            done = 0
            for size, body in zip(sizes, bodies, strict=True):
                wall, answer = post(client, base, body)
                text = answer["choices"][0]["message"]["content"] or ""
                done = answer["usage"]["completion_tokens"]
                gen = max(wall - again_s, 1e-6)
                try:
                    parsed = json.loads(text)
                    compact = json.dumps(parsed, separators=(",", ":"), ensure_ascii=False)
                    needed, how = tokens(client, base, compact)
                except ValueError:
                    needed, how = -1, "not JSON"
                print(
                    f"  with the schema (answer_tokens {size or 'as configured'}): "
                    f"{wall:.1f} s, {done} completion tokens "
                    f"({done / gen:.1f} tokens/s of generation), answer needed {needed} "
                    f"({how}), finish {answer['choices'][0].get('finish_reason')}",
                    flush=True,
                )
            free = {**bodies[0]}
            free.pop("response_format")
            free["max_tokens"] = done or args.max_tokens
            wall_free, answer_free = post(client, base, free)
            done_free = answer_free["usage"]["completion_tokens"]
            print(
                f"  without a schema (limit {free['max_tokens']}): {wall_free:.1f} s, "
                f"{done_free} tokens "
                f"({done_free / max(wall_free - again_s, 1e-6):.1f} tokens/s of generation)",
                flush=True,
            )
        print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    sys.exit(main())
