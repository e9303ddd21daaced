"""What only the PostgreSQL store has: migrations on a server, many workers at the same
moment (exactly-once admission, limits held, disjoint leases, no deadlock), round trips
counted honestly, and a connection that comes back. The contract both stores keep is in
``test_store_contract.py``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from dustless.errors import StoreError
from dustless.kinds import LinkKind
from dustless.states import NetState
from dustless.store import (
    AdmitURL,
    FetchRecord,
    HostInfo,
    Limits,
    NewURL,
    PostgresCrawlStore,
    RobotsRow,
    URLState,
    Verdict,
)
from dustless.store._pg_schema import PG_MIGRATIONS


def _url(path: str, host: str = "a.test", site: str | None = None) -> AdmitURL:
    url = f"http://{host}{path}"
    return AdmitURL(url, url, host, site or host, 1, LinkKind.ANCHOR, None, None, external=True)


def _in_threads(n: int, work: Callable[[int], Any]) -> list[Any]:
    """Run ``work(i)`` in ``n`` threads released at once; their results (or errors)."""
    start = threading.Barrier(n)
    out: list[Any] = [None] * n

    def run(i: int) -> None:
        start.wait()
        try:
            out[i] = work(i)
        except Exception as exc:  # reported by the caller's assertions
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return out


# -- schema ---------------------------------------------------------------------------------
# (That both dialects make one schema, version by version: ``test_schema_drift.py``.)
def test_migrations_apply_once_roll_back_on_failure_and_refuse_newer(pg_db: str) -> None:
    PostgresCrawlStore(pg_db).close()
    extra = (*PG_MIGRATIONS, ("ALTER TABLE urls ADD COLUMN note TEXT",))
    with PostgresCrawlStore(pg_db, migrations=extra) as s:
        assert s.schema_version == len(PG_MIGRATIONS) + 1
        assert s.query("SELECT note FROM urls") == []
    bad = (*extra, ("CREATE TABLE t (x int)", "THIS IS NOT SQL"))
    with pytest.raises(StoreError, match="syntax"):
        PostgresCrawlStore(pg_db, migrations=bad)
    with PostgresCrawlStore(pg_db, migrations=extra) as s:
        assert s.schema_version == len(extra)
        assert s.query("SELECT to_regclass('t')") == [(None,)]  # rolled back
    with pytest.raises(StoreError, match="newer"):
        PostgresCrawlStore(pg_db)


def test_queued_counts_after_an_update_cost_linear_time_whatever_the_first_statement(
    pg_db: str,
) -> None:
    """The update trigger's plan is made once per session, at its first statement: after a
    one-row claim, a commit of thousands of rows must not pay a join planned for one (it
    was quadratic: with V3's trigger alone this test fails, ~190x the small update's time)."""
    import time

    with PostgresCrawlStore(pg_db) as s:
        urls = [f"http://h{i % 20}.test/{i}" for i in range(6000)]
        s.add_urls([NewURL(x, x, x.split("/")[2], 1) for x in urls])
        s.claim_queued(1)  # the session's first UPDATE of urls: one row

        def update(ids: list[int]) -> float:
            started = time.perf_counter()
            s.query("UPDATE urls SET state = 'in-flight' WHERE id = ANY(?)", (ids,))
            took = time.perf_counter() - started
            s.query("UPDATE urls SET state = 'queued' WHERE id = ANY(?)", (ids,))
            return took

        ids = [r[0] for r in s.query("SELECT id FROM urls WHERE state = 'queued' ORDER BY id")]
        small = min(update(ids[:300]) for _ in range(3))
        large = min(update(ids[:5000]) for _ in range(3))
        # Linear: ~17x the rows, ~17x the time (quadratic: ~280x). Timing on a shared
        # machine is noisy, so the bound is far from both.
        assert large < 60 * small, (large, small)
        counts = dict(s.query("SELECT host, queued FROM host_work WHERE queued > 0"))
        assert sum(counts.values()) == 5999
        assert len(counts) == 20


def test_workers_starting_together_join_one_batch(pg_db: str) -> None:
    stores = [PostgresCrawlStore(pg_db, worker=f"w{i}") for i in range(4)]
    try:
        # A worker without seeds starts no crawl: there is none to join yet.
        assert stores[0].start_or_join("{}", 0.5, may_start=False) is None
        got = _in_threads(4, lambda i: stores[i].start_or_join("{}", 1.0))
        assert {batch.number for batch, _ in got} == {1}
        assert sorted(joined for _, joined in got) == [False, True, True, True]
        # Once the batch has ended there is nothing to join, and no second crawl starts
        # by itself (decided under the same lock).
        stores[0].end_batch(1, 2.0)
        stores[0].commit()
        assert stores[1].start_or_join("{}", 3.0) is None
        assert [b.number for b in stores[1].batches()] == [1]
    finally:
        for s in stores:
            s.close()


# -- many workers at once --------------------------------------------------------------------
def test_admission_is_exactly_once_and_limits_hold_under_concurrency(pg_db: str) -> None:
    n = 6
    stores = [PostgresCrawlStore(pg_db, worker=f"w{i}") for i in range(n)]
    stores[0].start_batch("{}", 0.0)
    # Every worker finds the same 40 URLs on 8 sites, in its own order.
    found = [_url(f"/{i}", f"h{i % 8}.test") for i in range(40)]
    limits = Limits(max_pages=25, max_pages_per_site=4)
    try:
        results = _in_threads(
            n, lambda i: stores[i].admit(found[i:] + found[:i], limits, 1).admitted
        )
        assert not [r for r in results if isinstance(r, Exception)], results
        queued = [a for r in results for a in r if a.verdict is Verdict.QUEUED]
        assert len(queued) == len({a.url_id for a in queued}) <= 25
        check = stores[0]
        (total,) = check.query("SELECT count(*) FROM urls")[0]
        assert total == len(queued)
        pages = dict(check.query("SELECT site, pages FROM sites"))
        per_site = dict(check.query("SELECT host, count(*) FROM urls GROUP BY host"))
        assert pages == per_site  # one party per site, counted exactly
        assert max(per_site.values()) <= 4
        assert sum(pages.values()) <= 25
    finally:
        for s in stores:
            s.close()


def test_concurrent_leases_are_disjoint(pg_db: str) -> None:
    a, b = PostgresCrawlStore(pg_db, worker="w1"), PostgresCrawlStore(pg_db, worker="w2")
    try:
        a.start_batch("{}", 0.0)
        a.admit([_url("/", f"h{i}.test") for i in range(100)], Limits(), 1)
        stores = (a, b)
        got = _in_threads(2, lambda i: stores[i].lease_hosts(60, now=10.0, ttl=60.0))
        hosts = [{x.host for x in leases} for leases in got]
        assert not hosts[0] & hosts[1]
        assert len(hosts[0] | hosts[1]) == 100
        owners = dict(a.query("SELECT owner, count(*) FROM host_work GROUP BY owner"))
        assert owners == {"w1": len(hosts[0]), "w2": len(hosts[1])}
    finally:
        a.close()
        b.close()


def test_spellings_stay_within_their_limit_across_workers(pg_db: str) -> None:
    n = 4
    stores = [PostgresCrawlStore(pg_db, worker=f"w{i}") for i in range(n)]
    base = "http://a.test/p"
    try:
        got = _in_threads(
            n,
            lambda i: (
                stores[i].add_spellings([(base, f"http://a.test/P{i}{j}") for j in range(3)], 5),
                stores[i].commit(),
            ),
        )
        assert not [r for r in got if isinstance(r, Exception)], got
        _, kept = stores[0].spelling_state(base, [])
        assert len(kept) == 5
    finally:
        for s in stores:
            s.close()


# -- round trips ---------------------------------------------------------------------------
def test_round_trips_are_counted_as_the_server_sees_them(pg_db: str, tmp_path: Path) -> None:
    store = PostgresCrawlStore(pg_db, worker="w1")
    try:
        store.start_batch("{}", 0.0)
        trace = tmp_path / "trace"
        with trace.open("w") as f:
            conn = store._db.conn
            conn.pgconn.trace(f.fileno())
            conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
            before = store.round_trips
            result = store.admit([_url(f"/{i}") for i in range(50)], Limits(max_pages=40), 1)
            assert store.round_trips - before == 2  # read under the locks, then write
            store.lease_hosts(10, now=1.0, ttl=60.0)
            claimed = store.claim_queued(100, hosts=["a.test"], per_host=20)
            # A second of crawling: fetch rows, host and robots rows, WARC marks, commit.
            store.record_fetches([FetchRecord(u.id, 2.0, "OK", status=200) for u in claimed])
            store.update_hosts([HostInfo("a.test", "192.0.2.1", "parsed")])
            store.put_robots([RobotsRow("http://a.test", 200, b"User-agent: *\n", 2.0)])
            store.warc_committed({"dustless-w1-00001.warc.gz": 1234})
            store.commit()
            trips = store.round_trips - before
            conn.pgconn.untrace()
        assert len([a for a in result.admitted if a.verdict is Verdict.QUEUED]) == 40
        # admit 2, lease 1, claim 1, fetch ids 1, the writes of the second and commit 1.
        assert trips == 6
        # The server sees one Sync (and answers one ReadyForQuery) per exchange; admit
        # asks for its reads' answers once in its middle with a Flush (before any Sync).
        # How the messages interleave is the scheduler's choice: psycopg asks for a flush
        # after a Sync only for answers it has not read yet, and on a loaded machine it has
        # often read some while still sending (psycopg/_pipeline_base.py), so neither the
        # Flush messages nor the turns from sending to reading count the round trips.
        sent = [line.split("\t") for line in trace.read_text().splitlines()]
        names = [(f[0], f[2]) for f in sent if len(f) > 2]
        syncs = names.count(("F", "Sync"))
        assert syncs == trips - 1
        assert names.count(("B", "ReadyForQuery")) == syncs
        assert names.index(("F", "Flush")) < names.index(("F", "Sync"))
        assert names.count(("F", "Flush")) <= trips
        assert not [f for f in sent if f[0] == "F" and f[2] == "Query"]  # nothing on the side
        assert store.query("SELECT count(*) FROM fetches")[0][0] == 20
    finally:
        store.close()


def test_a_commit_and_the_work_left_ride_with_the_admission(pg_db: str) -> None:
    """The engine's commit before a lease round: its fetch rows and the round's reading of
    the work left cost no round trip of their own when an admission goes first — they
    follow it in a transaction of their own, and the reading sees both (3 trips before)."""
    store = PostgresCrawlStore(pg_db, worker="w1")
    try:
        store.start_batch("{}", 0.0)
        store.register_worker("w1", 0.0)
        store.admit([_url(f"/{i}") for i in range(10)], Limits(), 1)
        assert [h.host for h in store.lease_hosts(10, now=1.0, ttl=60.0)] == ["a.test"]
        claimed = store.claim_queued(5, hosts=["a.test"])
        store.record_fetches([FetchRecord(u.id, 2.0, "OK", status=200) for u in claimed])
        store.warc_committed({"dustless-w1-00001.warc.gz": 1234})
        before = store.round_trips
        store.expect_work_left(2.0, alive_within=60.0)
        result = store.admit([_url("/", host="b.test")], Limits(), 1)
        left = store.work_left(2.0, alive_within=60.0)
        assert store.round_trips - before == 2  # the admission's two, nothing more
        assert result.admitted[0].verdict is Verdict.QUEUED
        # Read after the admission (b.test is free with work) and the heartbeat.
        assert (left.queued_hosts, left.leased_elsewhere, left.workers) == (1, 0, 1)
        assert store.query("SELECT count(*) FROM fetches")[0][0] == 5
        assert store.query("SELECT count(*) FROM urls WHERE state = 'done'")[0][0] == 5
        # Asked again, with no rider: its own round trip.
        before = store.round_trips
        assert store.work_left(3.0, alive_within=60.0) == left
        assert store.round_trips - before == 1
    finally:
        store.close()


def test_a_rider_with_no_exchange_to_ride_goes_with_work_left(pg_db: str) -> None:
    store = PostgresCrawlStore(pg_db, worker="w1")
    try:
        store.start_batch("{}", 0.0)
        store.admit([_url("/")], Limits(), 1)
        store.lease_hosts(1, now=1.0, ttl=60.0)
        (u,) = store.claim_queued(5, hosts=["a.test"])
        store.record_fetches([FetchRecord(u.id, 2.0, "OK", status=200, content_sha1="ab")])
        store.expect_work_left(2.0)
        before = store.round_trips
        # A read that comes first carries the rider and sees the writes before it.
        assert set(store.content_seen(["ab"])) == {"ab"}
        assert store.work_left(2.0).queued_hosts == 0
        assert store.round_trips - before == 1
        store.expect_work_left(3.0)
        before = store.round_trips
        store.work_left(3.0)
        assert store.round_trips - before == 1  # no exchange came: it asks, once
    finally:
        store.close()


def test_rows_riding_with_an_admission_are_fenced_by_their_lease(pg_db: str) -> None:
    """Fetch rows at the end of an admission's exchange are still refused once their lease
    was taken over (the worker stalled past it)."""
    w1 = PostgresCrawlStore(pg_db, worker="w1")
    w2 = PostgresCrawlStore(pg_db, worker="w2")
    try:
        w1.start_batch("{}", 0.0)
        w1.admit([_url(f"/{i}") for i in range(3)], Limits(), 1)
        w1.lease_hosts(1, now=1.0, ttl=1.0)
        claimed = w1.claim_queued(3, hosts=["a.test"])
        assert [h.host for h in w2.lease_hosts(1, now=10.0, ttl=60.0)] == ["a.test"]
        w1.record_fetches([FetchRecord(u.id, 11.0, "OK", status=200) for u in claimed])
        w1.expect_work_left(11.0)
        w1.admit([_url("/", host="b.test")], Limits(), 1)
        w1.work_left(11.0)
        assert w2.query("SELECT count(*) FROM fetches")[0][0] == 0
        assert w2.query("SELECT count(*) FROM urls WHERE state = 'queued'")[0][0] == 4
    finally:
        w1.close()
        w2.close()


# -- errors --------------------------------------------------------------------------------
def test_a_lost_connection_comes_back_once(pg_db: str, postgres: Any) -> None:
    store = PostgresCrawlStore(pg_db, worker="w1")
    try:
        store.start_batch("{}", 0.0)
        pid = store._db.conn.info.backend_pid
        with psycopg.connect(postgres.dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert store.has_seeds() is False  # replayed on a new connection
        assert store._db.conn.info.backend_pid != pid
    finally:
        store.close()


def test_errors_are_one_line_and_never_show_a_password(postgres: Any) -> None:
    port = postgres.dsn.rsplit(":", 1)[1].split("/")[0]
    dsn = f"postgresql://postgres:s3cret@127.0.0.1:{port}/no_such_db"
    with pytest.raises(StoreError) as err:
        PostgresCrawlStore(dsn, connect_timeout=2)
    message = str(err.value)
    assert "\n" not in message
    assert "s3cret" not in message
    assert "no_such_db" in message


def test_query_takes_sqlite_placeholders(pg_db: str) -> None:
    with PostgresCrawlStore(pg_db) as s:
        s.start_batch("{}", 0.0)
        assert s.query("SELECT ? || '?' || ?, 'a%'", ("x", "y")) == [("x?y", "a%")]


def test_an_exchange_waits_for_a_server_that_restarts(pg_db: str, postgres: Any) -> None:
    store = PostgresCrawlStore(pg_db, worker="w1")
    heard: list[float | None] = []
    store._db.on_outage = heard.append
    try:
        store.start_batch("{}", 0.0)
        store.add_urls([NewURL("http://a.test/", "http://a.test/", "a.test", 0, LinkKind.ANCHOR)])
        postgres.stop()
        # Started again while the store is waiting for it (the store's pauses are short).
        back = threading.Timer(1.0, postgres.start)
        back.start()
        try:
            assert store.has_seeds() is False  # waited, reconnected, replayed
        finally:
            back.join()
        assert len(store.query("SELECT id FROM urls")) == 1
    finally:
        store.close()
    assert heard[-1] is None  # back
    assert any(h is not None and h > 0 for h in heard)  # said so while it was away


def test_a_server_away_longer_than_the_outage_is_one_line(pg_db: str, postgres: Any) -> None:
    store = PostgresCrawlStore(pg_db, worker="w1")
    store._db.outage = 0.5
    store.start_batch("{}", 0.0)
    line = r"^lost the crawl DB on 127\.0\.0\.1:[^\n]*away for more than 0 s[^\n]*--resume$"
    try:
        postgres.stop()
        try:
            with pytest.raises(StoreError, match=line):
                store.has_seeds()
            # Given up: the worker stops, and nothing waits a second time (its close).
            heard: list[float | None] = []
            store._db.on_outage = heard.append
            store._db.defer("SELECT 1", None)  # something for close to send
            with pytest.raises(StoreError, match=line):
                store.has_seeds()
            store.close()
            assert heard == []
        finally:
            postgres.start()
    finally:
        store.close()


def test_a_server_gone_from_an_idle_connection_is_told_without_waiting(
    pg_db: str, postgres: Any
) -> None:
    store = PostgresCrawlStore(pg_db, worker="w1")
    try:
        store.start_batch("{}", 0.0)
        store.commit()
        assert store.maybe_away() is False  # idle, and the server is there
        postgres.ctl("-m", "fast", "-l", str(postgres.datadir.parent / "log"), "-w", "restart")
        assert store.maybe_away() is True  # its shutdown closed our connection
        store.reach()  # a fresh connection
        assert store.maybe_away() is False
        assert store.has_seeds() is False
    finally:
        store.close()


def _two_on_one_host(pg_db: str) -> tuple[PostgresCrawlStore, PostgresCrawlStore]:
    a = PostgresCrawlStore(pg_db, worker="w1")
    a.start_batch("{}", 0.0)
    a.add_urls([NewURL(f"http://a.test/{i}", f"http://a.test/{i}", "a.test", 0, LinkKind.ANCHOR)
                for i in range(3)])  # fmt: skip
    a.commit()
    return a, PostgresCrawlStore(pg_db, worker="w2")


def test_a_fetch_recorded_under_a_lost_lease_is_refused(pg_db: str) -> None:
    a, b = _two_on_one_host(pg_db)
    try:
        assert [x.host for x in a.lease_hosts(10, now=100.0, ttl=10.0)] == ["a.test"]
        mine = a.claim_queued(10, hosts=["a.test"], per_host=2)
        a.commit()
        # w1 stalls past its lease; w2 takes the host over, with w1's claims.
        assert [x.queued for x in b.lease_hosts(10, now=111.0, ttl=10.0)] == [3]
        b.commit()
        # w1 wakes up and records what it had in flight: refused, and its URLs stay queued.
        a.record_fetches([FetchRecord(u.id, 112.0, NetState.OK, status=200) for u in mine])
        a.commit()
        assert a.query("SELECT count(*) FROM fetches") == [(0,)]
        assert a.query("SELECT count(*) FROM urls WHERE state = 'queued'") == [(3,)]
        assert a.renew_leases(["a.test"], now=112.0, ttl=10.0) == set()
        a.commit()
        # The new holder's rows are written.
        theirs = b.claim_queued(10, hosts=["a.test"], per_host=10)
        b.record_fetches([FetchRecord(u.id, 113.0, NetState.OK, status=200) for u in theirs])
        b.commit()
        assert b.query("SELECT count(*), count(DISTINCT url_id) FROM fetches") == [(3, 3)]
        # A lease of w1's own that ran out unnoticed is renewed as it was: same epoch.
        assert b.query("UPDATE host_work SET lease_until = 0 RETURNING epoch") == [(2,)]
        b.lease_hosts(10, now=200.0, ttl=10.0)
        b.commit()
        assert b.query("SELECT owner, epoch FROM host_work") == [("w2", 2)]
    finally:
        a.close()
        b.close()


def test_urls_given_back_under_a_lost_lease_stay_with_their_new_holder(pg_db: str) -> None:
    """A worker that stalled past its lease, then gives its window back before it learns the
    lease is lost (a restart made its renewal fail; the next lease round reached the server):
    its "back to the queue" must not undo the new holder's work — else a URL already fetched
    there is queued, and fetched, again (issue 24: two fetch rows for two seeds)."""
    a, b = _two_on_one_host(pg_db)
    try:
        a.lease_hosts(10, now=100.0, ttl=10.0)
        mine = a.claim_queued(10, hosts=["a.test"], per_host=3)
        a.commit()
        b.lease_hosts(10, now=111.0, ttl=10.0)  # w1's lease ran out: w2 has the host
        theirs = b.claim_queued(10, hosts=["a.test"], per_host=3)
        b.record_fetches([FetchRecord(u.id, 112.0, NetState.OK, status=200) for u in theirs])
        b.commit()
        fetched = b.query("SELECT id, state FROM urls ORDER BY id")
        assert {state for _, state in fetched} == {"done"}
        a.set_url_state([u.id for u in mine], URLState.QUEUED)
        a.commit()
        assert a.query("SELECT id, state FROM urls ORDER BY id") == fetched
    finally:
        a.close()
        b.close()


def test_a_worker_claims_no_url_of_a_host_it_no_longer_leases(pg_db: str) -> None:
    """A stalled worker that wakes still holding a host in memory (its renewal not yet
    answered) claims nothing there once another worker took the host over: the URLs stay
    queued for their new holder instead of waiting, in flight for nobody, for the end."""
    a, b = _two_on_one_host(pg_db)
    try:
        a.lease_hosts(10, now=100.0, ttl=10.0)
        a.commit()
        b.lease_hosts(10, now=111.0, ttl=10.0)
        b.commit()
        assert a.claim_queued(10, hosts=["a.test"], per_host=3) == []
        a.commit()
        assert len(b.claim_queued(10, hosts=["a.test"], per_host=3)) == 3
    finally:
        a.close()
        b.close()


def test_a_claim_or_lease_replayed_after_a_lost_answer_gives_what_it_took(pg_db: str) -> None:
    a, b = _two_on_one_host(pg_db)
    try:
        a.lease_hosts(10, now=100.0, ttl=60.0)
        first = a.claim_queued(10, hosts=["a.test"], per_host=2)
        a.commit()
        # The claim committed but its answer was lost: the replay must give those URLs
        # again (else they stay in flight with no one to fetch them).
        a._claims.clear()
        a._db.replaying = True
        again = a.claim_queued(10, hosts=["a.test"], per_host=10)
        assert {u.id for u in first} < {u.id for u in again}
        assert len(again) == 3
        # Likewise a lease: the host this worker holds in the DB but does not know of.
        a._epochs.clear()
        a._db.replaying = True
        assert [x.host for x in a.lease_hosts(10, now=101.0, ttl=60.0)] == ["a.test"]
        assert a.query("SELECT count(*) FROM urls WHERE state = 'in-flight'") == [(3,)]
    finally:
        a.close()
        b.close()
