# hloviz — set up, test, demo. Every target installs what it needs on a fresh machine:
# Python packages into .venv (from pyproject.toml), and the system tools (Graphviz `dot`,
# headless Chromium for the browser test) through scripts/system-deps.sh.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.hloviz-installed
EXTRAS ?= tf,jax,test,bench

.PHONY: help install system-deps test test-fast demo conformance bench clean

help:
	@echo "make demo         capture the seed sample with TensorFlow and draw what XLA did (hloviz show)"
	@echo "make test         run the whole test suite (installs everything it needs)"
	@echo "make test-fast    the tests that need neither TensorFlow nor JAX"
	@echo "make conformance  run XLA's parser corpus from ../shared/conformance"
	@echo "make bench        run the benchmarks under benchmarks/"

$(STAMP): pyproject.toml
	@$(PYTHON) -m venv $(VENV) || { echo "error: '$(PYTHON) -m venv' failed; on Debian/Ubuntu: apt-get install python3-venv"; exit 2; }
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[$(EXTRAS)]'
	@touch $(STAMP)

install: $(STAMP)

system-deps:
	@sh scripts/system-deps.sh dot

test: $(STAMP)
	@sh scripts/system-deps.sh dot chromium
	$(BIN)/python -m pytest -q

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not requires_tf and not requires_jax"

demo: $(STAMP) system-deps
	$(BIN)/hloviz show samples/fused_additions.py:fused_additions -o hloviz-out/fused_additions

conformance: $(STAMP)
	$(BIN)/python ../shared/conformance/run

bench: $(STAMP)
	$(BIN)/python benchmarks/parse_bench.py
	$(BIN)/python benchmarks/render_bench.py
	$(BIN)/python benchmarks/diff_bench.py
	$(BIN)/python benchmarks/scope_bench.py

clean:
	rm -rf $(VENV) build hloviz-out .pytest_cache
