import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.errors import InternalError, InvalidOption, UsageError
from dustless.frontier import (
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


def test_push_front_gives_a_popped_item_back_first():
    # The host table fetches an origin's robots.txt with a page's slot, then the page.
    f = Frontier(Politeness(min_delay=1.0, factor=0.0))
    f.push(q("http://a.test/1"))
    f.push(q("http://a.test/2"))
    r = f.pop(0.0)
    assert isinstance(r, Ready)
    assert f.push_front(r.item)
    assert len(f) == 2
    f.done(r.item.host, 0.1, 0.1, crawl_delay=2.0)  # the robots.txt request owed its delay
    assert f.pop(1.0) == Wait(pytest.approx(1.1))
    again = f.pop(2.1)
    assert isinstance(again, Ready)
    assert again.item.url == "http://a.test/1"


def test_hold_carries_the_last_owners_clock_and_forget_drops_a_host():
    f = Frontier(Politeness(min_delay=0.0, factor=0.0))
    f.hold("http://a.test", 5.0)
    f.push(q("http://a.test/1"))
    assert f.pop(1.0) == Wait(4.0)
    f.hold("http://a.test", 2.0)  # never sooner than already held
    assert f.pop(1.0) == Wait(4.0)
    assert [i.url for i in f.forget("http://a.test")] == ["http://a.test/1"]
    assert len(f) == 0
    assert f.pop(10.0) is None
    assert f.next_time("http://a.test") is None


def test_give_up_blocks_and_hands_back_the_queue():
    f = Frontier(Politeness(min_delay=0.0, factor=0.0, backoff=1.0, max_failures=2))
    f.push(q("http://a.test/1"))
    f.push(q("http://a.test/2"))
    f.push(q("http://a.test/3"))
    r = f.pop(0.0)
    f.done(r.item.host, 0.0, 0.0, failed=True)
    r = f.pop(1.0)
    f.done(r.item.host, 1.0, 0.0, failed=True)
    assert f.state(r.item.host) is HostState.BLOCKED
    assert [i.url for i in f.take_blocked(r.item.host)] == ["http://a.test/3"]
    assert len(f) == 0
    assert f.pop(100.0) is None
    assert f.push(q("http://a.test/4")) is False


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


def test_a_refused_seed_is_tried_quickly_and_given_up_after_a_few_tries():
    # A seed's host that never answered and refuses connections: 0.5 s, 1 s, given up at
    # the third failure (~1.5 s), instead of the 5 s, 10 s, 20 s, 40 s of the usual
    # back-off (~77 s before the user heard that the crawl cannot start).
    f = Frontier(Politeness(min_delay=0.0, factor=0.0))
    for i in range(5):
        f.push(q(f"http://a.test/{i}"))
    now, waits = 0.0, []
    while f.state("http://a.test") is not HostState.BLOCKED:
        r = f.pop(now)
        if isinstance(r, Wait):
            waits.append(r.seconds)
            now += r.seconds
            continue
        f.done(r.item.host, now, 0.0, failed=True, quick=True)
    assert waits == [0.5, 1.0]
    # Any other host (or a seed once it answered) keeps the usual back-off.
    f.push(q("http://b.test/1"))
    f.push(q("http://b.test/2"))
    r = f.pop(now)
    f.done(r.item.host, now, 0.0, failed=True)
    assert f.pop(now) == Wait(5.0)


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
    # Every (state, event) pair has a row now (robots.txt left the table for the host
    # table); next_state still names both when asked about one it does not know.
    assert len(TRANSITIONS) == len(HostState) * len(HostEvent)
    assert next_state(HostState.BACKING_OFF, HostEvent.FETCHED, "h") is HostState.READY
    # A bug of ours, not the user's: the CLI must not print it as a usage error.
    assert issubclass(IllegalTransition, InternalError)
    assert not issubclass(IllegalTransition, UsageError)
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
# ("done", …, give_back): the request was the host's robots.txt, made with the popped page's
# slot; the page goes back to the head of its queue (``push_front``) and owes the delay too.


@settings(max_examples=300, deadline=None)
@given(
    ops=ops,
    min_delay=st.floats(0.0, 2.0),
    factor=st.floats(0.0, 5.0),
    give_back=st.booleans(),
)
def test_never_sooner_than_delay_never_two_in_flight(ops, min_delay, factor, give_back):
    p = Politeness(min_delay=min_delay, factor=factor, max_crawl_delay=4.0, backoff=1.0)
    f = Frontier(p)
    now = 0.0
    in_flight: dict[str, float] = {}  # host -> start
    items: dict[str, QueuedURL] = {}  # host -> the item popped
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
                items[host] = r.item
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
            if give_back and not failed and f.push_front(items[host]):
                taken -= 1  # it was the robots.txt request: the page waits at the head
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
