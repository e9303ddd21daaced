"""Many machines, when things go wrong: a worker stalled past its lease, and a PostgreSQL
restart during a crawl. Workers are processes (``dustless crawl DIR … --db postgresql://…``)
on the test web and one throwaway PostgreSQL server.

What must hold: a worker stopped (SIGSTOP) longer than its lease and then continued never
sends a request for a host another worker took over meanwhile (the test web sees one request
at a time per host) and records nothing under the lease it lost (no URL has two fetch rows);
a ``pg_ctl restart -m fast`` during a crawl of three workers costs nothing (every worker
exits 0, every page is fetched once). The test web's latency keeps requests open long
enough that an overlap would be seen.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crawl.workers_support import (
    fetched_twice,
    final_states,
    finish,
    started_and_connected,
    until,
)
from dustless.store import PostgresCrawlStore, SQLiteStore

pytestmark = pytest.mark.slow  # most of a minute: first under xdist (conftest)

DELAY = 0.1  # seconds between two requests to one host
TTL = 2.0  # seconds a lease lasts unrenewed
LATENCY = ("--latency", "0.05")  # every answer of the test web waits this long


def _worker(
    web: Any, out: Path, db: str, name: str, *extra: str, delay: float = DELAY
) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable, "-m", "dustless", "crawl", str(out), *web.seeds, *web.resolve_args,
        "--db", db, "--worker", name, "--delay", str(delay), "--delay-factor", "0",
        "--lease-ttl", str(TTL), "--max-depth", "50", "--quiet", *extra,
    ]  # fmt: skip
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture
def workers() -> Any:
    """Started workers, killed and reaped at the test's end whatever happened (a failed wait
    must not leave processes crawling, nor their pipes for a later test's GC to warn about)."""
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
        proc.communicate()


def _one_request_at_a_time(web: Any) -> None:
    for host, h in web.stats()["hosts"].items():
        assert h["max_concurrent"] == 1, (host, h)


@pytest.fixture
def reference(testweb_factory: Any, tmp_path: Path, ch: Any) -> Callable[..., Any]:
    """``reference(**web)``: the web, and what one crawl on SQLite reaches on it."""

    def crawl(**options: Any) -> tuple[Any, set[tuple[str, str, str | None]]]:
        web = testweb_factory(profile="clean", extra_args=LATENCY, **options)
        out = tmp_path / "sqlite"
        result = ch.crawl(web, out, delay=DELAY, max_depth=50)
        assert result.finished
        with SQLiteStore(out) as store:
            want = final_states(store)
        web.reset()
        return web, want

    return crawl


# The stalled worker's hosts must still hold work when it is stopped, however slowly a loaded
# machine starts the second worker: a host's crawl lasts at least its pages × this rest
# (politeness, not CPU, sets it), 16 s for the 40 pages of a site.
STALL_DELAY = 0.4


def _work_of(worker: str) -> str:
    """A host of ``worker``'s with work left: queued, or claimed in its window (in flight in
    the DB; a worker claims a few dozen URLs at once, so ``queued`` alone is soon 0)."""
    return (
        f"SELECT 1 FROM host_work WHERE owner = '{worker}' AND queued + (SELECT count(*) "
        "FROM urls u WHERE u.host = host_work.host AND u.state = 'in-flight') > 0"
    )


W1_WORK, W2_WORK = _work_of("w1"), _work_of("w2")


def test_a_worker_stalled_past_its_lease_sends_and_records_nothing_for_lost_hosts(
    reference: Any, pg_db: str, tmp_path: Path, workers: list[Any]
) -> None:
    web, want = reference(sites=4, pages_per_site=40)
    w1 = _worker(web, tmp_path / "w1", pg_db, "w1", delay=STALL_DELAY)
    workers.append(w1)
    store = PostgresCrawlStore(pg_db, worker="check")
    try:
        until(lambda: store.query("SELECT count(*) FROM fetches WHERE worker = 'w1'")[0][0] >= 5)
        w2 = _worker(web, tmp_path / "w2", pg_db, "w2", delay=STALL_DELAY)
        workers.append(w2)
        until(lambda: store.query("SELECT 1 FROM host_work WHERE owner = 'w2'"))
        until(lambda: store.query(W1_WORK))
        w1.send_signal(signal.SIGSTOP)
        try:
            # w2 takes w1's hosts over once their leases have run out, and crawls them.
            until(lambda: not store.query(W1_WORK), timeout=30)
            until(lambda: store.query(W2_WORK))  # … and has work on them when w1 goes on
        finally:
            w1.send_signal(signal.SIGCONT)
        finish(w1, w2)
        assert final_states(store) == want  # nothing lost either
        assert fetched_twice(store) == []
    finally:
        store.close()
    _one_request_at_a_time(web)


def test_workers_ride_out_a_postgresql_restart(
    reference: Any, postgres: Any, pg_db: str, tmp_path: Path, workers: list[Any]
) -> None:
    web, want = reference(sites=6, pages_per_site=40)
    # Not held: a pause past the 2 s lease is a stall, the case of the test above and of
    # tests/crawl/test_lease_lost_robots.py (a worker paused with its robots.txt requests out
    # never ended), not this test's.
    procs = started_and_connected(
        pg_db,
        ("w1", "w2", "w3"),
        lambda n: _worker(web, tmp_path / n, pg_db, n),
        workers,
        hold=False,
    )
    with PostgresCrawlStore(pg_db, worker="check") as store:
        until(lambda: store.query("SELECT count(*) FROM fetches")[0][0] >= 20)
    # -l: the new server's output goes to its log, not to the pipe ``ctl`` reads to its end.
    postgres.ctl("-m", "fast", "-l", str(postgres.datadir.parent / "log"), "-w", "restart")
    finish(*procs)
    with PostgresCrawlStore(pg_db, worker="check") as store:
        assert final_states(store) == want
        assert fetched_twice(store) == []
        assert store.batches()[-1].ended_at is not None
    _one_request_at_a_time(web)
