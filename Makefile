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
# ReplayWeb.page, the browser's replay of a WACZ (tests/export/test_wacz_replaywebpage.py):
# the npm package ships the built static app (index.html, ui.js, sw.js), so `npm pack` fetches
# the one tarball, checked against its pinned sha256, and we unpack it. Its dependencies are
# only for building it (and `npm install` of 2.5.3 fails: no warcio@^2.4.12 on the registry).
REPLAYWEB := .replayweb
REPLAYWEB_VERSION := 2.5.3
REPLAYWEB_SHA256 := b7d35c39c4da9b7121c5a393911d8675d4cc6f19513c380191e16b086bea812c
REPLAYWEB_STAMP := $(REPLAYWEB)/.installed-$(REPLAYWEB_VERSION)

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

# Without npm the browser test skips (fails under DUSTLESS_REQUIRE_ALL=1, as CI runs it),
# like the Chromium tests: make test still runs everything else on a bare machine.
$(REPLAYWEB_STAMP):
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "npm not found: the ReplayWeb.page test will skip (apt-get install npm)"; exit 0; fi; \
	set -e; rm -rf $(REPLAYWEB) && mkdir -p $(REPLAYWEB); \
	cd $(REPLAYWEB) && npm pack --silent replaywebpage@$(REPLAYWEB_VERSION) >/dev/null && cd ..; \
	echo "$(REPLAYWEB_SHA256)  $(REPLAYWEB)/replaywebpage-$(REPLAYWEB_VERSION).tgz" | sha256sum -c --quiet; \
	tar -xzf $(REPLAYWEB)/replaywebpage-$(REPLAYWEB_VERSION).tgz -C $(REPLAYWEB); \
	touch $@

# The peers bench/crawl_peers.py times that are not on PyPI: spider's npm binding into
# bench/out/node (0.0.157: the newest, 0.0.163, has no native linux-x64 package on the
# registry), and wget2 from Debian (apt-get install wget2). A peer that is missing is printed
# as missing by the bench, so neither is required.
SPIDER_VERSION := 0.0.157

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,bench]'
	@if command -v npm >/dev/null 2>&1; then \
		npm install --silent --no-audit --no-fund --prefix bench/out/node \
			@spider-rs/spider-rs@$(SPIDER_VERSION) \
			@spider-rs/spider-rs-linux-x64-gnu@$(SPIDER_VERSION) || \
			echo "spider's npm binding did not install: crawl_peers prints it as missing"; \
	else echo "npm not found: crawl_peers prints spider as missing (apt-get install npm)"; fi
	@command -v wget2 >/dev/null 2>&1 || echo "wget2 not found: apt-get install wget2"
	touch $@

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy src

# The suite mostly waits (servers, subprocesses, browsers), so two processes (pytest-xdist)
# take about half the time even on two cores. --dist loadfile keeps each file's tests in one
# process, so a module-scoped fixture (a reference crawl) is built once; files are handed out
# in the order collected, which puts the long ones first (tests/conftest.py), not by their
# number of tests (xdist's default: the one-test files of minutes came last, a long tail).
# Servers bind port 0 or start again on another port when the other process took theirs
# (tests/support.py).
PYTEST_WORKERS ?= 2

pytest: $(STAMP) $(REPLAY_STAMP) $(REPLAYWEB_STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder

test: lint typecheck pytest

bench: $(BENCH_STAMP)
	@set -e; for b in bench/*_peers.py bench/*_load.py bench/*_bench.py bench/table1_*.py; do \
		[ -f "$$b" ] || continue; echo "== $$b"; $(BIN)/python "$$b"; done

demo: $(STAMP)
	$(BIN)/python -m dustless.demo

clean:
	rm -rf $(VENV) $(REPLAY) $(REPLAYWEB) .mypy_cache .ruff_cache .pytest_cache
