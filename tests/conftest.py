"""Shared fixtures. ``testweb``: the synthetic web (docs/testweb.md) on a free loopback port.

    def test_crawl(testweb):
        seeds = testweb.seeds                  # full URLs with the port
        args = testweb.resolve_args            # ["--resolve", "*.test:127.0.0.1", …]
        testweb.stats()["duplicate_fetches"]   # what the server saw

    def test_dirty(testweb_factory):
        web = testweb_factory(profile="dirty", sites=6)

Servers are started once per session and option set; each test gets counters reset and
day 0. The logic lives in ``tests/testweb_fixture.py``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

# A bug of dustless met while crawling fails the test loudly (in a real crawl it is the
# URL's recorded ``iErr`` state): in-process crawls and the CLI subprocesses alike.
os.environ.setdefault("DUSTLESS_STRICT", "1")

from testweb_fixture import TestWeb, start_testweb


@pytest.fixture(scope="session")
def _testweb_pool() -> Iterator[dict[tuple[Any, ...], TestWeb]]:
    pool: dict[tuple[Any, ...], TestWeb] = {}
    yield pool
    for web in pool.values():
        web.stop()


@pytest.fixture
def testweb_factory(
    _testweb_pool: dict[tuple[Any, ...], TestWeb], tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., TestWeb]:
    def get(**options: Any) -> TestWeb:
        key = tuple(sorted(options.items()))
        web = _testweb_pool.get(key)
        if web is None or web.process is None or web.process.poll() is not None:
            web = start_testweb(tmp_path_factory.mktemp("testweb"), **options)
            _testweb_pool[key] = web
        web.reset()
        web.set_day(int(options.get("day", 0)))
        return web

    return get


@pytest.fixture
def testweb(testweb_factory: Callable[..., TestWeb]) -> TestWeb:
    """The default test web: profile ``mixed``, seed 1, 12 sites of 30 pages."""
    return testweb_factory()
