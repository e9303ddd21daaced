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

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# A bug of dustless met while crawling fails the test loudly (in a real crawl it is the
# URL's recorded ``iErr`` state): in-process crawls and the CLI subprocesses alike.
os.environ.setdefault("DUSTLESS_STRICT", "1")

from pg_fixture import Postgres, running_postgres
from testweb_fixture import TestWeb, start_testweb

# Property tests on a loaded machine: data generation that is merely slow must not fail a
# run (the too_slow health check measures wall time); a real counterexample still does.
settings.register_profile(
    "dustless", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("dustless")


@pytest.fixture(scope="session")
def _testweb_pool() -> Iterator[dict[tuple[Any, ...], TestWeb]]:
    pool: dict[tuple[Any, ...], TestWeb] = {}
    yield pool
    # All asked first, then waited for: a server takes a moment to shut down, and a worker
    # ends with a dozen of them.
    for web in pool.values():
        web.terminate()
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


# -- PostgreSQL (the shortener's store, and the crawl store shared by workers) -------------


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """A throwaway PostgreSQL server: initdb in a temp dir, a random port, stopped at the end."""
    with running_postgres() as server:
        yield server


@pytest.fixture
def pg_db(postgres: Postgres) -> Iterator[str]:
    """A fresh database on the throwaway server for one test."""
    dsn = postgres.new_database()
    yield dsn
    postgres.drop_database(dsn)


@pytest.fixture(params=["sqlite", "postgresql"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """``open_store(worker="local")``: a handle on this test's crawl DB — SQLite, then
    PostgreSQL: every test that takes this fixture runs on both stores (the ``CrawlStore``
    contract). Each call opens the same DB again, as a resumed run or another worker would."""
    from dustless.store import PostgresCrawlStore, SQLiteStore

    opened: list[Any] = []
    if request.param == "sqlite":
        path = tmp_path / "crawl.db"

        def open_(worker: str = "local") -> Any:
            opened.append(SQLiteStore(path, worker=worker))
            return opened[-1]

        yield open_
    else:
        server: Postgres = request.getfixturevalue("postgres")
        dsn = server.new_database()

        def open_(worker: str = "local") -> Any:
            opened.append(PostgresCrawlStore(dsn, worker=worker))
            return opened[-1]

        yield open_
    for store in opened:
        with contextlib.suppress(Exception):
            store.close()
    if request.param != "sqlite":
        server.drop_database(dsn)


# -- the order of files in two processes (make test: pytest -n 2 --dist loadfile) ------------


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the files holding a ``slow`` test run first.

    ``--dist loadfile`` hands out whole files in the order collected: a file of a minute or
    two handed out last keeps one process busy while the other has nothing left, and that
    tail was minutes of the run. Started first, the long files overlap the short ones, which
    fill in around them (the Makefile passes ``--no-loadscope-reorder``, or xdist would order
    files by their number of tests). A stable sort: both processes must collect the same
    order, and within a file the order stays as written."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)
