"""A small crawl of the test web, made once by ``dustless crawl`` itself, for the tests of
what the reading commands print and write (``stats``, ``export``, ``report``, …)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from testweb_fixture import TestWeb, start_testweb


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 180, env: dict[str, str] | None = None
) -> Any:
    """``dustless ARGS…`` as a user runs it (in ``cwd``, with ``env`` added to the
    environment); stdout as bytes (a WACZ may come on it), stderr as text."""
    # No progress line by chance on a loaded machine (a step over 10 s): the tests that
    # check progress set the interval themselves.
    quiet = {"PYTHONUNBUFFERED": "1", "DUSTLESS_PROGRESS_INTERVAL": "3600"}
    env = {**os.environ, **quiet, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "dustless", *args],
        cwd=cwd,
        capture_output=True,
        timeout=timeout,
        check=False,
        env=env,
    )
    proc.stderr = proc.stderr.decode("utf-8")
    return proc


@pytest.fixture(scope="session")
def small_web(tmp_path_factory: pytest.TempPathFactory) -> Any:
    web: TestWeb = start_testweb(tmp_path_factory.mktemp("cliweb"), sites=2, pages_per_site=12)
    yield web
    web.stop()


@pytest.fixture(scope="session")
def crawled(small_web: TestWeb, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished crawl directory of the small test web (read-only for the tests)."""
    out = tmp_path_factory.mktemp("clicrawl") / "crawl"
    proc = run_cli(
        "crawl", str(out), *small_web.seeds, *small_web.resolve_args,
        "--delay", "0", "--delay-factor", "0", "--quiet",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture
def cli() -> Callable[..., Any]:
    return run_cli
