"""PostgreSQL away, met by a call that must not wait (the engine's loop: ``impatient``): it
raises ``DatabaseAway`` at once, applies nothing of its own, loses nothing pending, and what a
lost answer held comes back exactly once (``_pg_conn``'s module docstring).

The server stays up; a forwarder between the store and it (``pg_proxy``) is cut and restored,
so the outage is this store's alone and starts exactly when the test says. "At once" is
judged by an event, never a clock: the call returns while the forwarder is still cut — an
exchange that waited would wait until it is restored (its back-off lasts 120 s).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from dustless.errors import DatabaseAway
from dustless.kinds import LinkKind
from dustless.store import AdmitURL, Limits, PostgresCrawlStore
from store.pg_proxy import PgProxy

BOUND = 60.0  # seconds an impatient call may take under load; a waiting one takes 120+


def _url(path: str, host: str = "a.test") -> AdmitURL:
    url = f"http://{host}{path}"
    return AdmitURL(url, url, host, host, 1, LinkKind.ANCHOR, 1, None)


@pytest.fixture
def proxy(pg_db: str) -> Any:
    p = PgProxy(pg_db)
    yield p
    p.close()


def _in_thread(call: Any) -> tuple[threading.Event, list[Any]]:
    """Run ``call`` in a thread; the event is set when it returned or raised."""
    done = threading.Event()
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(call())
        except BaseException as exc:
            out.append(exc)
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done, out


def _store(proxy: PgProxy) -> PostgresCrawlStore:
    store = PostgresCrawlStore(proxy.dsn, worker="w1")
    store.start_batch("{}", 0.0)
    store.admit([_url(f"/{i}") for i in range(12)], Limits(), 1)
    assert [x.host for x in store.lease_hosts(10, now=100.0, ttl=600.0)] == ["a.test"]
    store.commit()
    return store


def test_a_claim_whose_answer_is_lost_raises_at_once_and_its_urls_come_back_once(
    proxy: PgProxy, pg_db: str
) -> None:
    store = _store(proxy)
    first = store.claim_queued(3, hosts=["a.test"], per_host=3)
    store.end_batch(1, 5.0)  # deferred: rides with the next exchange (the lost one)
    proxy.lose_next_answer()

    def claim() -> Any:
        with store.impatient():
            return store.claim_queued(4, hosts=["a.test"], per_host=4)

    done, out = _in_thread(claim)
    assert done.wait(BOUND), "the impatient claim waited for the server"
    assert proxy.answers_lost.is_set()
    (exc,) = out
    assert isinstance(exc, DatabaseAway)
    assert exc.sent
    # Still cut: a call that must not wait does not even try to connect.
    with store.impatient(), pytest.raises(DatabaseAway):
        store.claim_queued(4, hosts=["a.test"], per_host=4)
    proxy.restore()
    store.reach()  # the commit thread's wait: connects again, sends what is pending
    again = store.claim_queued(4, hosts=["a.test"], per_host=4)
    store.commit()
    ids = [u.id for u in first + again]
    assert len(ids) == len(set(ids)) == 3 + 4 + 4  # the lost four, then four more
    with PostgresCrawlStore(pg_db, worker="check") as check:
        # Every URL claimed is known to the worker: none in flight behind its back.
        ((n,),) = check.query("SELECT count(*) FROM urls WHERE state = 'in-flight'")
        assert n == len(ids)
        assert check.batches()[-1].ended_at == 5.0  # the write that rode, applied once
    store.close()


def _lease_meets_the_outage(store: Any) -> DatabaseAway:
    """An impatient lease round, in a thread: it must give up at once, with DatabaseAway."""

    def lease() -> Any:
        with store.impatient():
            return store.lease_hosts(10, now=110.0, ttl=600.0)

    done, out = _in_thread(lease)
    assert done.wait(BOUND), "the impatient lease round waited for the server"
    (exc,) = out
    assert isinstance(exc, DatabaseAway)
    return exc


def test_a_lease_round_cut_before_it_is_sent_applies_nothing_and_goes_on_later(
    proxy: PgProxy, pg_db: str
) -> None:
    store = _store(proxy)
    store.admit([_url("/b", "b.test")], Limits(), 1)
    store.commit()
    proxy.cut()
    _lease_meets_the_outage(store)
    proxy.restore()
    store.reach()
    assert [x.host for x in store.lease_hosts(10, now=111.0, ttl=600.0)] == ["b.test"]
    store.close()


def test_a_lease_round_whose_answer_is_lost_is_read_back_by_the_next(proxy: PgProxy) -> None:
    store = _store(proxy)
    store.admit([_url("/b", "b.test")], Limits(), 1)
    store.commit()
    proxy.lose_next_answer()
    exc = _lease_meets_the_outage(store)
    assert exc.sent
    proxy.restore()
    store.reach()
    # Committed, its answer lost: the next round hands the host over all the same.
    assert [x.host for x in store.lease_hosts(10, now=111.0, ttl=600.0)] == ["b.test"]
    store.close()
