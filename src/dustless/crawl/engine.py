"""The crawl engine: one loop that makes every decision; fetches are the only concurrent work.

``Crawler(build_parts(CrawlSetup(config, store, fetcher, warc, batch, …)))`` is given what a
run opened
(opening a crawl directory happens outside, in ``crawl/_build.py``): a ``CrawlStore``
(SQLite for one machine, PostgreSQL for many), the fetcher, the WARC writer and the clocks;
its collaborators are built from that in ``crawl/_build.py``, the one reader of the
settings (the engine keeps only its ``Pace``), and what differs between one
machine and many is one strategy chosen from the store (``crawl/_batching.py``). The loop
asks the host table (``crawl/hosts.py``, the one owner of everything known about a host)
what to do, starts a fetch task for it (at most ``--concurrency``), and handles finished fetches
synchronously — the page's outcome is computed by ``crawl/page.py``, its links admitted in
batches by ``crawl/admission.py`` — so a page costs no chain of awaits. Completed tasks wake
the loop through one future; no task ever waits on another.

A fetch's end starts its host's politeness clock at once (``_task_done``), not when its page
has been handled: with no delay the host's next request overlaps the handling of the last
page, and fetching runs ahead of the CPU-bound handling, by at most as many pages as
fetches run at once (``_backlog_pages``).

Sitemaps and feeds (``--sitemaps``, ``--feeds``) are URLs of their own kinds in the same
queues; their bodies stream through a parser whose entries are admitted as they arrive
(``crawl/sources.py``), so a source costs one fetch and bounded memory, whatever its size.

Every ``commit_interval`` (≤ 1 s) the pending links are admitted, the WARC writer is fsynced,
then the store records the fetch rows and commits: after ``kill -9`` the DB never points at a
WARC record that is not on disk, and a resume repeats at most the fetches in flight and the
last second. The durable part of a commit (the fsync, the DB commit; on PostgreSQL the
exchange, and its wait for a server that went away) runs in a thread (``_launch``), while the
loop goes on fetching the URLs it holds; the pages fetched meanwhile are handled once the
commit is in, and their rows go with the next one. The crawl is over when no host anywhere
has queued or leased work — decided by the store, so a worker never ends a crawl that another
is still feeding.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import os
import secrets
import signal
import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dustless.crawl._batching import BACKLOG_PAGES
from dustless.crawl._build import Parts
from dustless.crawl.hosts import Block, Denied, RobotsItem
from dustless.crawl.net import failure_kind
from dustless.crawl.page import is_html, page_outcome, page_state
from dustless.crawl.progress import RunCounters
from dustless.crawl.record import Stored
from dustless.crawl.soft404 import probe_url
from dustless.crawl.sources import SourceReader
from dustless.errors import DatabaseAway, InternalError, StoreError
from dustless.extract import content_fingerprint
from dustless.fetch import FetchResult, RobotsFetch, fetch_robots
from dustless.frontier import QueuedURL
from dustless.kinds import SOURCE_KINDS, LinkKind
from dustless.robots import robots_key
from dustless.states import NetState
from dustless.store import FetchRecord, URLState, WorkLeft

__all__ = ["CrawlResult", "Crawler", "strict_mode"]

# A bug of ours met while crawling: the traceback goes here, the URL's fetch row keeps
# one line of it, and the progress line counts them ("internal errors N, see the log").
_log = logging.getLogger(__name__)

# Network states that mean "the server is in trouble": the host backs off (004 Fig. 3).
_TROUBLE = frozenset(
    {
        NetState.cErr,
        NetState.cTim,
        NetState.hTim,
        NetState.hErr,
        NetState.dTim,
        NetState.dErr,
        NetState.hSht,
    }
)
# Fetched pages waiting to be handled: past either bound (or the narrow one of
# ``Batching.backlog_pages``) no new fetch starts. Fetching ahead of the CPU-bound handling
# is faster than lock-step (bench/crawl_peers.py); the bounds keep memory small and what a
# kill -9 repeats to about half a second of work (the pages' bound: ``BACKLOG_PAGES``).
_BACKLOG_BYTES = 64 * 1024 * 1024
_NOT_STORED = Stored(None, None, None, None, False)
_MAINTAIN_EVERY = 1.0  # seconds between lease renewals / lease rounds
_IDLE_POLL = 0.5  # seconds between two looks at the DB while other workers hold all the work
_EAGER_FLUSH = 0.02  # seconds between two admissions made because slots were idle
_STUCK_ROUNDS = 4  # idle rounds in a row with queued work and nothing to do: a stuck crawl


class _Again:
    """The loop goes round again at once (``Crawler._plan``)."""


_AGAIN = _Again()


def strict_mode() -> bool:
    """``DUSTLESS_STRICT=1`` (the tests): a bug of ours fails loudly instead of being
    recorded as the URL's ``iErr`` state."""
    return os.environ.get("DUSTLESS_STRICT", "") not in ("", "0")


@dataclass(frozen=True, slots=True)
class CrawlResult:
    batch: int
    stats: RunCounters
    finished: bool  # False: interrupted, resumable with --resume


@dataclass(frozen=True, slots=True)
class _Done:
    """A finished fetch task: what was asked, and its result(s) (robots.txt: one per hop)."""

    item: QueuedURL | RobotsItem
    results: list[FetchResult]
    robots: RobotsFetch | None = None  # for a robots.txt item
    reader: SourceReader | None = None  # for a sitemap or feed: what its body gave
    fenced: bool = False  # nothing sent: the lease may have run out (``_may_send``)
    probes: tuple[FetchResult, ...] = ()  # a page's soft-404 probe (crawl/soft404.py)
    first_probe: bool = False  # ... the host's first


class _Fenced(Exception):
    """A robots.txt redirect hop found the lease past its fence after its rest."""


