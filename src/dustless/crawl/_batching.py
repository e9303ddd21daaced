"""One machine or many: the engine's batching, one strategy chosen once from the store.

On its own SQLite store the engine handles each finished fetch as soon as it can, and no
other worker can hold its hosts. On a store shared across the network (PostgreSQL, many
workers) a round trip costs more than a page: the payloads of a batch of pages are asked
about in one exchange (content seen, seed 003), in the commit's thread; a small batch waits
for company while fetches are out; the reading of the work left rides with the lease round's
commit; a request is sent only under a lease still held (the fence); a page fetched under a
lease lost meanwhile is dropped; and the DB may go away for a while. ``Batching.of(store)``
picks :class:`Batching` (local: every method a no-op or "now") or :class:`_Shared`; the
engine's loop calls the methods and never asks which one it has (issue 27).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dustless.crawl.hosts import HostTable
from dustless.crawl.net import Fetches, resolve_first
from dustless.fetch import FetchResult
from dustless.store import CrawlStore

__all__ = ["BACKLOG_PAGES", "Batching"]

# Fetched pages waiting to be handled, at most (the wide bound): past it no new fetch starts.
# Fetching ahead of the CPU-bound handling is faster than lock-step (bench/crawl_peers.py);
# the bound keeps memory small and what a kill -9 repeats to about half a second of work.
BACKLOG_PAGES = 1000
# Many machines: a small batch of finished fetches waits for company while fetches are out —
# at most this long (on to the lease round when that is less than another hold away:
# ``held_for``), or until this many pages have come.
_HOLD_SECONDS = 0.5
_HOLD_PAGES = 128
# ... but only this long while nothing can start until a fetch out ends or the waiting pages
# are handled (their links may be the next work: a chain of pages is not held a half second
# a page), and not at all when the slots are idle for want of those links.
_HOLD_STALLED = 0.3


class Batching:
    """One machine: finished fetches are handled at once, nothing is fenced or prefetched."""

    def __init__(self, backlog_pages: int) -> None:
        # Fetched pages waiting to be handled, at most: as many as fetches run at once.
        # Further ahead, a page's links and what learning draws from it come late: a fast
        # fetch on a fast server outran handling by hundreds of pages, and a learning crawl
        # fetched the duplicates its rules were about to merge (tests/learn/
        # test_live_musthold.py failed about every other run).
        self.backlog_pages = backlog_pages

    @staticmethod
    def of(store: CrawlStore, concurrency: int) -> Batching:
        """The strategy for ``store``: shared across the network, or this machine's own."""
        return _Shared() if store.shared else Batching.local(concurrency)

    @staticmethod
    def local(concurrency: int) -> Batching:
        return Batching(max(1, concurrency))

    @staticmethod
    def shared() -> Batching:
        return _Shared()

    # -- the loop: when finished fetches are handled ------------------------------------------

    def watch_outages(self, store: CrawlStore, hook: Callable[[float | None], None]) -> None:
        """A DB that may go away for a while: ``hook`` hears of it (none on one machine)."""

    def done_began(self, now: float) -> None:
        """The first of a new batch of finished fetches ended at ``now``."""

    def starts_first(self, *, stopping: bool) -> bool:
        """Every fetch out ended at once: start the next ones before handling these?"""
        return False

    def held_for(
        self, now: float, *, done: int, in_flight: bool, stopping: bool, next_maintain: float
    ) -> float | None:
        """Seconds the finished fetches still wait for company (``None``: handle them now)."""
        return None

    def hold(self, ready_in: float | None, *, links_pending: bool = False) -> None:
        """What the last look for work found (``HostTable.next``: None, nothing queued; inf,
        nothing until a fetch ends; seconds until a host's clock allows): how long a batch
        may be held. Called with ``links_pending`` when pages' links wait for admission."""

    def reset_hold(self) -> None:
        """A new look for work begins: the usual hold."""

    def asks_ahead(self, batch: Sequence[object]) -> bool:
        """Ask the store about ``batch``'s payloads in the commit thread, before handling?"""
        return False

    def payloads(self, results: list[FetchResult] | None) -> list[FetchResult] | None:
        """The pages a commit asks about with its exchange (a shared store only)."""
        return None

    def expect_work_left(self, store: CrawlStore, wall: float, hosts: HostTable) -> None:
        """The lease round's reading of the work left, riding with the admission's exchange."""

    # -- store and leases ---------------------------------------------------------------------

    @property
    def alone(self) -> bool:
        """No other worker can bring or take work (the stuck check applies)."""
        return True

    def away(self, store: CrawlStore) -> bool:
        """The DB across the network may have closed the connection: wait for it."""
        return False

    async def may_send(self, fetcher: Fetches, hosts: HostTable, host: str, url: str,
                       mono: Callable[[], float]) -> bool:  # fmt: skip
        """The lease fence, right before a request is sent: no other worker holds the host."""
        return True

    def lost(self, hosts: HostTable, host: str) -> bool:
        """The host's lease was lost while its fetch was out: drop the fetch."""
        return False


