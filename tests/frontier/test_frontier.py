import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.errors import InvalidOption, UsageError
from dustless.frontier import (
    ROBOTS_KIND,
    TRANSITIONS,
    Frontier,
    HostEvent,
    HostState,
    IllegalTransition,
    Politeness,
    QueuedURL,
    Ready,
    Wait,
    next_state,
)


def q(url, depth=0, priority=0):
    host = url.split("/")[2]
    return QueuedURL(url, "http://" + host, depth, priority)


def test_empty_frontier_is_done():
    assert Frontier().pop(0.0) is None


def test_fifo_per_host_and_delay_after_fetch():
    f = Frontier(Politeness(min_delay=1.0, factor=10.0))
    for i in range(3):
        f.push(q(f"http://a.test/{i}"))
    first = f.pop(0.0)
    assert isinstance(first, Ready)
    assert first.item.url == "http://a.test/0"
    # one request in flight per host: nothing else to do, only a done() can help
    assert f.pop(0.0) == Wait(math.inf)
    f.done("http://a.test", now=0.5, fetch_seconds=0.5)
    # max(1.0, 10 × 0.5) = 5 s after the fetch ended (seed 004 §2: 10 × l-time)
    assert f.pop(5.4) == Wait(pytest.approx(0.1))
    second = f.pop(5.5)
    assert isinstance(second, Ready)
    assert second.item.url == "http://a.test/1"


def test_crawl_delay_is_capped():
    p = Politeness(min_delay=1.0, factor=0.0, max_crawl_delay=7.0)
    assert p.delay(0.1, 3.0) == 3.0
    assert p.delay(0.1, 3600.0) == 7.0
    assert p.delay(0.1, None) == 1.0


def test_hosts_interleave_while_one_rests():
    f = Frontier(Politeness(min_delay=10.0, factor=0.0))
    for host in "ab":
        for i in range(2):
            f.push(q(f"http://{host}.test/{i}"))
    got = [f.pop(0.0), f.pop(0.0)]
    assert {r.item.host for r in got if isinstance(r, Ready)} == {"http://a.test", "http://b.test"}


def test_priority_classes_served_first_then_fifo():
    f = Frontier(Politeness(min_delay=0.0, factor=0.0))
    f.push(q("http://a.test/low", priority=0))
    f.push(q("http://a.test/high1", priority=1))
    f.push(q("http://a.test/high2", priority=1))
    order = []
    for t in range(3):
        r = f.pop(float(t))
        assert isinstance(r, Ready)
        order.append(r.item.url.rsplit("/", 1)[1])
        f.done(r.item.host, float(t), 0.0)
    assert order == ["high1", "high2", "low"]
    assert f.pop(10.0) is None


def test_robots_first_then_pages():
    f = Frontier(Politeness(min_delay=1.0, factor=0.0), robots_first=True)
    f.push(q("http://a.test:8080/x?y"))
    assert f.state("http://a.test:8080") is HostState.ROBOTS_PENDING
    r = f.pop(0.0)
    assert isinstance(r, Ready)
    assert r.item.kind == ROBOTS_KIND
    assert r.item.url == "http://a.test:8080/robots.txt"
    assert len(f) == 1
    f.robots_done("http://a.test:8080", 0.1, 0.1, available=True, crawl_delay=2.0)
    assert f.state("http://a.test:8080") is HostState.READY
    assert f.pop(1.0) == Wait(pytest.approx(1.1))
    r = f.pop(2.1)
    assert isinstance(r, Ready)
    assert r.item.url == "http://a.test:8080/x?y"


def test_robots_unavailable_retries_then_blocks():
    f = Frontier(
        Politeness(min_delay=0.0, factor=0.0, backoff=1.0, max_failures=2), robots_first=True
    )
    f.push(q("http://a.test/1"))
    f.push(q("http://a.test/2"))
    r = f.pop(0.0)
    assert isinstance(r, Ready)
    f.robots_done(r.item.host, 0.0, 0.0, available=False)
    assert f.state(r.item.host) is HostState.ROBOTS_PENDING
    assert f.pop(0.5) == Wait(0.5)
    r = f.pop(1.0)
    assert isinstance(r, Ready)
    assert r.item.kind == ROBOTS_KIND
    f.robots_done(r.item.host, 1.0, 0.0, available=False)
    assert f.state(r.item.host) is HostState.BLOCKED
    assert [i.url for i in f.take_blocked(r.item.host)] == ["http://a.test/1", "http://a.test/2"]
    assert len(f) == 0
    assert f.pop(100.0) is None
    assert f.push(q("http://a.test/3")) is False


def test_failures_back_off_then_recover():
    f = Frontier(Politeness(min_delay=0.0, factor=0.0, backoff=2.0, max_failures=5))
    for i in range(4):
        f.push(q(f"http://a.test/{i}"))
    r = f.pop(0.0)
    f.done(r.item.host, 0.0, 0.0, failed=True)
    assert f.state(r.item.host) is HostState.BACKING_OFF
    assert f.pop(0.0) == Wait(2.0)
    r = f.pop(2.0)
    f.done(r.item.host, 2.0, 0.0, failed=True)
    assert f.pop(2.0) == Wait(4.0)  # doubled
    f.push(q("http://a.test/9"))
    r = f.pop(6.0)
    f.done(r.item.host, 6.0, 0.0)
    assert f.state(r.item.host) is HostState.READY
    assert isinstance(f.pop(6.0), Ready)


