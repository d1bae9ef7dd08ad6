"""The output schema derived per request (analysis/request_schema.py), and what it costs
the embedded model's grammar.

1. Build time: ``derive_schema`` for a catalogue of 2,048 entries (the default
   ``max_catalogue_entries``; a realistic mix of kinds) against the baseline measured in
   the same run, a ``json.dumps`` of the static schema file. Prints both medians and
   their ratio; the target is at most 20 ms for the derivation.
2. Grammar (only when the local-model extra is installed): llama-cpp-python's
   conversion of the schema into a GBNF grammar (``json_schema_to_gbnf``, with the
   child's small bounds), for a 16-entry and a 2,048-entry catalogue; with
   ``--generate``, also the embedded server's generation speed (tokens
   per second, 200 tokens with a short prompt, enough to reach the id lists) under each grammar.

    .venv/bin/python bench/bench_request_schema.py [--generate]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from viano_bug_analysis.analysis.catalogue import Catalogue
from viano_bug_analysis.analysis.request_schema import derive_schema
from viano_bug_analysis.analysis.schema_file import output_schema

# per 2,048 entries: mostly observations, comments, facts and entities, as in long threads
MIX = {"O": 500, "C": 500, "T": 60, "E": 40, "F": 300, "R": 20, "B": 60, "S": 120, "N": 300}
MIX["D"] = 2048 - 1 - sum(MIX.values()) - 40  # the rest, less Q0001 and 40 unread X
MIX["X"] = 40


def catalogue(size: int) -> Catalogue:
    entries: list[dict[str, Any]] = []
    scale = size / 2048
    for letter, count in MIX.items():
        for n in range(1, max(1, round(count * scale)) + 1):
            entries.append(
                {
                    "id": f"{letter}{n:04d}",
                    "kind": letter,
                    "origin": "original" if n % 5 else "tester",
                    "inline": letter not in "X" and n % 7 != 0,
                    "unread": letter == "X" or n % 7 == 0,
                    "data": {},
                }
            )
    entries = entries[: size - 1]
    entries.append({"id": "Q0001", "kind": "Q", "data": {"value": "missing"}})
    return Catalogue(entries)


def median_ms(fn: Callable[[], object], runs: int = 41) -> float:
    fn()  # warm
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def grammar_costs(schema: dict[str, Any]) -> tuple[float, int] | None:
    try:
        import llama_cpp.llama_grammar as grammar
    except ImportError:
        return None
    from modelgate._llama_child import grammar_schema

    text = json.dumps(grammar_schema(schema))
    start = time.perf_counter()
    gbnf = grammar.json_schema_to_gbnf(text)
    convert = (time.perf_counter() - start) * 1000
    return convert, len(gbnf)


def generation_speed(schemas: dict[str, dict[str, Any]]) -> None:
    import httpx

    from modelgate.local_server import LocalModelServer, embedded_settings

    with LocalModelServer(embedded_settings()) as server:
        for name, schema in schemas.items():
            body = {
                "model": server.model_alias,
                "messages": [{"role": "user", "content": "Describe a bug as JSON."}],
                "temperature": 0.0,
                "max_tokens": 200,
                "response_format": {"type": "json_object", "schema": schema},
            }
            start = time.perf_counter()
            answer = httpx.post(
                f"{server.base_url}/chat/completions", json=body, timeout=600, trust_env=False
            ).json()
            elapsed = time.perf_counter() - start
            tokens = answer["usage"]["completion_tokens"]
            print(
                f"generation, {name}: {tokens} tokens in {elapsed:.1f} s "
                f"({tokens / elapsed:.1f} tokens/s, grammar build included)"
            )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--generate", action="store_true")
    args = parser.parse_args()
    big = catalogue(2048)
    small = catalogue(16)
    static = output_schema()
    derive = median_ms(lambda: derive_schema(big))
    baseline = median_ms(lambda: json.dumps(static))
    schema = derive_schema(big)
    print(
        f"derive_schema, {len(big)} entries: {derive:.2f} ms median "
        f"({len(json.dumps(schema)) / 1024:.0f} KiB of JSON); json.dumps of the static "
        f"schema: {baseline:.3f} ms; ratio {derive / baseline:.0f}x; target 20 ms: "
        f"{'met' if derive <= 20 else 'NOT met'}"
    )
    schemas = {"16 entries": derive_schema(small), "2048 entries": schema}
    for name, each in schemas.items():
        costs = grammar_costs(each)
        if costs is None:
            print("grammar: llama-cpp-python is not installed; skipped")
            return 0
        convert, size = costs
        print(f"grammar, {name}: {size / 1024:.0f} KiB GBNF, converted in {convert:.1f} ms")
    if args.generate:
        generation_speed(schemas)
    return 0


if __name__ == "__main__":
    sys.exit(main())
