# dustless — everything a fresh machine needs goes through these targets.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: install test lint typecheck pytest bench demo clean

install: $(STAMP)

# Re-install whenever the declared or pinned dependencies change.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,bench]'
	touch $@

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy src

pytest: $(STAMP)
	$(BIN)/python -m pytest

test: lint typecheck pytest

bench: $(BENCH_STAMP)
	@set -e; for b in bench/*_peers.py bench/*_load.py bench/*_bench.py bench/table1_*.py; do \
		[ -f "$$b" ] || continue; echo "== $$b"; $(BIN)/python "$$b"; done

demo: $(STAMP)
	$(BIN)/python -m dustless.demo

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
