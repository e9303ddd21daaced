"""Host leases: one owner per host at a time, a dead owner's hosts come back (ARCHITECTURE
"Many machines"). Two stores on one DB play two workers, committing in turn — on SQLite and
on PostgreSQL alike (``open_store``)."""

from __future__ import annotations

from dustless.kinds import LinkKind
from dustless.store import AdmitURL, Limits, Verdict


def _url(path: str, host: str = "a.test") -> AdmitURL:
    url = f"http://{host}{path}"
    return AdmitURL(url, url, host, host, 1, LinkKind.ANCHOR, 1, None)


def _two(open_store):
    a = open_store(worker="w1")
    a.start_batch("{}", 0.0)
    a.commit()
    return a, open_store(worker="w2")


def test_a_host_has_one_owner_and_a_dead_owners_claims_come_back(open_store):
    a, b = _two(open_store)
    a.admit([_url(f"/{i}") for i in range(3)] + [_url("/x", "b.test")], Limits(), 1)
    a.commit()
    leased = {x.host: x.queued for x in a.lease_hosts(10, now=100.0, ttl=60.0)}
    assert leased == {"a.test": 3, "b.test": 1}
    claimed = a.claim_queued(10, hosts=["a.test"], per_host=2)
    a.commit()
    assert len(claimed) == 2
    # w2 finds nothing free while w1's leases live; it knows others hold work.
    assert b.lease_hosts(10, now=120.0, ttl=60.0) == []
    assert b.work_left(120.0).leased_elsewhere == 2
    b.commit()
    # w1 dies (no renewal). After the TTL, w2 takes the hosts over, with w1's claims.
    taken = {x.host: x.queued for x in b.lease_hosts(10, now=161.0, ttl=60.0)}
    assert taken == {"a.test": 3, "b.test": 1}
    b.commit()
    assert a.renew_leases(["a.test", "b.test"], now=162.0, ttl=60.0) == set()
    a.commit()
    assert len(b.claim_queued(10, hosts=["a.test"], per_host=10)) == 3
    b.commit()


def test_release_hands_the_politeness_clock_on(open_store):
    a, b = _two(open_store)
    a.admit([_url("/1"), _url("/2")], Limits(), 1)
    [lease] = a.lease_hosts(10, now=10.0, ttl=60.0)
    assert lease.ready_at == 0.0
    a.release_hosts({"a.test": 15.5})
    a.commit()
    [lease] = b.lease_hosts(10, now=11.0, ttl=60.0)
    assert (lease.host, lease.ready_at) == ("a.test", 15.5)
    b.commit()


def test_work_left_and_requeue_of_own_claims(open_store):
    a, b = _two(open_store)
    assert a.work_left(0.0).queued_hosts == 0
    a.admit([_url("/1")], Limits(), 1)
    a.lease_hosts(10, now=1.0, ttl=60.0)
    [_u] = a.claim_queued(5, hosts=["a.test"])
    a.commit()
    assert b.work_left(2.0).leased_elsewhere == 1
    # A restart of w1: its claims go back to the queue and its leases are given up.
    assert a.requeue_in_flight() == 1
    a.commit()
    assert b.work_left(2.0).queued_hosts == 1
    assert b.work_left(2.0).leased_elsewhere == 0
    b.commit()


def test_admission_is_exactly_once_across_workers(open_store):
    a, b = _two(open_store)
    first = a.admit([_url("/1"), _url("/2")], Limits(max_pages=3), 1)
    a.commit()
    second = b.admit([_url("/2"), _url("/3"), _url("/4")], Limits(max_pages=3), 1)
    b.commit()
    assert [x.verdict for x in first.admitted] == [Verdict.QUEUED, Verdict.QUEUED]
    assert [x.verdict for x in second.admitted] == [
        Verdict.KNOWN,
        Verdict.QUEUED,
        Verdict.MAX_PAGES,  # --max-pages holds across workers: the DB counts
    ]
