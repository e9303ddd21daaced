"""Many machines: workers (``dustless crawl DIR … --db postgresql://…``) crawl the test web
together, against one throwaway PostgreSQL server.

Each worker is its own process, as on its own machine. What must hold: the workers reach the
same URLs, in the same states, as one crawl on SQLite; no URL is fetched twice; the test
web's own counters show one request at a time per host and never less than the politeness
delay between two, whichever worker sent them; a ``kill -9`` costs at most what the killed
worker had claimed, and its hosts come back within a lease's TTL; a worker that joins a
running crawl gets a share of the hosts; workers that learn rules while crawling put each
other's rules in force and lose no document. Short TTLs and small webs keep it to seconds.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from crawl.workers_support import (
    fetched_twice,
    final_states,
    finish,
    started_and_connected,
    until,
)
from dustless.store import CrawlStore, PostgresCrawlStore, SQLiteStore

pytestmark = pytest.mark.slow  # a minute: first under xdist (conftest)

DELAY = 0.1  # seconds between two requests to one host
TTL = 2.0  # seconds a lease lasts unrenewed


def _worker(web: Any, out: Path, db: str, name: str, *extra: str) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable, "-m", "dustless", "crawl", str(out), *web.seeds, *web.resolve_args,
        "--db", db, "--worker", name, "--delay", str(DELAY), "--delay-factor", "0",
        "--lease-ttl", str(TTL), "--max-depth", "50", "--quiet", *extra,
    ]  # fmt: skip
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture
def reference(testweb_factory: Any, tmp_path: Path, ch: Any) -> Callable[..., Any]:
    """``reference(**web)``: the web, and what one crawl on SQLite reaches on it."""

    def crawl(**options: Any) -> tuple[Any, set[tuple[str, str, str | None]]]:
        web = testweb_factory(profile="clean", **options)
        out = tmp_path / "sqlite"
        result = ch.crawl(web, out, delay=DELAY, max_depth=50)
        assert result.finished
        with SQLiteStore(out) as store:
            want = final_states(store)
        web.reset()
        return web, want

    return crawl


def test_three_workers_reach_what_one_sqlite_crawl_reaches_politely(
    reference: Any, pg_db: str, tmp_path: Path
) -> None:
    web, want = reference(sites=6, pages_per_site=20)
    procs = [_worker(web, tmp_path / f"w{i}", pg_db, f"w{i}") for i in (1, 2, 3)]
    finish(*procs)
    with PostgresCrawlStore(pg_db, worker="check") as store:
        assert final_states(store) == want
        assert fetched_twice(store) == []
        assert store.batches()[-1].ended_at is not None
        by_worker = dict(store.query("SELECT worker, count(*) FROM fetches GROUP BY worker"))
        files = store.query("SELECT DISTINCT worker, warc_file FROM fetches")
    # Which worker fetched what is timing's choice (on a loaded machine one may fetch the
    # whole web before another has started): the share is not asserted here, but in
    # test_a_worker_that_joins_takes_a_share_of_the_hosts.
    assert set(by_worker) <= {"w1", "w2", "w3"}
    for worker, name in files:  # each worker's records are in its own directory
        assert name.startswith(f"dustless-{worker}-")
        assert (tmp_path / worker / "warc" / name).is_file()
    stats = web.stats()
    assert stats["duplicate_fetches"] == 0
    for host, h in stats["hosts"].items():
        assert h["max_concurrent"] == 1, host
        assert h["min_gap_s"] is None or h["min_gap_s"] >= DELAY - 0.002, (host, h)


def test_a_killed_workers_hosts_are_taken_over_and_nothing_is_lost(
    reference: Any, pg_db: str, tmp_path: Path
) -> None:
    web, want = reference(sites=4, pages_per_site=40)
    # w1 is held until w2 has connected: on a loaded machine w1 could otherwise have
    # crawled the whole web alone before w2 started.
    w1, w2 = started_and_connected(
        pg_db, ("w1", "w2"), lambda n: _worker(web, tmp_path / n, pg_db, n), []
    )
    store = PostgresCrawlStore(pg_db, worker="check")
    try:
        # Both work (w1 gave hosts to w2), and w1 has committed some of its pages.
        until(lambda: store.query("SELECT 1 FROM host_work WHERE owner = 'w2'"))
        until(lambda: store.query("SELECT count(*) FROM fetches WHERE worker = 'w1'")[0][0] >= 10)
        w1.send_signal(signal.SIGKILL)
        w1.communicate()
        killed = time.monotonic()
        hosts = [h for (h,) in store.query("SELECT host FROM host_work WHERE owner = 'w1'")]
        (claimed,) = store.query(
            "SELECT count(*) FROM urls u JOIN host_work h ON h.host = u.host "
            "WHERE h.owner = 'w1' AND u.state = 'in-flight'"
        )[0]
        assert hosts, "w1 held no lease when it was killed"
        # Within a TTL and one lease round, w2 holds every host w1 had that has work left.
        until(
            lambda: (
                not store.query(
                    "SELECT 1 FROM host_work WHERE owner = 'w1' OR (owner IS NULL AND queued > 0)"
                )
            ),
            timeout=60,
        )
        # Within a TTL and a lease round, give or take a loaded machine's scheduling: the
        # bound is loose, and still below the default TTL (60 s) a worker ignoring
        # --lease-ttl would take.
        assert time.monotonic() - killed <= TTL + 30
        finish(w2)
        assert final_states(store) == want  # complete: nothing w1 had claimed is lost
        assert fetched_twice(store) == []
    finally:
        store.close()
    # What w1 fetched but had not committed is fetched again, once: never more than it held.
    assert web.stats()["duplicate_fetches"] <= claimed


def test_a_worker_that_joins_takes_a_share_of_the_hosts(
    reference: Any, pg_db: str, tmp_path: Path
) -> None:
    web, want = reference(sites=8, pages_per_site=40)
    # A share needs work left when w2 has started: 40 pages at 0.3 s are 12 s a host, and
    # w2 joins after w1's first 8 pages, however long a loaded machine takes to start it
    # (at 0.1 s a host, 4 s, which a slow start of w2 could miss).
    slow = ("--delay", "0.3")
    w1 = _worker(web, tmp_path / "w1", pg_db, "w1", *slow)
    store = PostgresCrawlStore(pg_db, worker="check")
    try:
        until(lambda: store.query("SELECT count(*) FROM fetches WHERE worker = 'w1'")[0][0] >= 8)
        # The same command, started later (its seeds are in the DB already).
        w2 = _worker(web, tmp_path / "w2", pg_db, "w2", *slow)
        finish(w1, w2)
        assert final_states(store) == want
        hosts = dict(
            store.query("SELECT worker, count(DISTINCT u.host) FROM fetches f "
                        "JOIN urls u ON u.id = f.url_id GROUP BY worker")
        )  # fmt: skip
    finally:
        store.close()
    assert hosts.get("w2", 0) >= 3, hosts  # of 8


def test_status_shows_workers_leases_and_the_queue(
    pg_db: str, testweb_factory: Any, tmp_path: Path
) -> None:
    # Read-only: on a database no worker has used yet it creates nothing.
    empty = subprocess.run(
        [sys.executable, "-m", "dustless", "crawl", "--db", pg_db, "--status"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert "no crawl yet" in empty.stdout
    with psycopg.connect(pg_db) as conn:
        assert conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone() == (0,)
    web = testweb_factory(profile="clean", sites=2, pages_per_site=5)
    finish(_worker(web, tmp_path / "w1", pg_db, "w1"))
    done = subprocess.run(
        [sys.executable, "-m", "dustless", "crawl", "--db", pg_db, "--status"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    out = done.stdout
    assert "batch 1, finished" in out
    assert re.search(r"^  w1 +ended ", out, re.M), out  # not "alive": the batch is over
    assert "hosts leased" in out
    assert "URLs queued on 0 hosts" in out
    # A resume of a finished worker says so; a second start in its directory is refused.
    again = _worker(web, tmp_path / "w1", pg_db, "w1")
    _, err = again.communicate(timeout=60)
    assert again.returncode == 2
    assert b"--resume" in err
    # A worker started with the others but last, after the crawl ended: nothing left to do,
    # and no second crawl started. Other seeds in a finished crawl's DB: refused.
    late = _worker(web, tmp_path / "w2", pg_db, "w2")
    _, err = late.communicate(timeout=60)
    assert late.returncode == 0, err.decode()
    assert b"before this worker joined: nothing left to do" in err
    other = subprocess.run(
        [sys.executable, "-m", "dustless", "crawl", str(tmp_path / "w3"), "http://other.test/",
         "--db", pg_db, "--quiet"],
        capture_output=True, timeout=60,
    )  # fmt: skip
    assert other.returncode == 2
    assert b"start a new crawl in a new database" in other.stderr
    with psycopg.connect(pg_db) as conn:
        assert conn.execute("SELECT count(*) FROM crawls").fetchone() == (1,)


def _documents(store: CrawlStore, truth: dict[str, str]) -> set[str]:
    """The test web's resources the crawl downloaded (by the truth's resource ids)."""
    rows = store.query(
        "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id "
        "WHERE f.state = 'OK' AND f.status = 200"
    )
    return {truth[url] for (url,) in rows if truth.get(url)}


def test_workers_learning_at_once_share_their_rules_and_lose_no_document(
    testweb_factory: Any, pg_db: str, tmp_path: Path, ch: Any
) -> None:
    web = testweb_factory(profile="canonical", sites=6, pages_per_site=30)
    assert ch.crawl(web, tmp_path / "lite", max_depth=50).finished  # no learning
    with SQLiteStore(tmp_path / "lite") as lite:
        want = _documents(lite, {t.url: t.rid for t in web.truth() if t.rid != "-"})
    web.reset()
    procs = [_worker(web, tmp_path / n, pg_db, n, "--learn") for n in ("w1", "w2")]
    finish(*procs)
    truth = {t.url: t.rid for t in web.truth() if t.rid != "-"}
    with PostgresCrawlStore(pg_db, worker="check") as store:
        got = _documents(store, truth)
        rules = store.query("SELECT host, spec, worker FROM learned_rules")
        merged = store.query("SELECT count(*) FROM urls WHERE state = 'merged'")[0][0]
    assert want <= got  # learning never costs a document, whichever worker learned what
    assert merged > 0  # and it saved fetches
    assert len({(h, s) for h, s, _ in rules}) == len(rules)  # one row per host and rule
    by = {w: {h for h, _, who in rules if who == w} for w in ("w1", "w2")}
    # Each learns from the hosts it crawled; which hosts those are is timing's choice (one
    # worker may have crawled most of them before the other started), so not that both did.
    learned = by["w1"] | by["w2"]
    assert learned, by
    # A worker puts the other's rules in force too: its file of rules names their hosts.
    files = {w: (tmp_path / w / "learned-rules.xml").read_text() for w in ("w1", "w2")}
    assert any(h in files[w] for w in ("w1", "w2") for h in learned - by[w]), by