class _Shared(Batching):
    """Many machines on one PostgreSQL store: batches worth a round trip."""

    def __init__(self) -> None:
        # Pages are held to batch their queries (``held_for``): the wide bound stays.
        super().__init__(BACKLOG_PAGES)
        self._done_since = 0.0  # when the oldest waiting finished fetch ended
        # How long finished fetches may wait for company (``held_for``), as the last look for
        # work found it (``hold``).
        self._hold = _HOLD_SECONDS

    def watch_outages(self, store: CrawlStore, hook: Callable[[float | None], None]) -> None:
        # A DB across the network may go away for a while (a restart, a failover): the store
        # waits for it, and the progress line says so meanwhile.
        store.watch_outages(hook)

    def done_began(self, now: float) -> None:
        self._done_since = now

    def starts_first(self, *, stopping: bool) -> bool:
        # Every fetch out ended at once (a server answering them together): start the next
        # ones first, so that the batch waits for their company instead of going with a
        # round trip of its own, one per wave of fetches (bench/crawl_scale.py).
        return not stopping

    def held_for(
        self, now: float, *, done: int, in_flight: bool, stopping: bool, next_maintain: float
    ) -> float | None:
        if (
            not done
            or stopping
            or done >= _HOLD_PAGES
            or now >= next_maintain  # a lease round next: settle what is waiting
            # No company can come (nothing in flight): holding would only stall the crawl
            # (it cost a second at each crawl's start and end: crawl_scale.py's peer run).
            or not in_flight
        ):
            return None
        until = self._done_since + self._hold
        if self._hold >= _HOLD_SECONDS and next_maintain <= until + _HOLD_SECONDS:
            # The usual hold, with the lease round less than another hold later: the batch
            # waits for it, and goes with the round's commit (one exchange), not one of its own
            # half a second before it (bench/crawl_scale.py --trips: content_seen).
            until = next_maintain
        left = until - now
        return left if left > 0 else None

    def hold(self, ready_in: float | None, *, links_pending: bool = False) -> None:
        # Links pending admission, or nothing queued here (None): the waiting pages' links
        # are the only work, so they are not held. Nothing ready until a fetch out ends or a
        # page is handled (inf): held briefly. Else a host's clock runs: the usual hold.
        if links_pending or ready_in is None:
            self._hold = 0.0
        elif ready_in == float("inf"):
            self._hold = _HOLD_STALLED

    def reset_hold(self) -> None:
        self._hold = _HOLD_SECONDS

    def asks_ahead(self, batch: Sequence[object]) -> bool:
        return bool(batch)

    def payloads(self, results: list[FetchResult] | None) -> list[FetchResult] | None:
        return results

    def expect_work_left(self, store: CrawlStore, wall: float, hosts: HostTable) -> None:
        # The round's reading of the work left rides at the end of the admission's exchange,
        # in a transaction of its own after the admission's, and costs no round trip of its
        # own (0.015 a page of 0.067 with 4 workers: bench/crawl_scale.py --trips).
        store.expect_work_left(wall, alive_within=hosts.lease_ttl)

    @property
    def alone(self) -> bool:
        return False

    def away(self, store: CrawlStore) -> bool:
        return store.maybe_away()

    async def may_send(self, fetcher: Fetches, hosts: HostTable, host: str, url: str,
                       mono: Callable[[], float]) -> bool:  # fmt: skip
        # Checked when the task was started, checked again once the task has waited its turn
        # and the host's DNS lookup, so a worker stalled past its lease sends nothing.
        await resolve_first(fetcher, url)
        return hosts.sure(host, mono())

    def lost(self, hosts: HostTable, host: str) -> bool:
        return not hosts.holds(host)
