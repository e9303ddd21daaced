"""Many machines: PostgreSQL stopped for a while during a crawl of two workers. The workers
keep fetching the URLs they hold (their leases are still provably theirs: a long TTL here),
commit everything once the server is back, and end as a crawl on SQLite does.

Workers are processes (``dustless crawl DIR … --db postgresql://…``) on the test web and the
session's throwaway PostgreSQL server, which this test stops (``pg_ctl stop -m fast``) and
starts again. The outcome asserted: requests reached the web while the server was down,
every worker exits 0, and the URLs' states equal those of one crawl on SQLite — whichever
of a worker's calls meets the outage first: its commit thread's, or one of its loop's own (a
claim, an admission, a lease round), which never waits (``DatabaseAway``).

The second test makes the loop's own claim the one that meets it, every time: one worker,
in this process, its DB reached through a forwarder (``store/pg_proxy.py``) that is cut right
before the loop claims, while it holds URLs to fetch.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from crawl.workers_support import fetched_twice, final_states, started_and_connected, until
from dustless.cli.main import main as dustless_main
from dustless.crawl.hosts import HostTable
from dustless.store import PostgresCrawlStore, SQLiteStore
from store.pg_proxy import PgProxy

DELAY = 0.1  # seconds between two requests to one host
TTL = 60.0  # seconds a lease lasts unrenewed: fetching may go on for 3/4 of it
LATENCY = ("--latency", "0.05")  # every answer of the test web waits this long
DURING = 10  # requests the web must see while the server is down
DEADLINE = 60.0  # seconds to see them (a loaded machine); far beyond what it takes
CLAIMED = "SELECT count(*) FROM urls WHERE state = 'in-flight'"


def _worker(web: Any, out: Path, db: str, name: str) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable, "-m", "dustless", "crawl", str(out), *web.seeds, *web.resolve_args,
        "--db", db, "--worker", name, "--delay", str(DELAY), "--delay-factor", "0",
        "--lease-ttl", str(TTL), "--max-depth", "50", "--quiet",
    ]  # fmt: skip
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture
def workers() -> Any:
    """Started workers, killed and reaped at the test's end whatever happened."""
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
        proc.communicate()


def _requests(web: Any) -> int:
    return sum(h["requests"] for h in web.stats()["hosts"].values())


def test_workers_fetch_while_postgresql_is_stopped(
    testweb_factory: Any,
    ch: Any,
    postgres: Any,
    pg_db: str,
    tmp_path: Path,
    workers: list[Any],
) -> None:
    web = testweb_factory(profile="clean", sites=6, pages_per_site=40, extra_args=LATENCY)
    reference = ch.crawl(web, tmp_path / "sqlite", delay=DELAY, max_depth=50)
    assert reference.finished
    with SQLiteStore(tmp_path / "sqlite") as store:
        want = final_states(store)
    web.reset()

    procs = started_and_connected(
        pg_db, ("w1", "w2"), lambda n: _worker(web, tmp_path / n, pg_db, n), workers
    )
    with PostgresCrawlStore(pg_db, worker="check") as store:
        # The workers hold URLs to fetch: claimed (in flight in the DB), so in their memory.
        until(lambda: store.query(CLAIMED)[0][0] >= 2 * DURING, timeout=DEADLINE)
    postgres.stop()
    try:
        before = _requests(web)
        # Requests keep coming while the server is down (the workers fetch what they hold).
        during = until(lambda: max(0, _requests(web) - before) >= DURING, timeout=DEADLINE)
    finally:
        postgres.start()
    assert during
    for proc in procs:
        _out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err.decode()[-2000:]
    with PostgresCrawlStore(pg_db, worker="check") as store:
        assert final_states(store) == want
        assert store.query("SELECT url_id FROM fetches GROUP BY url_id HAVING count(*) > 1") == []
        assert store.batches()[-1].ended_at is not None


HELD = 20  # URLs the worker holds in memory when its DB is cut


def test_a_worker_whose_own_claim_meets_the_outage_keeps_fetching(
    testweb_factory: Any,
    ch: Any,
    pg_db: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    web = testweb_factory(profile="clean", sites=6, pages_per_site=60, extra_args=LATENCY)
    reference = ch.crawl(web, tmp_path / "sqlite", delay=DELAY, max_depth=50)
    assert reference.finished
    with SQLiteStore(tmp_path / "sqlite") as store:
        want = final_states(store)
    web.reset()

    proxy = PgProxy(pg_db)
    loop_thread = threading.get_ident()  # the crawl's loop runs in this thread
    tables: list[HostTable] = []
    cut = threading.Event()
    real_refill, real_claim = HostTable.refill, PostgresCrawlStore.claim_queued

    def refill(self: HostTable, force: bool = False) -> bool:
        tables[:] = [self]
        return real_refill(self, force)

    def claim(self: PostgresCrawlStore, limit: int, **kw: Any) -> Any:
        # The loop's claim, the worker holding URLs: the DB goes away right before it, so
        # this claim is the first call to meet the outage (no commit runs while it claims).
        held = len(tables[0].frontier) if tables else 0
        if not cut.is_set() and held >= HELD and threading.get_ident() == loop_thread:
            proxy.cut()
            cut.set()
        return real_claim(self, limit, **kw)

    monkeypatch.setattr(HostTable, "refill", refill)
    monkeypatch.setattr(PostgresCrawlStore, "claim_queued", claim)
    during: list[int] = []

    def watch() -> None:
        try:
            if not cut.wait(DEADLINE):
                return
            before = _requests(web)
            # While cut, the worker fetches what it holds (its loop does not wait).
            during.append(until(lambda: max(0, _requests(web) - before) >= DURING, DEADLINE))
        finally:
            proxy.restore()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    argv = [
        "crawl", str(tmp_path / "w1"), *web.seeds, *web.resolve_args, "--db", proxy.dsn,
        "--worker", "w1", "--delay", str(DELAY), "--delay-factor", "0",
        "--lease-ttl", str(TTL), "--max-depth", "50", "--quiet",
    ]  # fmt: skip
    try:
        status = dustless_main(argv)
    finally:
        proxy.restore()
        watcher.join(timeout=2 * DEADLINE)
        proxy.close()
    assert cut.is_set(), "the worker never claimed while holding URLs"
    assert during, "no request reached the web while the DB was cut"
    assert status == 0
    with PostgresCrawlStore(pg_db, worker="check") as store:
        assert final_states(store) == want
        assert fetched_twice(store) == []
        assert store.batches()[-1].ended_at is not None
