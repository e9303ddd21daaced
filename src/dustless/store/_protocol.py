"""``CrawlStore``: the interface the engine, statistics and recrawls use.

Every write is batch-shaped (ARCHITECTURE "Many machines"): a store across the network
(PostgreSQL) costs one round trip per call, not per URL. Writes are durable at the latest at
``commit()``; the engine commits at least every second, after ``WarcWriter.flush_durable()``,
so that the DB never points at a WARC record that is not on disk. Reads on the same store see
its own writes.

Nothing here assumes one process owns the crawl: a store is opened *as a worker* (``worker``),
hosts are leased to one worker at a time (``lease_hosts``; politeness holds across workers),
URLs are claimed only from leased hosts, admission and its limits are decided in the DB
(``admit``), and the crawl is over when no host anywhere has queued or leased work
(``work_left``). ``SQLiteStore`` (one machine) implements it in one file; a PostgreSQL store
implements the same contract for many machines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Protocol

from dustless.kinds import LinkKind
from dustless.store._learn_types import LearnedRuleRow, MergeRow
from dustless.store._types import (
    AdmitResult,
    AdmitURL,
    Batch,
    ContentRef,
    FetchRecord,
    FetchRow,
    HostInfo,
    HostLease,
    Limits,
    NewSeed,
    NewURL,
    RobotsRow,
    SeedRow,
    SeedUpdate,
    StoredURL,
    URLDate,
    URLLabel,
    URLState,
    WorkerRow,
    WorkLeft,
)

__all__ = [
    "CrawlStore",
    "FetchStore",
    "LearnStore",
    "SiteStore",
    "SpellingStore",
    "StoreSession",
    "URLStore",
    "WorkStore",
]


class StoreSession(Protocol):
    """The store itself: who writes, when writes are durable, and a DB across the network
    that may be away for a while.

    Code: ``_sqlite.py`` and ``_pg.py``."""

    @property
    def worker(self) -> str:
        """The name this store writes as: leases, claims and fetch rows are this worker's."""
        ...

    @property
    def shared(self) -> bool:
        """True when other workers may write the same crawl at the same time: a local
        cache (a Bloom filter of payloads, say) then proves nothing about the others'."""
        ...

    def commit(self) -> None:
        """Make every write so far durable (one transaction). Flush WARC writers first."""

    def close(self) -> None:
        """Commit and release the DB (after ``WarcWriter.close()`` if records were written)."""

    def watch_outages(self, hook: Callable[[float | None], None]) -> None:
        """``hook(seconds)`` while a DB across the network is away and the store waits for
        it (a restart, a failover); ``hook(None)`` once it is back. SQLite: never called.
        The hook may be called from another thread than the loop's (the engine commits in
        a thread)."""

    def maybe_away(self) -> bool:
        """Without waiting: has the DB across the network closed this store's idle
        connection (a restart, a failover)? Then the next call would wait for it, and the
        engine makes ``reach`` wait in its commit thread instead. SQLite: never."""

    def reach(self) -> None:
        """Wait (up to the store's outage limit) until the DB answers, sending what is
        pending. SQLite: nothing to do."""

    def impatient(self) -> contextlib.AbstractContextManager[None]:
        """In the ``with`` block, this thread's calls never wait for a DB across the network
        that went away: they raise ``DatabaseAway`` at once, nothing applied (the engine's
        loop, which goes on fetching while its commit thread waits: ``reach``). SQLite:
        nothing changes."""


