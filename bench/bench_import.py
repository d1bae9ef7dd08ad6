"""Import cost: ``import modelgate`` (gateway, providers, ledger) must not import litellm.

Each figure is measured in a fresh interpreter. The baseline is ``import litellm``
itself, which is what every app start would pay if modelgate imported it eagerly.

Run: .venv/bin/python bench/bench_import.py   (bounded to well under 60 s)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

PROBE = """
import json, sys, time
start = time.perf_counter()
{imports}
elapsed = time.perf_counter() - start
print(json.dumps({{"elapsed": elapsed, "litellm": "litellm" in sys.modules}}))
"""
MODELGATE = (
    "import modelgate, modelgate.gateway, modelgate.providers, modelgate.ledger\n"
    "import modelgate.answers, modelgate.recording, modelgate.fingerprint, modelgate.prompts"
)
LITELLM = "import litellm"


def measure(imports: str, runs: int) -> tuple[float, bool]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    times, loaded = [], False
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", PROBE.format(imports=imports)],
            capture_output=True,
            text=True,
            check=True,
            timeout=50,
            env=env,
        )
        result = json.loads(out.stdout.strip().splitlines()[-1])
        times.append(result["elapsed"])
        loaded = loaded or result["litellm"]
    return statistics.median(times), loaded


def main() -> None:
    ours, ours_loaded_litellm = measure(MODELGATE, runs=5)
    theirs, _ = measure(LITELLM, runs=3)
    print(f"import modelgate (+ gateway, providers, ledger)  median {ours * 1000:.0f} ms")
    print(f"import litellm (baseline)                        median {theirs * 1000:.0f} ms")
    print(f"litellm imported by modelgate: {ours_loaded_litellm}")
    print(f"ratio modelgate / litellm = {ours / theirs:.3f}")
    if ours_loaded_litellm:
        raise SystemExit("FAIL: importing modelgate imported litellm")


if __name__ == "__main__":
    main()