class Crawler:
    def __init__(self, parts: Parts) -> None:
        """Given its parts, built (``Crawler(build_parts(CrawlSetup(...)))``, crawl/_build.py)."""
        p = parts
        self.store, self.fetcher, self.warc = p.store, p.fetcher, p.warc
        self.batch, self.clock, self.wall, self.progress = p.batch, p.clock, p.wall, p.progress
        self.strict = strict_mode() if p.strict is None else p.strict
        self.probe = p.probe  # evaluate --fetch (crawl/probe.py): links not followed
        self.pace = p.pace
        self.stats, self.discovery, self.scripted, self.hosts = (
            p.stats,
            p.discovery,
            p.scripted,
            p.hosts,
        )
        self.record, self.spellings, self.learning = p.record, p.spellings, p.learning
        self.admission, self.sources, self.soft404 = p.admission, p.sources, p.soft404
        # One machine or many (crawl/_batching.py): chosen once, from the store.
        self.batching = p.batching
        self._tasks: set[asyncio.Task[Any]] = set()
        self._done: deque[asyncio.Task[Any]] = deque()
        self._backlog_bytes = 0  # body bytes of the fetches in _done
        # Many machines: per host, the fetches that ended and are not in the DB yet (waiting
        # to be handled, or handled since the last commit). Such a host is not given away:
        # its URL is in flight in the DB, and had this worker died, the next owner would
        # not know to fetch it again. ``_handled``: those handled since the last commit.
        self._open: Counter[str] = Counter()
        self._handled: list[str] = []
        # A host's next request waits until its last page is handled where what comes next
        # depends on that page: learning (the rules its pages teach) and a scripted crawl
        # (seed 002 §3.4.2: a list page's details go before the next list page, which only
        # holds once the page's links are admitted). ``_ended``: when each such fetched
        # page's request ended (by its ``_Done``'s id), for the host's politeness clock once
        # the page is handled (``_task_done``).
        self._page_first = p.learning is not None or p.scripted is not None
        self._ended: dict[int, float] = {}
        self._wake: asyncio.Future[None] | None = None
        self._stop = 0  # 1: finish in-flight fetches and flush; 2: cancel them
        self._last_commit = self.clock()
        self._last_progress = 0.0
        self._next_maintain = -math.inf
        self._robots_in_flight = 0  # robots.txt requests out: their hosts' pages wait
        # URLs (a robots.txt: by its URL) that failed once for our own reasons this run:
        # queued again once, ended ``iErr`` the second time (``_internal_failure``).
        self._failed_once: set[int | str] = set()
        # The safety net (``_stuck_check``): idle rounds in a row that found nothing to do.
        self._idle_rounds = 0
        self._idle_mark = 0
        self._stuck: str | None = None
        self._next_eager = -math.inf
        # The commit in flight (``_launch``), and what the loop does once it is in. The
        # invariant: while it is set, the loop does not touch the store, the WARC writer,
        # nor the Recorder's written state — it starts fetches for URLs held in memory
        # (``HostTable.claims_paused``), and finished fetches wait in ``_done`` (``_taken``:
        # pages already taken, their payloads asked about by the commit) — so the store's
        # connection (sqlite3 or psycopg) is only ever used by one thread at a time.
        self._committing: asyncio.Future[None] | None = None
        self._then: Callable[[], None] | None = None
        self._taken: list[asyncio.Task[Any]] = []
        # A store across the network that went away: since when (monotonic), as the commit
        # thread heard it (``_db_away``); the progress line counts from there.
        self._away_since: float | None = None
        self._loop_thread = threading.get_ident()
        self.batching.watch_outages(self.store, self._db_away)

    # -- the loop ---------------------------------------------------------------------------

    async def run(self) -> CrawlResult:
        """Crawl until no work is left anywhere (or a stop); everything is committed and
        every lease given back when this returns. The batch's end is the caller's."""
        loop = asyncio.get_running_loop()
        installed = []
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.request_stop)
                installed.append(sig)
        self._loop_thread = threading.get_ident()
        try:
            self._seed()
            await self._settle()
            await self._loop(loop)
            if self.progress is not None:
                self._show(self.clock())  # the last figures, not those of 0.25 s ago
        finally:
            # A commit in flight ends first (a thread is not cancelled): what follows, and
            # the final flush, use the store. Its error, if the loop ended for another one,
            # is the loop's to tell.
            fut = self._committing
            if fut is not None:
                await asyncio.wait([fut])
                if not fut.cancelled():
                    fut.exception()  # retrieved: told by the loop's own error
            for sig in installed:
                loop.remove_signal_handler(sig)
                # The flush below must run to its end whatever arrives now: once the loop's
                # handler is gone, uvloop leaves SIGINT at the OS default, and a Ctrl-C there
                # would kill the process before the last second of work is written.
                signal.signal(sig, self._signal_during_flush)
            for task in self._tasks:
                task.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            await self.fetcher.close()
        try:
            finished = self._stop == 0 and self._stuck is None
            if self.learning is not None:
                # What the last pages taught, kept with them.
                self.admission.apply(self.learning.commit())
            self.admission.flush()
            self.sources.write()  # the dates of the URLs just admitted
            self._record_leftovers()
            self.record.write()
            # Every fetch has ended and is in the rows just written: what is still claimed
            # is the unstarted windows, which go back to the queue with the leases.
            self.store.requeue_in_flight()
            self.hosts.release_all(self.clock(), self.wall())
            self.record.commit()
        finally:
            for sig in installed:
                signal.signal(sig, previous[sig])
        self.stats.interrupted = not finished
        if self._stuck is not None:
            raise InternalError(self._stuck)
        return CrawlResult(self.batch.number, self.stats, finished)

    def request_stop(self) -> None:
        """Ctrl-C: the first finishes in-flight fetches and flushes; the second cancels them."""
        self._stop += 1
        if self._stop >= 2:
            for task in self._tasks:
                task.cancel()
        self._poke()

    def _signal_during_flush(self, signum: int, _frame: object) -> None:
        """A signal while the last rows are written: noted, and the flush goes on."""
        self.stats.late_signals += 1

    def _poke(self, _task: object = None) -> None:
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is None:
            done: _Done = task.result()
            if done.fenced:
                self._fenced(done.item)
                self._poke()
                return
            self._backlog_bytes += sum(len(r.body) for r in done.results)
            self._open[done.item.host] += 1
            if isinstance(done.item, QueuedURL):
                # The request is over: start the host's politeness clock now, not when the
                # page has been processed, so its next request can overlap that work.
                r = done.results[0]
                if r.state is NetState.iErr:
                    # Our failure, not the server's (issue 24): no delay is owed for it and
                    # no failure counts against the host; the URL is queued again.
                    self.hosts.frontier.release(done.item.host)
                elif self._page_first:
                    # The host's next request waits until this page is handled (its
                    # politeness clock still starts now, ``_task_done``), so that what the
                    # page decides — the rules it teaches, the order of a script's links —
                    # is in force before the host's next fetch, however far the loop's
                    # handling lags behind the fetching (a loaded machine).
                    self._ended[id(done)] = self.clock()
                else:
                    self.hosts.page_done(
                        done.item, self.clock(), r.elapsed, failed=_trouble(r), state=r.state
                    )
        if not self._done:
            self.batching.done_began(self.clock())
        self._done.append(task)
        self._poke()

    async def _loop(self, loop: asyncio.AbstractEventLoop) -> None:
        interval = self.pace.commit_interval
        while True:
            self._reap()  # a commit that is in: what waited for it goes on
            await self._handle_batch(self._take_batch(), interval)
            now = self.clock()
            if self._store_free() and (
                now - self._last_commit >= interval
                # The lease round is due before the next commit: commit now, so that the
                # two clocks stay in step.
                or now >= self._next_maintain
            ):
                self._commit(now)
            waiting = bool(self._done or self._taken)
            wait = await self._plan(now, interval, waiting)
            if wait is None:
                return
            if isinstance(wait, _Again):
                continue
            if self.progress is not None and now - self._last_progress >= 0.25:
                self._last_progress = now
                self._show(now)
            held = self._held_for(now)  # many machines: a small batch waiting (_take_done)
            if waiting and held is None and self._committing is None:
                await asyncio.sleep(0)  # let I/O and timers run between two batches
                continue
            if held is not None:
                wait = min(wait, held)
            wake = self._wake = loop.create_future()
            timer = loop.call_later(max(0.0, min(wait, interval)), self._poke)
            await wake
            timer.cancel()
            self._wake = None

    def _take_batch(self) -> list[asyncio.Task[Any]]:
        """The finished fetches to handle now, if the store is free for them."""
        if not self._store_free():
            return []
        if self._taken:
            batch, self._taken = self._taken, []  # their payloads were asked about
            return batch
        # The fetches finished so far, one batch: new completions wait for the next round,
        # so that commits (crash safety) and the display are never starved.
        batch = self._take_done(self.clock())
        if not self.batching.asks_ahead(batch):
            return batch
        if self.clock() >= self._next_maintain:
            # The lease round is due: the commit now, its writes riding with this batch's
            # content-seen query (one exchange, in the commit's thread); the batch is handled
            # once it is in, and its rows go with the next commit.
            self._commit(self.clock(), prefetch=batch)
        else:
            # Their content-seen query in the thread too (the DB may have gone away since
            # the last look: the loop fetches meanwhile); handled once answered.
            self._launch(functools.partial(self.record.prefetch, _pages_of(batch)), None)
        self._taken = batch
        return []

    async def _handle_batch(self, batch: list[asyncio.Task[Any]], interval: float) -> None:
        """Handle ``batch``'s pages, a commit when due (the rest waits for it), and between
        pages the next requests of the hosts that answered."""
        clock, concurrency = self.clock, self.pace.concurrency
        for i, task in enumerate(batch):
            if not self._store_free():
                # The DB went away (its server closed our connection): the pages wait for
                # it, while its thread waits and the loop goes on fetching. Looked at before
                # each page, so that few of the loop's own store calls (a claim, an
                # admission) meet the outage first.
                self._taken = batch[i:]
                return
            self._handle(task)
            if clock() - self._last_commit >= interval:
                self._commit(clock())
                # The rest of the batch waits for the commit (its pages write WARC records
                # and ask the store).
                self._taken = batch[i + 1 :]
                return
            if not self._stop and len(self._tasks) < concurrency:
                # The hosts that answered are ready again (their clocks started when the
                # fetch ended): send their next requests (sleep(0) lets them go out) before
                # the next page is processed.
                started = len(self._tasks)
                self._store_free()  # claims paused, if the DB just went away
                self._start_ready(clock(), concurrency)
                if len(self._tasks) > started:
                    await asyncio.sleep(0)

    async def _plan(self, now: float, interval: float, waiting: bool) -> float | _Again | None:
        """What the loop does next: wait up to so many seconds (for a fetch, a host's clock,
        other workers), go round again at once (``_AGAIN``), or end (``None``)."""
        if self._stop:
            if not self._tasks and not waiting:
                await self._settle()
                return None if not self._done and not self._taken else _AGAIN
            return interval
        next_in = self._start_ready(now, self.pace.concurrency)
        if next_in is not None:
            return next_in
        if self._tasks or waiting:
            return interval
        await self._settle()  # _idle asks the store
        more = await self._idle(now)
        return _AGAIN if more == 0.0 else more

    # -- many machines: handling finished fetches in batches worth a round trip -------------

    def _held_for(self, now: float) -> float | None:
        """Seconds the finished fetches still wait for company (``None``: handle them now)."""
        return self.batching.held_for(
            now,
            done=len(self._done),
            in_flight=bool(self._tasks),
            stopping=bool(self._stop),
            next_maintain=self._next_maintain,
        )

    def _take_done(self, now: float) -> list[asyncio.Task[Any]]:
        """The finished fetches to handle in this round: all of them, unless a shared
        store's small batch waits for company (``_held_for``)."""
        if self._done and not self._tasks and self.batching.starts_first(stopping=bool(self._stop)):
            self._start_ready(now, self.pace.concurrency)
        if self._held_for(now) is not None:
            return []
        return [self._done.popleft() for _ in range(len(self._done))]

    async def _idle(self, now: float) -> float | None:
        """Nothing held is ready and nothing is in flight: find work (0.0), wait for other
        workers (seconds), or end (``None``, when no host anywhere has work)."""
        wall = self.wall()
        hosts = self.hosts
        # The DB away (``DatabaseAway``): 0.0, and the loop waits for the thread's reach.
        try:
            with self.store.impatient():
                if self.admission.flush() or hosts.refill(force=True):
                    return 0.0
        except DatabaseAway:
            self._db_lost()
            return 0.0
        # Many machines: the fetch rows in the DB before hosts are released. Whether the
        # crawl is over is read after every write of this worker (``ride=False``).
        if not self._commit(now, ride=False):
            return 0.0
        await self._settle()
        try:
            with self.store.impatient():
                hosts.release_idle(now, wall)
                hosts.last_left = None
                if hosts.lease(now, wall) or hosts.refill(force=True):
                    return 0.0
        except DatabaseAway:
            self._db_lost()
            return 0.0
        # What this worker admitted and released is visible to all.
        if not self._commit(now, ride=False):
            return 0.0
        await self._settle()
        try:
            with self.store.impatient():
                # A shared store: the lease round just asked (after this worker's releases).
                left = hosts.last_left or self.store.work_left(wall)
        except DatabaseAway:
            self._db_lost()
            return 0.0
        if left.queued_hosts == 0 and left.leased_elsewhere == 0 and not hosts.held():
            try:
                return 0.0 if self._orphans_requeued() else None
            except DatabaseAway:
                self._db_lost()
                return 0.0
        if self._stuck_check(left):
            return None  # run() raises once everything is written
        return _IDLE_POLL

    def _orphans_requeued(self) -> bool:
        """Many machines, before this worker ends: URLs left in flight on a host nobody
        leases — claimed under a lease that was then lost or given up without them (a stall
        past the lease, an answer lost to a restart) — are counted by no worker's reading of
        the work left, so every worker would end with them unfetched (issue 24: three workers
        paused past their lease). They go back to the queue and the crawl goes on. Holding no
        host, this worker requeues those of hosts the DB still leases to it as well: it
        knows none of them (``requeue_in_flight``, as at the end of a run)."""
        if self.batching.alone:
            return False  # one process: what it claimed is in its frontier, or ends recorded
        with self.store.impatient():
            return self.store.requeue_in_flight() > 0

    def _stuck_check(self, left: WorkLeft) -> bool:
        """The safety net: alone on its store (no other worker can bring or take work),
        with nothing in flight, nothing due at any time and nothing claimable, yet URLs
        queued — round after round (a host just leased and found empty is let go at the
        next) — the crawl would wait forever. That is a bug of ours: say so and stop
        (resumable), never hang. A dead run's leases (``leased_elsewhere``) expire: wait."""
        if not self.batching.alone or left.leased_elsewhere:
            self._idle_rounds = 0
            return False
        st = self.stats
        mark = st.fetched + st.robots_fetched + st.sources_fetched
        if mark != self._idle_mark:
            self._idle_mark, self._idle_rounds = mark, 0
        self._idle_rounds += 1
        if self._idle_rounds < _STUCK_ROUNDS:
            return False
        self._stuck = (
            f"the crawl is stuck: {left.queued_hosts + self.hosts.held()} host(s) have queued "
            "URLs but nothing is in flight or due (a bug of dustless); stopped, "
            "resumable with --resume"
        )
        return True

    def _start_ready(self, now: float, concurrency: int) -> float | None:
        """Start fetches for ready items; the seconds until the next one, None when idle."""
        if self._backlog_full():
            return math.inf  # handle what is waiting first
        hosts = self.hosts
        wall = self.wall()
        self.batching.reset_hold()
        while len(self._tasks) < concurrency:
            try:
                with self.store.impatient():
                    r = hosts.next(now, wall)
            except DatabaseAway:
                self._db_lost()  # claims pause: the URLs held are served meanwhile
                continue
            if r is None or isinstance(r, float):
                if self._eager_flush(now):
                    continue  # the links just admitted may be what the idle slots need
                if self.admission.pending:
                    # Links wait for the next admission (at most every _EAGER_FLUSH): come
                    # back for them then, not at the next commit (a chain of pages crawled
                    # one a second otherwise).
                    self.batching.hold(r, links_pending=True)
                    soon = max(0.0, self._next_eager - now)
                    return soon if r is None else min(r, soon)
                self.batching.hold(r)  # how long the waiting pages may wait for company
                return r
            if isinstance(r, Denied):
                self._open[r.page.host] += 1
                self._handled.append(r.page.host)
                self._record_state(r.page.url_id, NetState.robots)
            elif isinstance(r, RobotsItem):
                self._robots_in_flight += 1
                self._spawn(self._fetch_robots(r))
            elif r.kind in SOURCE_KINDS:  # a sitemap or feed: streamed through its parser
                self._spawn(self._fetch_source(r))
            else:
                self._spawn(self._fetch_page(r))
        return math.inf  # every slot busy: a finished fetch wakes the loop

    def _backlog_full(self) -> bool:
        """Enough fetched pages wait to be handled: no new fetch starts. While the DB is away
        (a commit waits for it) this bounds the memory the pages held for it take."""
        waiting = len(self._done) + len(self._taken)
        return (
            self._backlog_bytes > _BACKLOG_BYTES
            or waiting > BACKLOG_PAGES
            # The narrow bound is for pages that could be handled now; while a commit is
            # in flight none can, and fetching goes on (the host's politeness pauses are
            # not stretched by the commit) up to the wide bounds, for as long as it lasts.
            or (waiting >= self.batching.backlog_pages and self._committing is None)
        )

    def _eager_flush(self, now: float) -> bool:
        """Slots are free but nothing held is ready: admit the pending links now rather than
        at the next commit (a breadth-first crawl's next level is in them). At most every
        ``_EAGER_FLUSH`` seconds, so a store across the network sees a bounded rate of
        round trips; True if URLs were queued."""
        if not self.admission.pending or now < self._next_eager or self._committing is not None:
            return False
        self._next_eager = now + _EAGER_FLUSH
        try:
            with self.store.impatient():
                return self.admission.flush() > 0
        except DatabaseAway:
            self._db_lost()
            return False

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    # -- fetching (the only awaits) ----------------------------------------------------------

    async def _may_send(self, host: str, url: str) -> bool:
        """The lease fence, right before a request is sent (``HostTable.sure``): checked
        when the task was started, it is checked again once the task has waited its turn
        (the loop handling a batch of pages, a robots.txt's rest between redirects) and the
        host's DNS lookup, so a worker stalled past its lease meanwhile sends nothing. On one
        machine no other worker can hold the host (``Batching``)."""
        return await self.batching.may_send(self.fetcher, self.hosts, host, url, self.clock)

    def _fenced(self, item: QueuedURL | RobotsItem) -> None:
        """A task sent nothing (``_may_send``): its URL waits for a renewal."""
        self.stats.fenced += 1
        if isinstance(item, RobotsItem):
            self._robots_in_flight -= 1
            self.hosts.fenced(item.host, self.clock())  # its page waits in the queue
        else:
            self.hosts.fenced(item.host, self.clock(), item)

    async def _fetch_page(self, item: QueuedURL) -> _Done:
        if not await self._may_send(item.host, item.url):
            return _Done(item, [], fenced=True)
        v = self.hosts.validators.get(item.url_id)
        try:
            result = await self.fetcher.fetch(item.url, None if v is None else v.headers())
        except Exception as exc:  # a bug of ours in the fetcher: one URL's iErr, not the crawl
            if self.strict:
                raise
            result = self._internal(item.url, exc)
        section = None
        if result.state is NetState.OK and result.status == 200 and is_html(result.mime):
            section = self.soft404.wants_probe(item.host, item.url)
        if section is None:
            return _Done(item, [result])
        first = self.soft404.probes_of(item.host) == 1
        probes = await self._probe(item, result, section)
        return _Done(item, [result], probes=probes, first_probe=first)

    async def _probe(
        self, item: QueuedURL, page: FetchResult, section: str
    ) -> tuple[FetchResult, ...]:
        """The host's first 200 page (of a section): one random, surely missing path of it
        is requested (crawl/soft404.py), and one redirect of the answer followed on the same
        host. Each is one more request on the host's clock: the host rests before it, as
        between any two of its requests, and robots.txt may forbid it (then nothing is
        asked)."""
        url = probe_url(item.url, section, secrets.token_hex(8))
        origin = f"{url.split('://', 1)[0]}://{item.host}"
        rules = self.hosts.robots.get(robots_key(origin), self.wall())
        if rules is None or not rules.allowed(self.pace.agent, url):
            return ()
        politeness = self.hosts.frontier.politeness
        crawl_delay = rules.crawl_delay(self.pace.agent)
        out: list[FetchResult] = []
        previous = page
        for _hop in range(2):
            await asyncio.sleep(politeness.delay(previous.elapsed, crawl_delay))
            if not await self._may_send(item.host, url):  # the lease's fence, as any request
                break
            try:
                previous = await self.fetcher.fetch(url, None)
            except Exception:  # as in _fetch_page: a bug of ours, not the page's
                if self.strict:
                    raise
                break
            out.append(previous)
            status, location = previous.status, previous.location
            if status is None or not 300 <= status < 400 or not location:
                break
            if location.split("/")[2:3] != [item.host] or not rules.allowed(
                self.pace.agent, location
            ):
                break
            url = location
        return tuple(out)

    async def _fetch_source(self, item: QueuedURL) -> _Done:
        """A sitemap or feed: its body goes to the parser as it arrives, and the entries of
        each chunk to admission (``crawl/sources.py``); nothing of it is held. No validators
        are sent: a recrawl reads every source again, for this batch's lastmod."""
        if not await self._may_send(item.host, item.url):
            return _Done(item, [], fenced=True)
        self.hosts.validators.pop(item.url_id, None)
        reader = self.sources.reader(item)
        try:
            result = await self.fetcher.fetch_with(
                item.url, None, self.sources.fetch_limits, keep_prefix=True, sink=reader
            )
        except Exception as exc:  # as in _fetch_page
            if self.strict:
                raise
            result = self._internal(item.url, exc)
        return _Done(item, [result], reader=reader)

    async def _fetch_robots(self, item: RobotsItem) -> _Done:
        """robots.txt by RFC 9309's fetch rules (``dustless.fetch.fetch_robots``); each
        redirect hop is another request, so the host rests in between."""
        politeness = self.hosts.frontier.politeness

        async def rest(previous: FetchResult) -> None:
            await asyncio.sleep(politeness.delay(previous.elapsed, None))
            if not await self._may_send(item.host, previous.location or item.url):
                raise _Fenced  # the hops so far are dropped: the next owner asks again

        if not await self._may_send(item.host, item.url):
            return _Done(item, [], fenced=True)
        try:
            fetched = await fetch_robots(self.fetcher, item.url, pause=rest)
        except _Fenced:
            return _Done(item, [], fenced=True)
        except Exception as exc:  # as in _fetch_page
            if self.strict:
                raise
            return _Done(item, [self._internal(item.url, exc)])
        return _Done(item, list(fetched.results), fetched)

    def _internal(self, url: str, exc: BaseException) -> FetchResult:
        return FetchResult.unfetched(
            url, NetState.iErr, error=_logged(url, exc), started=self.wall()
        )

    def _internal_failure(self, item: QueuedURL | RobotsItem, error: str | None) -> None:
        """A fetch that failed for dustless's own reasons never ends a URL at once (issue
        24): the first time in a run it is queued again — its host's clock and failure
        count untouched, an ``iErr`` row kept for the record — and the second time it ends
        ``iErr``, so a bug that repeats cannot loop."""
        self.stats.internal_errors += 1
        key: int | str = item.url if isinstance(item, RobotsItem) else item.url_id
        again = key in self._failed_once
        self._failed_once.add(key)
        if isinstance(item, RobotsItem):
            if not self.hosts.frontier.in_flight_at(item.host):
                return  # failed after its answer was taken in: the rules are known
            if not again:
                # The page that asked for it waits at the head of its host's queue: the
                # host's next turn asks for the robots.txt again.
                self.hosts.frontier.release(item.host)
                return
            # Again: unreachable (RFC 9309 §2.3.1.4), so the host backs off and is given
            # up after --max-failures like any host whose robots.txt does not answer.
            done = self.hosts.robots_done(
                item,
                None,
                b"",
                NetState.iErr,
                error,
                None,
                mono=self.clock(),
                wall=self.wall(),
                elapsed=0.0,
            )
            self.record.host(done.info)
            if done.block is not None:
                self._block(done.block)
            return
        if again or self.hosts.blocked(item.host):
            self.hosts.validators.pop(item.url_id, None)
            self._record_state(item.url_id, NetState.iErr, error)
            return
        # Still claimed by this worker (a resume or the run's end queues it as such).
        self.record.fetch(
            FetchRecord(
                item.url_id,
                self.wall(),
                NetState.iErr,
                error=error,
                batch=self.batch.number,
                url_state=URLState.IN_FLIGHT,
            )
        )
        self.hosts.give_back([item])

    # -- handling a finished fetch (synchronous) ---------------------------------------------

    def _handle(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            raise exc
        done: _Done = task.result()
        self._backlog_bytes -= sum(len(r.body) for r in done.results)
        item = done.item
        ended = self._ended.pop(id(done), None)
        if ended is not None and isinstance(item, QueuedURL):
            r = done.results[0]
            self.hosts.page_done(item, ended, r.elapsed, failed=_trouble(r), state=r.state)
        self._handled.append(item.host)  # its rows are written at the next commit
        if isinstance(item, RobotsItem):
            self._robots_in_flight -= 1
        if self.batching.lost(self.hosts, item.host):
            # Fencing: the host's lease was lost while this fetch was out (a stall); its
            # new owner fetches the URL again, so nothing of this one is recorded (the
            # store would refuse its row anyway). A page's slot was given back when its
            # request ended (``_task_done``); a robots.txt's is given back here.
            self.stats.lease_lost_drops += 1
            if isinstance(item, RobotsItem):
                self.hosts.robots_lost(item.host)
            return
        # The validators a recrawl sends, for a retry should handling fail (``_on_page``
        # takes them).
        held = self.hosts.validators.get(item.url_id) if isinstance(item, QueuedURL) else None
        try:
            if done.results[0].state is NetState.iErr:
                self._internal_failure(item, done.results[0].error)
            elif isinstance(item, RobotsItem):
                self._on_robots(item, done.results, done.robots)
            elif done.reader is not None and isinstance(item, QueuedURL):
                self._on_source(item, done.results[0], done.reader)
            else:
                if done.probes:
                    self._probed(item, done.probes, first=done.first_probe)
                self._on_page(item, done.results[0])
        except (StoreError, OSError):
            raise  # the disk or the DB: the crawl stops with one line, nothing half-written
        except Exception as bug:  # a bug of ours while handling one URL: retried once
            if self.strict:
                raise
            if held is not None and isinstance(item, QueuedURL):
                self.hosts.validators[item.url_id] = held
            self._internal_failure(item, _logged(item.url, bug))

    def _on_robots(
        self, item: RobotsItem, results: list[FetchResult], fetched: RobotsFetch | None
    ) -> None:
        first, final = results[0], results[-1]
        self.stats.robots_fetched += 1
        started = first.started or self.wall()
        for r in results:
            self.record.response(r.url, r, r.started or started, dedup=False)
        status = fetched.status if fetched is not None else None
        body = fetched.body if fetched is not None else b""
        error = final.error if first.state is not NetState.filtered else first.error
        if status is None and first.state in _TROUBLE:
            self.stats.count_failure("robots.txt", failure_kind(first.state, error))
        done = self.hosts.robots_done(
            item,
            status,
            body,
            first.state,
            error,
            first.ip,
            mono=self.clock(),
            wall=self.wall(),
            elapsed=sum(r.elapsed for r in results),
        )
        self.record.host(done.info)
        self.record.robots(self.hosts.robots_rows())
        if done.block is None and done.info.robots_state != "unreachable":
            # --sitemaps: the origin's Sitemap: lines (or /sitemap.xml) join its queue.
            self.sources.robots_listed(item.page, item.origin, done.info.sitemaps)
        if done.block is not None:
            if done.block.state is NetState.filtered:
                self.stats.refused_hosts[item.host] = error or "address policy"
            self._block(done.block)

    def _block(self, block: Block) -> None:
        """Stop a host; every URL still queued for it is recorded with the block's state."""
        for url_id in self.hosts.block(block):
            self._record_state(url_id, block.state, block.error)

    def _record_leftovers(self) -> None:
        """URLs queued for a blocked host after its block end as its first ones did."""
        for block, ids in self.hosts.leftovers():
            for url_id in ids:
                self._record_state(url_id, block.state, block.error)

    def _record_state(self, url_id: int, state: NetState, error: str | None = None) -> None:
        self.record.state(url_id, self.wall(), state, error)
        self.stats.count_state(state.value, kind=failure_kind(state, error))

    def _probed(self, item: QueuedURL, probes: tuple[FetchResult, ...], *, first: bool) -> None:
        """A host's soft-404 probe answered: its responses go to the WARC files (every
        request made is archived) and a 200 page becomes the host's signature."""
        for r in probes:
            self.stats.soft404_probes += 1
            self.record.response(r.url, r, r.started or self.wall(), dedup=False)
        last = probes[-1]
        if last.state is NetState.OK and last.status == 200 and is_html(last.mime):
            fp = content_fingerprint(last.body, last.mime, last.header("content-type"))
            if fp is not None and not _lands_home(last.url, item.url):
                self.stats.soft404_signatures += 1
                self.soft404.probed(item.host, fp, first=first)

    def _on_page(self, item: QueuedURL, r: FetchResult) -> None:
        started = r.started or self.wall()
        stats = self.stats
        stats.fetched += 1  # the host table heard of it when the task ended (_task_done)
        held = self.hosts.validators.pop(item.url_id, None)
        if r.state is NetState.noIP:
            stats.count_state(r.state.value, kind=failure_kind(r.state, r.error))
            self.record.fetch(
                FetchRecord(
                    item.url_id,
                    started,
                    r.state,
                    elapsed=r.elapsed,
                    error=r.error,
                    batch=self.batch.number,
                )
            )
            self._block(Block(item.host, NetState.noIP))
            return
        if self.hosts.blocked(item.host):  # too many failures in a row (the clock said so)
            self._block(Block(item.host, r.state))
        state = page_state(r, self.discovery)
        stats.bytes += len(r.body)
        status = r.status
        stored = (
            self.record.response(
                item.url, r, started, dedup=status is not None and 200 <= status < 300
            )
            if state is not NetState.filtered
            else _NOT_STORED
        )
        if stored.revisit or (status == 304 and held is not None):
            stats.revisits += 1
        outcome = page_outcome(
            item,
            r,
            state,
            stored,
            started=started,
            batch=self.batch.number,
            discovery=self.discovery,
            scripted=self.scripted,
            held=held,
            soft404=self.soft404,
        )
        # The state recorded: the fetch's, or pBig / pFlat for a page past extraction's budget.
        fetch = outcome.fetch
        # "code" by HTTP status; a failure by its kind (certificate, DNS, timeout, …)
        stats.count_state(fetch.state.value, status, kind=failure_kind(fetch.state, fetch.error))
        if self.probe:
            self.admission.probe_redirects(outcome.links, item)
            self.record.fetch(outcome.fetch)
            return
        if self.sources.any:
            # --sitemaps: the origin's sitemaps, when its robots.txt came from the DB.
            self.sources.page_origin(item)
            if state is NetState.OK and not stored.revisit:
                # --feeds: before the page's links, so the feed is queued as a feed (kind
                # n) rather than as the plain link (kind h) its <link> element also is.
                self.sources.page_feeds(item, r)
        if outcome.links:
            self.admission.discover(outcome.links, item, outcome.labels)
        if outcome.same_document is not None:
            self.admission.same_document(outcome.same_document, item)
        if outcome.own_label is not None:
            self.admission.label(outcome.own_label)
        self.record.fetch(outcome.fetch)
        # No document (a soft 404 neither): the next spelling.
        self.admission.apply(self.spellings.fetched(item, outcome.fetch.state, status))
        if self.learning is not None:
            # Evidence for the learned rules.
            self.admission.apply(self.learning.page(item, r, outcome.fetch))

    def _on_source(self, item: QueuedURL, r: FetchResult, reader: SourceReader) -> None:
        """A sitemap or feed fetched (its entries are admitted already): its row."""
        if reader.error is not None:
            raise reader.error  # ours or the store's, from inside the sink: as _handle says
        started = r.started or self.wall()
        self.stats.sources_fetched += 1
        what = "sitemap" if item.kind is LinkKind.SITEMAP else "feed"
        kind = failure_kind(r.state, r.error)
        if r.state is NetState.noIP:
            self.stats.count_state(r.state.value, kind=kind, what=what)
            self.record.state(item.url_id, started, r.state, r.error)
            self._block(Block(item.host, NetState.noIP))
            return
        if self.hosts.blocked(item.host):
            self._block(Block(item.host, r.state))
        self.stats.count_state(r.state.value, r.status, kind=kind, what=what)
        self.record.fetch(
            self.sources.finished(item, r, reader, started=started, batch=self.batch.number)
        )

    def _seed(self) -> None:
        """Given seeds (a fresh crawl): seed rows, parties, and their URLs queued."""
        if self.probe:
            return  # the probe runner queued its URLs
        if self.store.has_seeds():
            # Resumed, or a worker joining: the seeds are in (a crash before the first
            # commit leaves none, and they are admitted again). Identities whose fetched
            # spellings all failed get their next one.
            self.admission.apply(self.spellings.resume())
            return
        self.hosts.seeding = True  # a dead seed is told quickly (HostTable._refused_seed)
        self.admission.seed(self.pace.seeds)
        self.hosts.seeding = False
        self._commit(self.clock())  # run() waits for it

    # -- writing -----------------------------------------------------------------------------

    def _commit(
        self, now: float, *, ride: bool = True, prefetch: list[asyncio.Task[Any]] | None = None
    ) -> bool:
        """Start a commit: on the loop, the pending links admitted, the lease round when due
        and the fetch rows handed to the store; in a thread (``_launch``), the WARC fsync and
        then the DB commit. ``prefetch``: pages to ask the content-seen query for, after the
        commit's writes (a shared store sends both in one exchange). ``ride=False``: a
        shared store's lease round reads the work left with an exchange of its own, after
        this worker's writes (``_idle``: whether the crawl is over).

        False: the DB went away under the admission or the lease round (``DatabaseAway``:
        nothing of them applied); no commit starts, the thread waits for the DB instead
        (``_db_lost``, asking about ``prefetch`` once it is back), and the next commit
        takes what this one would have."""
        assert self._committing is None, "one commit at a time"
        if self.learning is not None:
            # New rules first: the pending links get them.
            self.admission.apply(self.learning.commit())
        lease_round = now >= self._next_maintain
        results = None if prefetch is None else _pages_of(prefetch)
        try:
            with self.store.impatient():
                if lease_round and ride:
                    # Many machines: the round's reading of the work left rides with the
                    # admission's exchange (``Batching.expect_work_left``).
                    self.batching.expect_work_left(self.store, self.wall(), self.hosts)
                self.admission.flush()
            self.sources.write()
            self._record_leftovers()
            if lease_round:
                with self.store.impatient():
                    # Hosts whose fetches are not all in the DB (``_open``, this commit's
                    # too) are not given away by the round.
                    self._maintain(now)
        except DatabaseAway:
            self._db_lost(results)
            return False
        taken = self.record.begin_commit()  # written by the thread, after the fsync
        handled, self._handled = self._handled, []
        self.stats.commits += 1
        self._last_commit = now

        def then() -> None:
            # The fetches handled before this commit are in the DB: their hosts may go.
            open_ = self._open
            for host in handled:
                open_[host] -= 1
                if open_[host] <= 0:
                    del open_[host]

        asked = self.batching.payloads(results)  # a shared store: asked in the exchange
        self._launch(lambda: self.record.durable(taken, asked), then)
        return True

    def _launch(self, durable: Callable[[], None], then: Callable[[], None] | None) -> None:
        """Run ``durable`` (a commit's fsync and DB commit, or the wait for a DB that went
        away) in a thread; ``then`` on the loop once it is done (``_reap``). See
        ``_committing`` for what the loop may do meanwhile."""
        self.hosts.claims_paused = self.record.busy = True
        fut = asyncio.ensure_future(asyncio.to_thread(durable))
        fut.add_done_callback(self._poke)
        self._committing, self._then = fut, then

    def _reap(self) -> None:
        """The commit in flight, if it is done: its error stops the crawl (the disk, or a DB
        away longer than the store waits: one line, resumable), else what waited goes on."""
        fut = self._committing
        if fut is None or not fut.done():
            return
        self._committing = None
        self.hosts.claims_paused = self.record.busy = False
        fut.result()
        then, self._then = self._then, None
        if then is not None:
            then()

    async def _settle(self) -> None:
        """Wait for the commit in flight, if any (what follows needs its result)."""
        if self._committing is not None:
            await asyncio.wait([self._committing])
            self._reap()

    def _store_free(self) -> bool:
        """May the loop use the store now? Not while a commit is in flight; nor when the DB
        across the network closed the connection (a restart, a failover): the wait for it
        is then the thread's (``store.reach``), and the loop fetches meanwhile."""
        if self._committing is not None:
            return False
        if self.batching.away(self.store):
            self._launch(self.store.reach, None)
            return False
        return True

    def _maintain(self, now: float) -> None:
        """Lease renewals and a lease round (a shared store: the fair share of hosts)."""
        due, self._next_maintain = self._next_maintain, now + _MAINTAIN_EVERY
        try:
            self.hosts.maintain(now, self.wall())
            # Hosts whose fetches are not all in the DB (``_open``) are not given away.
            self.hosts.lease(now, self.wall(), keep=self._open)
        except DatabaseAway:
            self._next_maintain = due  # due again once the DB is reached
            raise

    def _db_lost(self, prefetch: list[FetchResult] | None = None) -> None:
        """One of the loop's own store calls met a DB that went away (``DatabaseAway``: it
        never waits, and nothing of it was applied — its caller keeps it to do again). The
        wait is the commit thread's, as when ``_store_free`` sees the DB gone: the loop goes
        on fetching what it holds, claims paused, and calls the store again once it is back.
        ``prefetch``: the pages a commit meant to ask about, asked once the DB answers."""
        if self._committing is not None:
            return  # the thread already waits for it
        store, record = self.store, self.record

        def reach() -> None:
            store.reach()
            if prefetch:
                record.prefetch(prefetch)

        self._launch(reach, None)

    def _db_away(self, seconds: float | None) -> None:
        """The store waits for its DB (``seconds`` so far), or it is back (``None``). Called
        by the commit thread, while the loop goes on and shows it (``_show``); only values
        are set here. Called on the loop (one of the few calls of the loop's own that still
        wait: a page's own, ``_handle``), the line is shown at once."""
        self._away_since = None if seconds is None else self.clock() - seconds
        if self.progress is not None and threading.get_ident() == self._loop_thread:
            self._show(self.clock())

    def _show(self, now: float) -> None:
        assert self.progress is not None
        s = self.hosts.frontier.stats(now)
        st = self.stats
        st.queued = self.hosts.queued_here() + self.admission.pending
        st.in_flight = s.in_flight
        st.hosts_ready, st.hosts_waiting, st.hosts_blocked = (
            s.hosts_ready,
            s.hosts_waiting,
            s.hosts_blocked,
        )
        # What the waiting hosts wait for: politeness, back-off, their robots.txt.
        st.hosts_polite, st.hosts_backoff = s.hosts_polite, s.hosts_backoff
        st.hosts_robots = self._robots_in_flight
        since = self._away_since
        st.db_away = None if since is None else max(0.0, now - since)
        # While the DB is away: the pages fetched for it, and whether fetching stopped at
        # the bound (``_backlog_full``).
        st.db_waiting = len(self._done) + len(self._taken)
        st.db_full = since is not None and self._backlog_full()
        self.progress.update(st, now)


def _pages_of(batch: list[asyncio.Task[Any]]) -> list[FetchResult]:
    """The pages' results among finished fetch tasks (what content-seen asks about)."""
    return [
        t.result().results[0]
        for t in batch
        if not t.cancelled() and t.exception() is None and isinstance(t.result().item, QueuedURL)
    ]


def _logged(url: str, exc: BaseException) -> str:
    """Log a bug of ours met on ``url`` with its traceback; the one line its row keeps."""
    _log.error("internal error (a bug of dustless) on %s", url, exc_info=exc)
    return f"internal: {exc!r}"[:500]


def _lands_home(probe: str, page: str) -> bool:
    """A probe redirected to the site's root, or to the page that asked for it: the site
    sends missing URLs home, and home is a document, never a signature."""
    path = probe.split("/", 3)[3:4]
    return probe == page or path in ([], [""], ["index.html"])


def _trouble(r: FetchResult) -> bool:
    """The server is in trouble (004 Fig. 3 timeouts and errors, 5xx, 429): back off."""
    status = r.status
    return r.state in _TROUBLE or (status is not None and (status >= 500 or status == 429))
