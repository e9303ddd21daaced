"""What to fetch next: per-host FIFO queues, priority classes and the politeness clock.

Mercator-style (seed 003 ch. 9 "미수집 URL 저장소"): a queue router puts every URL of a host
in that host's queue, a queue selector hands out hosts whose politeness clock has run out,
and one request at a time goes to a host. A host is ready again only after
``max(min_delay, min(crawl_delay, max_crawl_delay), factor × last fetch time)`` — seed 004
§2's seed-context switching rule ("inactive for more than 30 s and more than 10 × the
l-time", the last download time), with 30 s and 10× as parameters.

Pure: the caller passes ``now`` (seconds on any monotonic clock) and gets back either an
item to fetch now or how long to wait. Nothing here reads the clock, sleeps or does I/O.
robots.txt is not the frontier's business: the crawl's host table (``crawl/hosts.py``) asks
for a host's robots.txt with the slot of a popped item (``push_front`` gives the item back).
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass

from dustless.errors import InvalidOption
from dustless.frontier._hoststate import HostEvent, HostState, IllegalTransition, next_state
from dustless.kinds import LinkKind

__all__ = [
    "Frontier",
    "FrontierStats",
    "Politeness",
    "QueuedURL",
    "Ready",
    "Wait",
]


@dataclass(frozen=True, slots=True)
class Politeness:
    """How gently a host is treated. Seed 004 §2 used ``min_delay=30``, ``factor=10``."""

    min_delay: float = 1.0
    factor: float = 2.0
    max_crawl_delay: float = 30.0  # robots.txt Crawl-delay is honoured up to this cap
    backoff: float = 5.0  # first extra wait after server trouble; doubles each time
    max_backoff: float = 300.0
    max_failures: int = 5  # failures in a row before the host is given up (BLOCKED)
    # A seed's host that has never answered and refuses the connection: a few quick tries
    # (the user waits to hear that the crawl cannot start), not minutes of back-off. Hosts
    # met later, and seeds once they answered, back off as above.
    quick_backoff: float = 0.5
    quick_failures: int = 3

    def __post_init__(self) -> None:
        for name in (
            "min_delay",
            "factor",
            "max_crawl_delay",
            "backoff",
            "max_backoff",
            "quick_backoff",
        ):
            value = getattr(self, name)
            if not (value >= 0 and math.isfinite(value)):
                raise InvalidOption(f"politeness {name} must be a finite number >= 0, not {value}")
        for name in ("max_failures", "quick_failures"):
            if getattr(self, name) < 1:
                raise InvalidOption(f"politeness {name} must be >= 1, not {getattr(self, name)}")

    def delay(self, fetch_seconds: float, crawl_delay: float | None) -> float:
        """Seconds a host must rest after a fetch that took ``fetch_seconds``."""
        robots = min(crawl_delay, self.max_crawl_delay) if crawl_delay else 0.0
        return max(self.min_delay, robots, self.factor * max(fetch_seconds, 0.0))


@dataclass(frozen=True, slots=True)
class QueuedURL:
    url: str  # what is requested: the first spelling seen, in its rfc3986 form
    host: str  # the politeness key: the authority (one queue per web server)
    depth: int
    priority: int = 0  # class: within a host the larger is served first (as the store's)
    seed_id: int = 0  # the party (seed 004 §2) the URL belongs to
    kind: LinkKind = LinkKind.ANCHOR
    url_id: int = 0  # the store's row id, to record the fetch against
    identity: str = ""  # the policy's form (URL-seen), as stored


@dataclass(frozen=True, slots=True)
class Ready:
    item: QueuedURL


@dataclass(frozen=True, slots=True)
class Wait:
    """Nothing may be fetched now; ``seconds`` is ``inf`` when only a ``done`` can help."""

    seconds: float


@dataclass(frozen=True, slots=True)
class FrontierStats:
    queued: int
    in_flight: int
    hosts: int
    hosts_ready: int  # idle, with work, clock run out
    hosts_waiting: int  # idle, with work, clock still running
    hosts_blocked: int
    # What the waiting hosts wait for (progress shows it): resting between two requests,
    # backing off after failures; and hosts whose pages wait for their robots.txt.
    hosts_polite: int = 0
    hosts_backoff: int = 0


class _Host:
    __slots__ = (
        "crawl_delay",
        "failures",
        "heap_seq",
        "in_flight",
        "key",
        "next_time",
        "queued",
        "queues",
        "state",
    )

    def __init__(self, key: str, state: HostState) -> None:
        self.key = key
        self.state = state
        self.queues: dict[int, deque[QueuedURL]] = {}
        self.queued = 0
        self.in_flight = False
        self.next_time = -math.inf
        self.crawl_delay: float | None = None
        self.failures = 0
        self.heap_seq = -1  # sequence number of this host's live heap entry, -1 if none

    def pop_item(self) -> QueuedURL:
        cls = max(self.queues) if len(self.queues) > 1 else next(iter(self.queues))
        queue = self.queues[cls]
        item = queue.popleft()
        if not queue:
            del self.queues[cls]
        self.queued -= 1
        return item


class Frontier:
    """Per-host queues and the politeness clock; see the module docstring.

    Every ``Ready`` is answered with :meth:`done` (a request was made with its slot — the
    item's own, or the robots.txt its host needed first) or :meth:`release` (none was).
    """

    def __init__(self, politeness: Politeness | None = None) -> None:
        self.politeness = politeness or Politeness()
        self._hosts: dict[str, _Host] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._seq = 0
        self._queued = 0
        self._in_flight = 0

    # -- filling ------------------------------------------------------------------------

    def push(self, item: QueuedURL) -> bool:
        """Queue ``item``; ``False`` (nothing queued) when its host is blocked."""
        return self._put(item, front=False)

    def push_front(self, item: QueuedURL) -> bool:
        """Give a popped item back, at the head of its class (its host's robots.txt had to
        be fetched first); ``False`` when its host is blocked."""
        return self._put(item, front=True)

    def _put(self, item: QueuedURL, *, front: bool) -> bool:
        host = self._hosts.get(item.host)
        if host is None:
            host = self._hosts[item.host] = _Host(item.host, HostState.READY)
        elif host.state is HostState.BLOCKED:
            return False
        queue = host.queues.get(item.priority)
        if queue is None:
            queue = host.queues[item.priority] = deque()
        if front:
            queue.appendleft(item)
        else:
            queue.append(item)
        host.queued += 1
        self._queued += 1
        if host.heap_seq < 0 and not host.in_flight:
            self._schedule(host)
        return True

    def hold(self, host: str, until: float) -> None:
        """No request to ``host`` before ``until`` (its last owner's politeness clock, when
        the host comes from another worker)."""
        h = self._hosts.get(host)
        if h is None:
            h = self._hosts[host] = _Host(host, HostState.READY)
        if until > h.next_time:
            h.next_time = until
            if h.heap_seq >= 0:
                self._schedule(h)

    def resume(self, host: str, at: float) -> None:
        """Undo a :meth:`hold`: ``host`` may be asked again at ``at`` (the clock it had)."""
        h = self._hosts.get(host)
        if h is None:
            return
        h.next_time = at
        if h.queued and not h.in_flight and h.state is not HostState.BLOCKED:
            self._schedule(h)  # its old heap entry, if any, goes stale

    # -- taking ---------------------------------------------------------------------------

    def pop(self, now: float) -> Ready | Wait | None:
        """The next item to fetch, how long to wait, or ``None`` when all work is done."""
        heap = self._heap
        hosts = self._hosts
        while heap:
            when, seq, key = heap[0]
            host = hosts.get(key)
            if host is None or seq != host.heap_seq:  # stale: blocked, rescheduled, forgotten
                heapq.heappop(heap)
                continue
            if when > now:
                return Wait(when - now)
            heapq.heappop(heap)
            host.heap_seq = -1
            host.in_flight = True
            self._in_flight += 1
            self._queued -= 1
            return Ready(host.pop_item())
        if self._in_flight:
            return Wait(math.inf)
        return None

    # -- answering ------------------------------------------------------------------------

    def done(
        self,
        host: str,
        now: float,
        fetch_seconds: float,
        crawl_delay: float | None = None,
        *,
        failed: bool = False,
        quick: bool = False,
    ) -> None:
        """A request to ``host`` ended at ``now`` after ``fetch_seconds``.

        ``failed``: the server was in trouble (timeout, connection error, 5xx); the host
        backs off, and after ``max_failures`` failures in a row it is blocked. ``quick``
        (a seed's host that never answered refused the connection): the back-off starts at
        ``quick_backoff`` and the host is given up after ``quick_failures``.
        """
        h = self._finish(host)
        if crawl_delay is not None:
            h.crawl_delay = crawl_delay
        p = self.politeness
        delay = p.delay(fetch_seconds, h.crawl_delay)
        if failed:
            h.failures += 1
            limit = min(p.max_failures, p.quick_failures) if quick else p.max_failures
            event = HostEvent.GIVE_UP if h.failures >= limit else HostEvent.FAILED
            # A server that stalled us for t seconds may go on working on the request we
            # abandoned: rest at least 2t, so that it never serves two of ours at once.
            base = min(p.backoff, p.quick_backoff) if quick else p.backoff
            backoff = min(p.max_backoff, base * 2 ** (h.failures - 1))
            delay = max(delay, backoff, 2 * max(fetch_seconds, 0.0))
        else:
            h.failures = 0
            event = HostEvent.FETCHED
        self._transition(h, event)
        h.next_time = now + delay
        self._reschedule(h)

    def release(self, host: str) -> None:
        """The popped item was not fetched (the caller skipped it): no delay is owed."""
        h = self._finish(host)
        self._reschedule(h)

    def block(self, host: str) -> list[QueuedURL]:
        """Stop crawling ``host``; returns the URLs that were still queued for it."""
        h = self._hosts.get(host)
        if h is None:
            return []
        self._transition(h, HostEvent.BLOCK)
        return self._drain(h)

    # -- looking --------------------------------------------------------------------------

    def state(self, host: str) -> HostState | None:
        h = self._hosts.get(host)
        return None if h is None else h.state

    def in_flight_at(self, host: str) -> bool:
        h = self._hosts.get(host)
        return h is not None and h.in_flight

    def queued_for(self, host: str) -> int:
        h = self._hosts.get(host)
        return 0 if h is None else h.queued

    def __len__(self) -> int:
        return self._queued

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def stats(self, now: float) -> FrontierStats:
        ready = waiting = blocked = backoff = 0
        for h in self._hosts.values():
            if h.state is HostState.BLOCKED:
                blocked += 1
                continue
            if h.queued and not h.in_flight:
                if h.next_time <= now:
                    ready += 1
                else:
                    waiting += 1
                    if h.failures:
                        backoff += 1
        return FrontierStats(
            queued=self._queued,
            in_flight=self._in_flight,
            hosts=len(self._hosts),
            hosts_ready=ready,
            hosts_waiting=waiting,
            hosts_blocked=blocked,
            hosts_polite=waiting - backoff,
            hosts_backoff=backoff,
        )

    # -- inside ---------------------------------------------------------------------------

    def _finish(self, host: str) -> _Host:
        h = self._hosts.get(host)
        if h is None or not h.in_flight:
            raise IllegalTransition(f"host {host!r} has no request in flight")
        h.in_flight = False
        self._in_flight -= 1
        return h

    def _transition(self, h: _Host, event: HostEvent) -> None:
        before = h.state
        h.state = next_state(before, event, h.key)
        if h.state is HostState.BLOCKED and before is not HostState.BLOCKED:
            h.heap_seq = -1

    def _drain(self, h: _Host) -> list[QueuedURL]:
        dropped = [item for cls in sorted(h.queues, reverse=True) for item in h.queues[cls]]
        h.queues.clear()
        self._queued -= h.queued
        h.queued = 0
        h.heap_seq = -1
        return dropped

    def _reschedule(self, h: _Host) -> None:
        if h.state is HostState.BLOCKED:
            return
        if h.queued:
            self._schedule(h)

    def _schedule(self, h: _Host) -> None:
        self._seq += 1
        h.heap_seq = self._seq
        heapq.heappush(self._heap, (h.next_time, self._seq, h.key))

    def forget(self, host: str) -> list[QueuedURL]:
        """Drop a host that is no longer ours (its lease went to another worker, or was
        given back); returns its queued URLs. Its politeness state goes with it."""
        h = self._hosts.get(host)
        if h is None or h.in_flight:
            return []
        dropped = self._drain(h)
        del self._hosts[host]
        return dropped

    def next_time(self, host: str) -> float | None:
        """When ``host`` may be asked next (``None``: unknown host)."""
        h = self._hosts.get(host)
        return None if h is None else h.next_time

    def take_queued(self, host: str) -> list[QueuedURL]:
        """Every URL queued for ``host``, taken out in the order it would be served (the host
        keeps its clock; ``push`` gives back what is to stay). For a learned rule that merges
        some of them (crawl/learn.py)."""
        h = self._hosts.get(host)
        if h is None or h.state is HostState.BLOCKED:
            return []
        return self._drain(h)

    def take_blocked(self, host: str) -> list[QueuedURL]:
        """The URLs left in a host that ``done`` blocked (give-up)."""
        h = self._hosts.get(host)
        if h is None or h.state is not HostState.BLOCKED:
            return []
        return self._drain(h)
