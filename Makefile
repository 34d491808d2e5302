# hloviz — set up, test, demo. Every target installs what it needs on a fresh machine:
# Python packages into .venv (from pyproject.toml), and the system tools (Graphviz `dot`,
# headless Chromium for the browser test) through scripts/system-deps.sh.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.hloviz-installed
EXTRAS ?= tf,jax,flax,test,bench,sphinx,mkdocs,docs
# Test processes for `make test` (pytest-xdist). Each test file runs whole in one process, so a
# file's module- and session-scoped captures are made once; TEST_JOBS=0 runs in this process only.
TEST_JOBS ?= 2

.PHONY: help install system-deps test test-fast mutants lint typecheck demo docs conformance bench gallery clean

help: ## list the targets (each documented by the comment after its name)
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-zA-Z_-]+):.*## (.*)$$/\1\t\2/' | \
		awk -F '\t' '{ printf "make %-13s %s\n", $$1, $$2 }'

$(STAMP): pyproject.toml
	@$(PYTHON) -m venv $(VENV) || { echo "error: '$(PYTHON) -m venv' failed; on Debian/Ubuntu: apt-get install python3-venv"; exit 2; }
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[$(EXTRAS)]'
	@touch $(STAMP)

install: $(STAMP) ## create .venv and install hloviz with the extras named in EXTRAS

system-deps: ## install Graphviz `dot` if missing (scripts/system-deps.sh)
	@sh scripts/system-deps.sh dot

test: $(STAMP) ## run the whole test suite (installs everything it needs)
	@sh scripts/system-deps.sh dot chromium
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile

test-fast: $(STAMP) ## the tests that need neither TensorFlow nor JAX (nor the package index)
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile -m "not requires_tf and not requires_jax and not requires_network"

mutants: $(STAMP) ## break the code on purpose (scripts/mutations.toml), one slip at a time, and check its fast tests fail
	$(BIN)/python scripts/mutants.py

demo: $(STAMP) system-deps ## capture the seed sample with TensorFlow and draw what XLA did (hloviz show)
	$(BIN)/hloviz show samples/fused_additions.py:fused_additions -o hloviz-out/fused_additions

docs: $(STAMP) system-deps ## build the documentation site (Sphinx + MyST; pictures drawn by hloviz's directive from samples/captures) into docs/_build/html
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

conformance: $(STAMP) ## run XLA's parser corpus from ../shared/conformance
	$(BIN)/python ../shared/conformance/run

gallery: $(STAMP) system-deps ## draw the README's gallery into docs/gallery (python -m hloviz.docs.gallery)
	$(BIN)/python -m hloviz.docs.gallery docs/gallery

bench: $(STAMP) ## run the benchmarks under benchmarks/ (each prints its figures with the reference or target beside them; a "-" line goes on when its target is missed)
	$(BIN)/python benchmarks/parse_bench.py
	$(BIN)/python benchmarks/render_bench.py
	-$(BIN)/python benchmarks/capture_bench.py --cases seed,cnn_train
	$(BIN)/python benchmarks/diff_bench.py
	$(BIN)/python benchmarks/versions_bench.py
	$(BIN)/python benchmarks/scope_bench.py
	$(BIN)/python benchmarks/memory_bench.py
	-$(BIN)/python benchmarks/commands_bench.py
	$(BIN)/python benchmarks/show_breakdown_bench.py efficientnet_b0
	-$(BIN)/python benchmarks/growth_bench.py

LINT_STAMP := $(VENV)/.hloviz-lint-installed
$(LINT_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[lint]'
	@touch $(LINT_STAMP)

lint: $(LINT_STAMP) ## ruff over the package, tests, benchmarks and samples (rules: pyproject.toml)
	$(BIN)/ruff check hloviz tests benchmarks samples

typecheck: $(LINT_STAMP) ## pyright: standard everywhere, strict for hloviz/ir.py and hloviz/parser/
	PYRIGHT_PYTHON_IGNORE_WARNINGS=1 $(BIN)/pyright --pythonpath $(BIN)/python

clean: ## remove .venv, build outputs, the built docs and hloviz-out
	rm -rf $(VENV) build docs/_build hloviz-out .pytest_cache
