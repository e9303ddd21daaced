"""Helpers for the crawler tests: crawl a test web in-process or as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dustless.crawl import CrawlResult, run_crawl
from dustless.crawl.config import CrawlConfig


def resolve_of(web) -> tuple[str, ...]:
    args = web.resolve_args
    return tuple(args[i + 1] for i in range(0, len(args), 2) if args[i] == "--resolve")


def crawl(web, out: Path, **options) -> CrawlResult:
    options.setdefault("seeds", tuple(web.seeds))
    options.setdefault("resolve", resolve_of(web))
    options.setdefault("delay", 0.0)
    options.setdefault("delay_factor", 0.0)
    options.setdefault("progress", False)
    return run_crawl(CrawlConfig(**options), out)


def crawl_cmd(web, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "dustless", "crawl", *web.seeds, "--out", str(out),
        *web.resolve_args, "--quiet", *extra,
    ]  # fmt: skip


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run(
        [sys.executable, "-m", "dustless", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


@pytest.fixture
def web(testweb_factory):
    """A small dirty web holding the pattern-script site ``www.web.com`` (seed 002)."""
    return testweb_factory(profile="dirty", sites=2, pages_per_site=20)


@pytest.fixture
def clean_web(testweb_factory):
    return testweb_factory(profile="clean", sites=6, pages_per_site=25)


class CrawlHelp:
    """The helpers above, handed to tests as the ``ch`` fixture (conftest names clash)."""

    crawl = staticmethod(crawl)
    crawl_cmd = staticmethod(crawl_cmd)
    run_cli = staticmethod(run_cli)
    resolve_of = staticmethod(resolve_of)


@pytest.fixture
def ch():
    return CrawlHelp