class WorkStore(Protocol):
    """Batches, URL-seen, admission, claims and host leases: the crawl's work, shared by
    every worker (ARCHITECTURE "Many machines"), and the workers that share it.

    Code: ``_sqlite_work.py`` and ``_pg_work.py``."""

    def start_batch(self, config: str, now: float, batch_time: float | None = None) -> Batch:
        """Open batch max+1 with the crawl settings (JSON); ``batch_time`` defaults to now."""

    def resume_batch(self) -> Batch | None:
        """The latest batch if it is still open (not ended), counting one more resume; else None."""

    def end_batch(self, number: int, now: float) -> None:
        """Mark a batch finished (idempotent: the first worker to finish it sets the time)."""

    def batches(self) -> list[Batch]:
        """Every batch, oldest first."""

    def add_urls(self, batch: Sequence[NewURL]) -> list[bool]:
        """Insert URLs whose identity is new; ``result[i]`` is True when ``batch[i]`` was inserted.

        A repeated identity (already stored, or earlier in the same batch) is left alone and
        gets False: the UNIQUE index on ``identity`` is the authority for URL-seen.
        """

    def admit(self, urls: Sequence[AdmitURL], limits: Limits, batch: int) -> AdmitResult:
        """Admit found URLs in one transaction, in order (seed 004 §2):

        every outside link becomes a seed row if its identity is new (a candidate seed);
        a URL whose identity is stored is ``KNOWN``; an outside link to a site without a
        party starts one (depth 0, kind seed) unless ``max_sites`` parties exist; one to a
        site with a party joins it; then ``max_depth``, ``max_pages`` and
        ``max_pages_per_site`` decide, and the URL row is queued. Given seeds start or join
        their party whatever the limits. The limits hold across workers.
        """

    def contains_identities(self, identities: Iterable[str]) -> set[str]:
        """The subset of ``identities`` already stored (URL-seen asked of the unique index)."""

    def iter_identities(self, chunk: int = 50_000) -> Iterator[list[str]]:
        """Every stored identity, in chunks, in insertion order (a full scan of URL-seen)."""

    def lease_hosts(self, limit: int, *, now: float, ttl: float) -> list[HostLease]:
        """Lease up to ``limit`` hosts that have work and no live lease of another worker
        (``now`` and the lease times are wall-clock seconds); this worker's own leases are
        renewed. A host taken over from a worker whose lease expired gets that worker's
        in-flight URLs back in its queue: what the other had in flight is fetched again, once.
        """

    def renew_leases(self, hosts: Sequence[str], *, now: float, ttl: float) -> set[str]:
        """Extend this worker's leases on ``hosts``; returns the hosts still leased to it."""

    def release_hosts(self, ready_at: Mapping[str, float]) -> None:
        """Give up this worker's leases; ``ready_at[host]`` (wall clock) is when the host may
        next be asked, carried to its next owner (politeness across workers)."""

    def work_left(self, now: float, alive_within: float | None = None) -> WorkLeft:
        """What remains to be crawled anywhere (this worker's own leases not counted); with
        ``alive_within``, also how many workers were seen that recently (the fair share of
        hosts is the hosts with work over the workers alive). On a shared store it is also this
        worker's heartbeat (one process alone on SQLite needs none)."""

    def expect_work_left(self, now: float, alive_within: float | None = None) -> None:
        """``work_left`` will be asked soon, once the writes made until then are in: a store
        across the network reads it at the end of its next exchange, in a transaction of its
        own after that exchange's, with those writes (so the commit before a lease round
        costs no round trip of its own), and the next ``work_left`` answers that reading —
        or asks, if no exchange came since. A store without a network: nothing."""

    def claim_queued(
        self, limit: int, *, hosts: Sequence[str] | None = None, per_host: int | None = None
    ) -> list[StoredURL]:
        """Move up to ``limit`` queued URLs to ``in-flight`` and return them.

        Order: priority (high first), depth (breadth-first, 004 §2), discovery order.
        With ``hosts`` (hosts this worker leases), claim only from those, at most
        ``per_host`` from each (default: ``limit`` in total): the engine keeps only a window
        of URLs per host in memory, so a million queued URLs stay in the DB.
        """

    def queued(self, after_id: int = 0, limit: int = 1000) -> list[StoredURL]:
        """Queued URLs with ``id > after_id`` by id, without claiming them (keyset paging)."""

    def requeue_in_flight(self) -> int:
        """Return this worker's ``in-flight`` URLs (those of the hosts it leases, and of
        hosts nobody leases) to ``queued``: after a crash or a stop; how many were."""

    def set_url_state(self, ids: Sequence[int], state: URLState) -> None:
        """Set the state of many URLs (e.g. requeue a collection for a recrawl batch)."""

    def register_worker(self, directory: str, now: float) -> None:
        """Say that this worker takes part (and where its WARC files are); also a heartbeat."""

    def workers(self) -> list[WorkerRow]:
        """Every worker that took part in the crawl."""


