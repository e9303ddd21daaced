# dustless — everything a fresh machine needs goes through these targets.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench
# pywb (replay) and py-wacz (WACZ validation) are test-only tools with dependencies that
# clash with ours (constraints-replay.txt says which): they get a venv of their own, which
# the archive tests run as subprocesses.
REPLAY := .venv-replay
REPLAY_STAMP := $(REPLAY)/.installed

.PHONY: install test lint typecheck pytest bench demo clean

install: $(STAMP)

# Re-install whenever the declared or pinned dependencies change.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

$(REPLAY_STAMP): constraints-replay.txt
	test -x $(REPLAY)/bin/python || $(PYTHON) -m venv $(REPLAY)
	$(REPLAY)/bin/python -m pip install --quiet --upgrade pip
	$(REPLAY)/bin/python -m pip install --quiet -c constraints-replay.txt pywb wacz
	touch $@

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,bench]'
	touch $@

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy src

pytest: $(STAMP) $(REPLAY_STAMP)
	$(BIN)/python -m pytest

test: lint typecheck pytest

bench: $(BENCH_STAMP)
	@set -e; for b in bench/*_peers.py bench/*_load.py bench/*_bench.py bench/table1_*.py; do \
		[ -f "$$b" ] || continue; echo "== $$b"; $(BIN)/python "$$b"; done

demo: $(STAMP)
	$(BIN)/python -m dustless.demo

clean:
	rm -rf $(VENV) $(REPLAY) .mypy_cache .ruff_cache .pytest_cache
