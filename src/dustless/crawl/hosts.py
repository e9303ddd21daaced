"""The host table: everything the crawl knows about a host, owned in one place.

A *host* is a politeness key — the authority, one web server — and this worker owns it while
it holds the host's lease in the crawl DB (ARCHITECTURE "Many machines": one owner at a time,
so one request at a time and the delay hold across workers). For each host it holds:

* the politeness clock, queues, back-off and blocking (the pure ``Frontier``);
* robots.txt, per *origin* — scheme, host and port (RFC 9309 §2.3: ``http://h/`` and
  ``https://h/`` may answer differently) — in a ``RobotsCache`` of the rules' 24 hours
  (§2.4), filled from the DB when a window of URLs is claimed (a resume, or another worker,
  reuses what is fresh) and by this worker's own fetches;
* its window onto the DB queue: a few dozen URLs in memory, claimed in batches, refilled when
  it runs low, so a million queued URLs cost disk, not memory;
* its lease: taken in batches, renewed while worked, given back when the host has no work,
  with the politeness clock handed on (``ready_at``). A lease is *fenced*: no request
  starts for a host once its lease may have run out by this worker's own monotonic clock —
  the last renewal (the time it was sent) plus the TTL, less a quarter of the TTL for the
  request to end in — until a renewal proves it is still ours (a worker stalled past its
  lease, by SIGSTOP or a pause, must not send while another holds the host). The store
  refuses the rows of a lease that was lost all the same (``store/_pg_fetches.py``).

``next`` answers what to do now: fetch a page, fetch an origin's robots.txt first, record a
page robots.txt denies, wait, or nothing. The engine does the fetching and the recording.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from dustless.crawl.conditional import Validator, validators_for
from dustless.errors import DatabaseAway
from dustless.frontier import Frontier, HostState, Politeness, QueuedURL, Ready
from dustless.robots import (
    RobotsCache,
    RobotsOutcome,
    classify_response,
    robots_key,
    robots_url,
)
from dustless.states import NetState
from dustless.store import CrawlStore, HostInfo, RobotsRow, StoredURL, URLState, WorkLeft
from dustless.url import origin_of

__all__ = ["LOW", "WINDOW", "Block", "Denied", "HostTable", "RobotsItem"]

WINDOW = 40  # URLs of one host held in memory; refilled below LOW
LOW = 8
LEASE_TTL = 60.0  # seconds a lease lasts without renewal (a dead worker's hosts come back)
_MAX_HOSTS = 20_000  # hosts leased at once: bounds the memory of windows and robots rules
_LEASE_BATCH = 1000
_RECHECK = 0.1  # seconds a host whose lease may have run out waits for its renewal


@dataclass(frozen=True, slots=True)
class RobotsItem:
    """Fetch ``url`` (an origin's robots.txt) with the slot of ``page``, which waits for it."""

    url: str
    origin: str
    page: QueuedURL

    @property
    def host(self) -> str:
        return self.page.host


@dataclass(frozen=True, slots=True)
class Denied:
    """robots.txt disallows ``page``: recorded as state ``robots``, never requested."""

    page: QueuedURL


@dataclass(frozen=True, slots=True)
class Block:
    """Stop ``host``: every URL still queued for it ends with ``state`` (and ``error``)."""

    host: str
    state: NetState
    error: str | None = None


@dataclass(frozen=True, slots=True)
class RobotsDone:
    """What a robots.txt answer did: the host row to store, and a block if the host is done."""

    info: HostInfo
    block: Block | None = None


class _Held:
    __slots__ = ("queued", "renewed", "sure_until")

    def __init__(self, queued: int) -> None:
        self.queued = queued  # URLs queued in the DB for it, as far as this worker knows
        self.renewed = 0.0
        self.sure_until = -math.inf  # monotonic: the lease is surely ours until then


class HostTable:
    """The hosts this worker owns; see the module docstring."""

    def __init__(
        self,
        store: CrawlStore,
        politeness: Politeness,
        *,
        agent: str,
        conditional: bool = False,
        max_hosts: int = _MAX_HOSTS,
        lease_ttl: float = LEASE_TTL,
    ) -> None:
        self.store = store
        self.lease_ttl = lease_ttl
        self.frontier = Frontier(politeness)
        self.agent = agent
        self.max_hosts = max_hosts
        self.robots = RobotsCache()
        self._held: dict[str, _Held] = {}
        self._low: set[str] = set()  # held hosts whose window needs a claim
        self._conditional = conditional
        # Validators of the claimed URLs (a recrawl batch), dropped once a fetch is handled.
        self.validators: dict[int, Validator] = {}
        self._robots_rows: list[RobotsRow] = []  # fetched robots.txt, stored at the commit
        self._next_renew = -math.inf
        self._keys: dict[str, tuple[str, str, int]] = {}  # origin -> its robots key
        # Many machines: the hosts being given back (``_shed``), with their real clocks, and
        # what the last lease round heard of the work left anywhere.
        self._giving: dict[str, float] = {}
        self.last_left: WorkLeft | None = None
        # Hosts blocked here, for the rest of the run (the frontier forgets a host it gives
        # back): a URL of theirs queued after the block — a link admitted later, a redirect,
        # a sitemap entry, a lease taken again, another worker's link claimed here — ends
        # with the block's state too (``leftovers``), or the crawl would never end.
        self._blocks: dict[str, Block] = {}
        self._sweep: set[str] = set()  # blocked hosts the DB may hold queued URLs for
        self._strays: dict[str, list[int]] = {}  # claimed URLs of blocked hosts, to record
        # The given seeds' hosts that have not answered yet (``seeding``: noted as the seeds
        # are queued): a refused connection there is tried a few times quickly, not backed
        # off for minutes (``Politeness.quick_backoff``), so a dead seed is reported soon.
        self.seeding = False
        self._unanswered: set[str] = set()
        # While the engine's commit is in flight (crawl/engine.py, ``_launch``) the store is
        # the commit thread's: ``next`` serves the URLs held in memory and claims nothing.
        self.claims_paused = False

    # -- leases --------------------------------------------------------------------------------

    def lease(self, mono: float, wall: float, keep: Collection[str] = ()) -> int:
        """Lease more hosts when this worker holds less than its share; how many came.

        On a shared store the share is the hosts with work anywhere over the workers alive;
        a worker holding well over it (it started first, another joined) gives the excess
        back, so a worker that joins mid-crawl gets hosts to crawl — never one in ``keep``
        (hosts whose fetch rows are not all in the DB yet) or with a request out."""
        if self.store.shared:
            # A host done here counts in no share: given back now, not when this worker
            # runs out of work altogether (the DB may hold more for it: a claim asks).
            self.release_idle(mono, wall, keep)
        want = self.max_hosts - len(self._held)
        if self.store.shared:
            # -- many machines: the fair share, and the excess given back ------------------
            # The workers seen within a TTL (each one's lease calls are its heartbeat).
            left = self.last_left = self.store.work_left(wall, alive_within=self.lease_ttl)
            total = left.queued_hosts + left.leased_elsewhere + len(self._held)
            share = math.ceil(total / max(1, left.workers))
            want = min(want, share - len(self._held))
            # Shed only well over the share; below that, hosts being drained are resumed
            # (the share grew back: a worker left, or the work left shrank).
            self._shed(-want if -want > max(1, share // 8) else 0, mono, wall, keep)
            if left.queued_hosts == 0:
                return 0  # no host is free to lease: no round trip to find none
        if want <= 0:
            return 0
        leases = self.store.lease_hosts(min(want, _LEASE_BATCH), now=wall, ttl=self.lease_ttl)
        sure = mono + self._sure_for
        for lease in leases:
            held = self._held.get(lease.host)
            if held is None:
                self._held[lease.host] = held = _Held(lease.queued)
            else:
                held.queued = lease.queued
            held.renewed = wall
            held.sure_until = sure
            if lease.host in self._blocks:
                self._sweep.add(lease.host)  # its URLs end recorded, never fetched
                continue
            if lease.ready_at > wall:
                self.frontier.hold(lease.host, mono + lease.ready_at - wall)
            if lease.queued:
                self._low.add(lease.host)
        return len(leases)

    def maintain(self, mono: float, wall: float) -> None:
        """Renew the leases now and then; hosts another worker took over are dropped.

        Also refill the windows that ran low: ``next`` claims only when no host is ready,
        and while others keep the slots busy a host whose window ran dry would wait —
        to be crawled alone, at its politeness pace, at the end of the crawl."""
        if self._low:
            self.refill()
        if wall < self._next_renew or not self._held:
            return
        due, self._next_renew = self._next_renew, wall + self.lease_ttl / 4
        # ``mono`` is from before the renewal was sent: the lease runs from no earlier.
        sure = mono + self._sure_for
        try:
            kept = self.store.renew_leases(list(self._held), now=wall, ttl=self.lease_ttl)
        except DatabaseAway:
            # Not renewed as far as we know (``sure_until`` stands: the fence holds); due
            # again as soon as the DB is reached.
            self._next_renew = due
            raise
        for host, held in list(self._held.items()):
            if host in kept:
                held.sure_until = sure
                continue
            # Our lease ran out (a stall longer than its TTL) and the host is another's now:
            # its new owner queued our claims again, so they must not be fetched here.
            self._drop(host)
            self.frontier.forget(host)

    @property
    def _sure_for(self) -> float:
        # A quarter of the TTL for a request started at the last moment to end in.
        return self.lease_ttl * 0.75

    def holds(self, host: str) -> bool:
        """Is ``host`` this worker's (as far as the last renewal knows)?"""
        return host in self._held

    def sure(self, host: str, mono: float) -> bool:
        """May a request for ``host`` start now (see the module docstring)? Always on a
        store no other worker shares."""
        if not self.store.shared:
            return True
        held = self._held.get(host)
        return held is not None and mono < held.sure_until

    def release_idle(self, mono: float, wall: float, keep: Collection[str] = ()) -> int:
        """Give back the hosts with nothing left to fetch here (but those in ``keep``, whose
        fetch rows are not all in the DB yet); how many were released."""
        idle = [
            h
            for h, held in self._held.items()
            if held.queued <= 0 and not self._busy(h) and h not in keep
        ]
        if not idle:
            return 0
        # The DB may have more for them (another worker's links): a claim tells.
        self.take(self.store.claim_queued(len(idle) * WINDOW, hosts=idle, per_host=WINDOW))
        gone = {h: self._ready_at(h, mono, wall) for h in idle if not self._busy(h)}
        self.store.release_hosts(gone)
        for h in gone:
            self._drop(h)
            self.frontier.forget(h)
        return len(gone)

    # -- many machines: hosts given back to the other workers ------------------------------

    def _shed(self, n: int, mono: float, wall: float, keep: Collection[str]) -> None:
        """Give ``n`` hosts back to the crawl. A host is first *drained* — no new request
        starts (its clock is held at infinity, the real one kept) — and given back once it
        has no request out and every fetch of it is in the DB (not in ``keep``): its window
        goes back to the DB queue, its politeness clock to its next owner (``ready_at``)."""
        frontier = self.frontier
        for host in list(self._giving)[n:]:
            # No longer to be given: its clock back as it was, its window refilled.
            frontier.resume(host, self._giving.pop(host))
            self.note_low(host)
        for host in list(self._held):
            if len(self._giving) >= n:
                break
            if host not in self._giving and not self.blocked(host):
                self._drain(host)
        gone: dict[str, float] = {}
        back: list[int] = []
        for host in list(self._giving):
            if host in keep or frontier.in_flight_at(host):
                continue
            gone[host] = self._ready_at(host, mono, wall)
            for item in frontier.forget(host):
                back.append(item.url_id)
                self.validators.pop(item.url_id, None)
            self._drop(host)
        if back:
            self.store.set_url_state(back, URLState.QUEUED)
        self.store.release_hosts(gone)

    def _drain(self, host: str) -> None:
        """No new request for ``host``: its clock held at infinity, the real one kept."""
        self._giving[host] = self.frontier.next_time(host) or -math.inf
        self.frontier.hold(host, math.inf)

    def _drop(self, host: str) -> None:
        del self._held[host]
        self._low.discard(host)
        self._giving.pop(host, None)

    def release_all(self, mono: float, wall: float) -> None:
        """At the end of a run: every lease given back (its claims are requeued first)."""
        self.store.release_hosts({h: self._ready_at(h, mono, wall) for h in self._held})
        self._held.clear()
        self._low.clear()
        self._giving.clear()

    def held(self) -> int:
        return len(self._held)

    def _busy(self, host: str) -> bool:
        return self.frontier.queued_for(host) > 0 or self.frontier.in_flight_at(host)

    def _ready_at(self, host: str, mono: float, wall: float) -> float:
        t = self.frontier.next_time(host)
        if t is not None and t == math.inf:  # held while given back: the clock it had
            t = self._giving.get(host)
        return wall if t is None or not math.isfinite(t) else wall + max(0.0, t - mono)

    # -- the DB window -----------------------------------------------------------------------

    def queued(self, host: str, n: int = 1) -> None:
        """``n`` more URLs of ``host`` were stored as queued (this worker's admissions)."""
        if host in self._blocks:
            self._sweep.add(host)
        if self.seeding:
            self._unanswered.add(host)
        held = self._held.get(host)
        if held is not None:
            held.queued += n
            self.note_low(host)

    def note_low(self, host: str) -> None:
        held = self._held.get(host)
        if held is not None and held.queued > 0 and self.frontier.queued_for(host) < LOW:
            self._low.add(host)

    def refill(self, force: bool = False) -> bool:
        """Claim queued URLs for held hosts whose window runs low; True if any came.

        ``force`` (nothing is ready): look at every held host the DB may have URLs for.
        """
        if self.claims_paused:
            return False  # the hosts stay low: claimed once the commit is in
        frontier = self.frontier
        hosts: Iterable[str] = self._held if force else self._low
        want = [
            h
            for h in hosts
            if self._held[h].queued > 0
            and frontier.queued_for(h) < LOW
            and not self.blocked(h)
            and h not in self._giving  # many machines: being given back
        ]
        self._low.clear()
        if not want:
            return False
        try:
            claimed = self.store.claim_queued(len(want) * WINDOW, hosts=want, per_host=WINDOW)
        except DatabaseAway:
            self._low.update(want)  # still low: claimed once the DB is reached
            raise
        self.take(claimed)
        if force:
            got = {u.host for u in claimed}
            for h in want:
                if h not in got:  # the DB has nothing for it after all
                    self._held[h].queued = 0
        return bool(claimed)

    def take(self, claimed: list[StoredURL]) -> None:
        """Claimed URLs into the frontier; the robots.txt the DB holds for their origins."""
        if not claimed:
            return
        frontier = self.frontier
        intern = sys.intern
        origins: set[str] = set()
        for u in claimed:
            held = self._held.get(u.host)
            if held is not None:
                held.queued -= 1
            if u.host in self._blocks:
                # Claimed for a host blocked here (another worker's link, a release's last
                # claim): recorded with the block's state by ``leftovers``.
                self._strays.setdefault(u.host, []).append(u.id)
                continue
            item = QueuedURL(
                u.url, intern(u.host), u.depth, u.priority, u.seed_id or 0, u.kind, u.id, u.identity
            )
            if not frontier.push(item):
                # Given up by the clock (``done``), its block not yet handled: ``block``
                # records this one with the rest.
                self._strays.setdefault(u.host, []).append(u.id)
                continue
            origin = origin_of(u.url)
            if self.robots.entry(self._key(origin)) is None:
                origins.add(origin)
        self._load_robots(origins)
        if self._conditional:
            self.validators.update(validators_for(self.store, [u.id for u in claimed]))

    def take_window(self, host: str) -> list[QueuedURL]:
        """The URLs of ``host`` held in memory, taken out (``give_back`` returns those that
        stay): a rule learned for the host may merge some of them (crawl/learn.py)."""
        return self.frontier.take_queued(host)

    def give_back(self, items: list[QueuedURL]) -> None:
        for item in items:
            self.frontier.push(item)
        for host in {item.host for item in items}:
            self.note_low(host)

    def claim_now(self, counts: Mapping[str, int]) -> None:
        """Claim URLs at once, ahead of the windows (seed 002 §3.4.2: urgent classes)."""
        for host, n in counts.items():
            if host in self._held and not self.blocked(host):
                self.take(self.store.claim_queued(n, hosts=[host], per_host=n))

    # -- what to do now ----------------------------------------------------------------------

    def next(self, mono: float, wall: float) -> QueuedURL | RobotsItem | Denied | float | None:
        """A page to fetch, a robots.txt to fetch first, a page robots.txt denies, the
        seconds until a host is ready, or ``None`` when no held host has work."""
        frontier = self.frontier
        while True:
            r = frontier.pop(mono)
            if r is None:
                if self.refill(force=True):
                    continue
                return None
            if not isinstance(r, Ready):
                if self._low and self.refill():
                    continue
                return r.seconds
            item = r.item
            if not self.sure(item.host, mono):
                self.fenced(item.host, mono, item)
                continue
            if item.host in self._giving:
                # Many machines: a host being given back (``_shed``) starts nothing more; its
                # last request ended (the clock now set is the one handed on).
                frontier.push_front(item)
                frontier.release(item.host)
                self._drain(item.host)
                continue
            origin = origin_of(item.url)
            rules = self.robots.get(self._key(origin), wall)
            if rules is None:
                # RFC 9309 §2.3: the rules must be known before the first page of an origin
                # (and again after their 24 hours, §2.4). The page waits at the head of its
                # queue; the robots.txt request takes its slot (and owes the host its delay).
                frontier.push_front(item)
                return RobotsItem(robots_url(origin), origin, item)
            if not rules.allowed(self.agent, item.url):
                frontier.release(item.host)
                return Denied(item)
            self.note_low(item.host)
            return item

    def fenced(self, host: str, mono: float, item: QueuedURL | None = None) -> None:
        """Fencing: a request for ``host`` was about to start (popped by ``next``, or its
        task about to send) while the lease may have run out (a stall): nothing is sent.
        ``item`` goes back to the head of its queue (a robots.txt's page waits there
        already), and nothing starts until a renewal says the host is still ours (or
        drops it)."""
        frontier = self.frontier
        if item is not None:
            frontier.push_front(item)
        frontier.release(host)
        if host not in self._held:
            self._forget_lost(host)
            return
        frontier.hold(host, mono + _RECHECK)
        self._next_renew = -math.inf

    def robots_lost(self, host: str) -> None:
        """A robots.txt request of ``host`` ended after the host's lease was lost (a stall):
        nothing of it is kept, and no ``robots_done`` answers its ``Ready``, so its slot is
        given back here — else the host would stay in flight for ever, and this worker, its
        frontier waiting on that request, would never end nor crawl the host if it leased it
        again."""
        self.frontier.release(host)
        self._forget_lost(host)

    def _forget_lost(self, host: str) -> None:
        # Lost while a request was out (``maintain`` could not forget it then): its new
        # owner has its URLs. A host leased again since keeps what it holds.
        if host in self._held:
            return
        for gone in self.frontier.forget(host):
            self.validators.pop(gone.url_id, None)

    def page_done(
        self, item: QueuedURL, mono: float, elapsed: float, *, failed: bool, state: NetState
    ) -> None:
        """A page request ended at ``mono`` with ``state``: the host's politeness clock
        starts."""
        quick = self._refused_seed(item.host, state)
        self.frontier.done(item.host, mono, elapsed, failed=failed, quick=quick)

    def _refused_seed(self, host: str, state: NetState) -> bool:
        """Is this a given seed's host that has never answered, refusing a connection?"""
        if host not in self._unanswered:
            return False
        if state is NetState.cErr:
            return True
        self._unanswered.discard(host)  # it answered (or failed otherwise): the usual pace
        return False

    def robots_done(
        self,
        item: RobotsItem,
        status: int | None,
        body: bytes,
        first: NetState,
        error: str | None,
        ip: str | None,
        *,
        mono: float,
        wall: float,
        elapsed: float,
    ) -> RobotsDone:
        """An origin's robots.txt answered (RFC 9309 §2.3.1) with ``status`` (``None``:
        unreachable) after redirects; ``first`` is the first request's network state."""
        host, key = item.host, self._key(item.origin)
        if first in (NetState.noIP, NetState.filtered):
            # No address, or one the address policy refuses: a verdict that never changes,
            # so no retry and no back-off — the host is done, every URL with this state.
            self.frontier.done(host, mono, elapsed)
            return RobotsDone(HostInfo(host, ip, first.value, wall), Block(host, first, error))
        outcome = classify_response(status)
        if outcome is not RobotsOutcome.UNREACHABLE:
            self._unanswered.discard(host)
        if outcome is RobotsOutcome.UNREACHABLE:
            stale = self.robots.entry(key)
            if stale is None or stale.outcome is RobotsOutcome.UNREACHABLE:
                # §2.3.1.4: disallow all, retry later: the host backs off, and is given
                # up (its URLs recorded as ``robots``) after too many tries in a row.
                quick = self._refused_seed(host, first)
                self.frontier.done(host, mono, elapsed, failed=True, quick=quick)
                block = None
                if self.frontier.state(host) is HostState.BLOCKED:
                    block = Block(host, NetState.robots, error)
                return RobotsDone(HostInfo(host, ip, "unreachable", wall), block)
            # §2.4: a cached copy may be used while the file is unreachable.
            rules = self.robots.put(key, status, body, wall)
        else:
            rules = self.robots.put(key, status, body, wall)
            self._robots_rows.append(RobotsRow(item.origin, status, body, wall))
        delay = rules.crawl_delay(self.agent)
        self.frontier.done(host, mono, elapsed, crawl_delay=delay)
        return RobotsDone(
            HostInfo(
                name=host,
                ip=ip,
                robots_state=outcome.value,
                robots_fetched_at=wall,
                crawl_delay=delay,
                sitemaps=tuple(rules.sitemaps),
            )
        )

    def _load_robots(self, origins: set[str]) -> None:
        """Rules stored by an earlier run or another worker, while still fresh (§2.4)."""
        if not origins:
            return
        for row in self.store.robots(origins).values():
            if classify_response(row.status) is not RobotsOutcome.UNREACHABLE:
                self.robots.put(self._key(row.origin), row.status, row.body, row.fetched_at)

    def _key(self, origin: str) -> tuple[str, str, int]:
        key = self._keys.get(origin)
        if key is None:
            if len(self._keys) > 100_000:
                self._keys.clear()
            key = self._keys[origin] = robots_key(origin)
        return key

    def robots_rows(self) -> list[RobotsRow]:
        """The robots.txt answers fetched since the last call (stored at each commit)."""
        rows, self._robots_rows = self._robots_rows, []
        return rows

    # -- blocking ----------------------------------------------------------------------------

    def block(self, block: Block) -> list[int]:
        """Stop a host; the url ids of every URL still queued for it, here or in the DB.

        The first block of a host is kept for the run: what is queued for it later ends
        with the same state (``leftovers``)."""
        host = block.host
        self._blocks.setdefault(host, block)
        self._sweep.discard(host)
        f = self.frontier
        ids = [item.url_id for item in f.block(host) + f.take_blocked(host)]
        ids += self._strays.pop(host, [])
        return ids + self._claim_all(host)

    def _claim_all(self, host: str) -> list[int]:
        """Every URL the DB holds queued for ``host`` (held here), claimed."""
        held = self._held.get(host)
        if held is None:
            return []
        ids: list[int] = []
        while True:
            claimed = self.store.claim_queued(5000, hosts=[host], per_host=5000)
            if not claimed:
                break
            ids += [u.id for u in claimed]
        held.queued = 0
        return ids

    def leftovers(self) -> list[tuple[Block, list[int]]]:
        """URLs of blocked hosts queued or claimed since their block, with the block each
        ends with (the state its drained URLs got): called before each commit."""
        if not self._sweep and not self._strays:
            return []
        out: list[tuple[Block, list[int]]] = []
        for host in (self._sweep | set(self._strays)) & self._blocks.keys():
            ids = self._strays.pop(host, []) + self._claim_all(host)
            ids += [item.url_id for item in self.frontier.take_blocked(host)]
            if ids:
                out.append((self._blocks[host], ids))
        self._sweep.clear()
        return out

    def blocked(self, host: str) -> bool:
        return host in self._blocks or self.frontier.state(host) is HostState.BLOCKED

    # -- looking -----------------------------------------------------------------------------

    def queued_here(self) -> int:
        """URLs this worker holds or knows queued for its hosts (for the progress line)."""
        return len(self.frontier) + sum(max(0, h.queued) for h in self._held.values())