class URLStore(Protocol):
    """What the crawl knows about its URL rows: states, kinds, labels, sitemap dates.

    Code: ``_sqlite_urls.py`` and ``_pg_urls.py``."""

    def urls_by_id(self, ids: Iterable[int]) -> dict[int, StoredURL]:
        """URL rows by id."""

    def url_counts(self) -> dict[URLState, int]:
        """How many URLs are in each state."""

    def collection_ids(self, kinds: Sequence[LinkKind] | None = None) -> list[int]:
        """The URLs of the collection a recrawl queues again (done or queued; never the
        probes of ``evaluate --fetch``), only those of ``kinds`` when given; by id."""

    def count_kind(self, host: str, kind: LinkKind) -> int:
        """How many URLs of ``kind`` the crawl holds for ``host``: a host's sitemaps, counted
        against their bound (``urls_sources`` indexes the source kinds)."""

    def record_dates(self, dates: Sequence[URLDate]) -> int:
        """Store what sitemaps and feeds said about URLs (``url_dates``), by identity: one
        row per URL and batch, a later reading in the same batch replacing an earlier one;
        identities the crawl does not hold (refused by a limit, say) are skipped. Returns
        how many rows were written."""

    def label_urls(self, labels: Sequence[URLLabel]) -> None:
        """Set page type and category of URLs, by identity (seed 002 pattern scripts)."""

    def category_names(self, url_ids: Iterable[int]) -> dict[int, str]:
        """The category names stored for URLs (seed 002 Fig. 13), where one is known."""


class FetchStore(Protocol):
    """Every fetch kept (seed 004 §2's document table), the payloads it stored (003) and where
    the WARC files' committed parts end.

    Code: ``_sqlite_fetches.py`` and ``_pg_fetches.py``."""

    def record_fetches(self, batch: Sequence[FetchRecord]) -> list[int]:
        """Insert one row per fetch (never overwriting) and set each URL's state; fetch ids."""

    def content_seen(self, sha1s: Iterable[str]) -> dict[str, ContentRef]:
        """For each payload SHA-1 already stored, the first fetch that stored it (003)."""

    def iter_content_sha1s(self, chunk: int = 50_000) -> Iterator[list[str]]:
        """Every payload SHA-1 stored, in chunks (to refill a content-seen filter)."""

    def last_fetches(self, url_ids: Iterable[int]) -> dict[int, FetchRow]:
        """The latest fetch of each URL (validators for conditional recrawls)."""

    def iter_fetches(self, batch: int | None = None, chunk: int = 10_000) -> Iterator[FetchRow]:
        """Every fetch (of one batch, or all), by id, joined with its URL row."""

    def fetch_state_counts(self, batch: int | None = None) -> dict[str, int]:
        """Fetches per network state (004 Tables 1–2)."""

    def warc_ends(self) -> dict[str, int]:
        """Per WARC file, the end offset of the last record the DB points at."""

    def warc_committed(self, ends: Mapping[str, int]) -> None:
        """Record, with the fetch rows of this commit, where each WARC file's committed part
        ends: a resume cuts whatever a crash left after it."""

    def warc_committed_ends(self) -> dict[str, int]:
        """Per WARC file (of this worker), where its committed part ends."""