def test_block_returns_queue_and_release_owes_no_delay():
    f = Frontier(Politeness(min_delay=100.0))
    for i in range(3):
        f.push(q(f"http://a.test/{i}"))
    r = f.pop(0.0)
    f.release(r.item.host)
    assert isinstance(f.pop(0.0), Ready)  # skipped item: no request, no delay
    dropped = f.block("http://a.test")
    assert [i.url for i in dropped] == ["http://a.test/2"]
    f.done("http://a.test", 1.0, 0.1)  # the in-flight fetch still ends
    assert f.pop(1000.0) is None


def test_misuse_raises_with_state_in_message():
    f = Frontier()
    with pytest.raises(IllegalTransition, match="no request in flight"):
        f.done("http://nowhere.test", 0.0, 0.0)
    with pytest.raises(IllegalTransition, match="ready"):
        next_state(HostState.READY, HostEvent.ROBOTS_UNAVAILABLE, "h")
    assert issubclass(IllegalTransition, UsageError)
    with pytest.raises(InvalidOption):
        Politeness(min_delay=-1)


def test_transition_table_covers_block_from_every_state():
    for state in HostState:
        assert TRANSITIONS[state, HostEvent.BLOCK] is HostState.BLOCKED


def test_stats_counts_hosts():
    f = Frontier(Politeness(min_delay=5.0, factor=0.0))
    for host in "abc":
        f.push(q(f"http://{host}.test/1"))
        f.push(q(f"http://{host}.test/2"))
    r = f.pop(0.0)
    f.done(r.item.host, 0.0, 0.0)
    r2 = f.pop(0.0)
    s = f.stats(0.0)
    assert (s.queued, s.in_flight, s.hosts, s.hosts_ready, s.hosts_waiting) == (4, 1, 3, 1, 1)
    assert r2.item.host != r.item.host


# -- property: a fake clock drives random pushes, pops and completions -----------------

ops = st.lists(
    st.one_of(
        st.tuples(st.just("push"), st.integers(0, 3), st.integers(0, 2)),
        st.tuples(st.just("advance"), st.floats(0.0, 3.0)),
        st.tuples(st.just("pop")),
        st.tuples(
            st.just("done"), st.floats(0.0, 2.0), st.booleans(), st.sampled_from([None, 0.5, 9.0])
        ),
    ),
    max_size=120,
)


@settings(max_examples=300, deadline=None)
@given(
    ops=ops,
    min_delay=st.floats(0.0, 2.0),
    factor=st.floats(0.0, 5.0),
    robots_first=st.booleans(),
)
def test_never_sooner_than_delay_never_two_in_flight(ops, min_delay, factor, robots_first):
    p = Politeness(min_delay=min_delay, factor=factor, max_crawl_delay=4.0, backoff=1.0)
    f = Frontier(p, robots_first=robots_first)
    now = 0.0
    in_flight: dict[str, float] = {}  # host -> start
    earliest: dict[str, float] = {}  # host -> earliest allowed next start
    counter = 0
    pushed = taken = dropped = 0
    for op in ops:
        if op[0] == "push":
            counter += 1
            if f.push(QueuedURL(f"http://h{op[1]}.test/{counter}", f"h{op[1]}", 0, op[2])):
                pushed += 1
        elif op[0] == "advance":
            now += op[1]
        elif op[0] == "pop":
            r = f.pop(now)
            if isinstance(r, Ready):
                host = r.item.host
                assert host not in in_flight, "two requests in flight for one host"
                assert now >= earliest.get(host, -math.inf) - 1e-9, "host scheduled too soon"
                in_flight[host] = now
                if r.item.kind != ROBOTS_KIND:
                    taken += 1
            elif isinstance(r, Wait):
                assert r.seconds > 0
            else:
                assert not in_flight
        elif op[0] == "done" and in_flight:
            host = sorted(in_flight)[0]
            start = in_flight.pop(host)
            seconds, failed, cd = op[1], op[2], op[3]
            now = max(now, start) + seconds
            if f.state(host) is HostState.ROBOTS_PENDING:
                f.robots_done(host, now, seconds, available=not failed, crawl_delay=cd)
            else:
                f.done(host, now, seconds, cd, failed=failed)
            # the rule of seed 004 §2 with the cap, measured from the end of the fetch
            rest = max(min_delay, min(cd, 4.0) if cd else 0.0, factor * seconds)
            earliest[host] = now + rest
            dropped += len(f.take_blocked(host))
    assert pushed == taken + dropped + len(f)


def test_after_a_stall_the_host_rests_twice_as_long_as_it_held_us():
    f = Frontier(Politeness(min_delay=0.0, factor=0.0, backoff=0.1))
    f.push(q("http://a.test/1"))
    f.push(q("http://a.test/2"))
    r = f.pop(0.0)
    f.done(r.item.host, 5.0, 5.0, failed=True)  # gave up after 5 s without data
    assert f.pop(5.0) == Wait(10.0)


def test_expired_robots_are_fetched_again_before_the_next_page():
    f = Frontier(Politeness(min_delay=0.0, factor=0.0), robots_first=True)
    f.push(q("http://a.test/1"))
    r = f.pop(0.0)
    assert r.item.kind == ROBOTS_KIND
    f.robots_done(r.item.host, 0.0, 0.0, available=True)
    page = f.pop(0.0)
    assert page.item.kind == "a"
    f.done(page.item.host, 1.0, 0.0)
    f.push(q("http://a.test/2"))
    f.expire_robots("http://a.test")  # RFC 9309 §2.4: older than 24 h
    again = f.pop(86_401.0)
    assert again.item.kind == ROBOTS_KIND
    assert f.state("http://a.test") is HostState.ROBOTS_PENDING