class SiteStore(Protocol):
    """Hosts, their robots.txt, seeds and parties (seed 004 §2's seed table).

    Code: ``_sqlite_sites.py`` and ``_pg_sites.py``."""

    def update_hosts(self, batch: Sequence[HostInfo]) -> None:
        """Insert or replace host rows."""

    def hosts(self, names: Iterable[str] | None = None) -> dict[str, HostInfo]:
        """Host rows by name (all when ``names`` is None)."""

    def robots(self, origins: Iterable[str]) -> dict[str, RobotsRow]:
        """The stored robots.txt of each origin that has one."""

    def put_robots(self, rows: Sequence[RobotsRow]) -> None:
        """Store (replace) origins' robots.txt."""

    def add_seeds(self, batch: Sequence[NewSeed]) -> list[tuple[int, bool]]:
        """Insert seeds by identity: ``(seed id, inserted)`` per item, existing id if known."""

    def update_seeds(self, batch: Sequence[SeedUpdate]) -> None:
        """Record what a finished party taught about its seed (None fields are left alone)."""

    def seeds(self) -> list[SeedRow]:
        """Every seed by id: the output URL list of 004 Fig. 1 (``seeds.out.txt``)."""

    def has_seeds(self) -> bool:
        """Does the crawl hold a seed row (a fresh crawl's seeds were admitted)?"""

    def rebuild_sites(self, site_of_host: Callable[[str], str]) -> int:
        """Fill the parties' table of a crawl stored before it existed (from its seeds and
        URLs, sites named by ``site_of_host``) when it is empty; how many sites were made."""


class SpellingStore(Protocol):
    """Fallback spellings (crawl/spellings.py): other spellings of an identity, kept to try
    when the one fetched gave no document.

    Code: ``_sqlite_spellings.py`` and ``_pg_spellings.py``."""

    def add_spellings(self, pairs: Sequence[tuple[str, str]], limit: int) -> None:
        """Keep other spellings ``(identity, url)`` met, at most ``limit`` per identity."""

    def spelling_state(self, base: str, names: Sequence[str]) -> tuple[list[str], list[str]]:
        """For an identity ``base``: the URLs of the rows named ``names`` (its spellings
        fetched or queued, by id) and the spellings kept for it (in the order met)."""

    def spelling_rows(self, names: Sequence[str]) -> list[tuple[StoredURL, str | None, int | None]]:
        """The rows named ``names`` by id, each with its last fetch's state and status."""

    def spelling_bases(self) -> list[str]:
        """Every identity with kept spellings."""


class LearnStore(Protocol):
    """Learning while crawling (crawl/learn.py, docs/learning.md): rules learned per host,
    what they merged, and URL rows re-keyed by a new rule.

    Code: ``_sqlite_learn.py`` and ``_pg_learn.py``."""

    def add_learned_rules(self, rules: Sequence[LearnedRuleRow]) -> list[int]:
        """Store rules learned for their hosts; the id of each (the existing row's id when a
        rule with the same host and spec is stored already, say by another worker)."""

    def retract_learned_rules(self, retractions: Sequence[tuple[int, float, str]]) -> None:
        """``(rule id, when, why)``: mark rules retracted (the first retraction stands)."""

    def learned_rules(self) -> list[LearnedRuleRow]:
        """Every rule learned in the crawl, retracted ones too, by id."""

    def add_merges(self, merges: Sequence[MergeRow]) -> None:
        """Keep what rules merged (one row per rule and base identity; repeats ignored)."""

    def merges_of(self, rule_ids: Iterable[int]) -> list[MergeRow]:
        """What the rules ``rule_ids`` merged, in the order it was kept."""

    def drop_merges(self, rule_ids: Iterable[int]) -> None:
        """Forget the merges of retracted rules (once their URLs are admitted again)."""

    def merge_counts(self) -> dict[int, tuple[int, int]]:
        """Per rule id: ``(merges kept, merges fetched to check it)`` — the first are the
        duplicates the rule avoided."""

    def queued_of_host(self, host: str, limit: int) -> list[StoredURL]:
        """Up to ``limit`` queued URLs of ``host`` in claim order, without claiming them."""

    def rekey_urls(self, changes: Sequence[tuple[int, str, str]]) -> list[int]:
        """``(url id, old identity, new identity)``: give URL rows the identity a new rule
        gives them (their kept spellings move along). A new identity that is already stored
        is not taken: the ids of those rows are returned (a collision), the rest are moved."""


class CrawlStore(
    StoreSession, WorkStore, URLStore, FetchStore, SiteStore, SpellingStore, LearnStore, Protocol
):
    """The crawl DB: every concern's protocol. ``SQLiteStore`` is the implementation for one
    machine, ``PostgresCrawlStore`` for many; a caller that needs one concern may ask for
    its protocol alone."""
