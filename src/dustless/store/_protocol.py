"""``CrawlStore``: the interface the engine, statistics and recrawls use.

Every write is batch-shaped (ARCHITECTURE "Many machines"): a store across the network
(PostgreSQL, later) costs one round trip per call, not per URL. Writes go into the store's
open transaction and become durable at ``commit()``; the engine commits at least every second
(issue 4 "Crash safety"), after ``WarcWriter.flush_durable()`` so that the DB never points at
a WARC record that is not on disk. Reads on the same store see its uncommitted writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from dustless.store._types import (
    Batch,
    ContentRef,
    FetchRecord,
    FetchRow,
    HostInfo,
    NewSeed,
    NewURL,
    SeedRow,
    SeedUpdate,
    StoredURL,
    URLLabel,
    URLState,
)

__all__ = ["CrawlStore"]


class CrawlStore(Protocol):
    """The crawl DB. ``SQLiteStore`` is the implementation for one machine."""

    # -- lifecycle -------------------------------------------------------------------------
    def commit(self) -> None:
        """Make every write so far durable (one transaction). Flush WARC writers first."""

    def close(self) -> None:
        """Commit and release the DB (after ``WarcWriter.close()`` if records were written)."""

    # -- batches (crawls table) ------------------------------------------------------------
    def start_batch(self, config: str, now: float, batch_time: float | None = None) -> Batch:
        """Open batch max+1 with the crawl settings (JSON); ``batch_time`` defaults to now."""

    def resume_batch(self) -> Batch | None:
        """The latest batch if it is still open (not ended), counting one more resume; else None."""

    def end_batch(self, number: int, now: float) -> None:
        """Mark a batch finished."""

    def batches(self) -> list[Batch]:
        """Every batch, oldest first."""

    # -- URLs --------------------------------------------------------------------------------
    def add_urls(self, batch: Sequence[NewURL]) -> list[bool]:
        """Insert URLs whose identity is new; ``result[i]`` is True when ``batch[i]`` was inserted.

        A repeated identity (already stored, or earlier in the same batch) is left alone and
        gets False: the UNIQUE index on ``identity`` is the authority for URL-seen.
        """

    def contains_identities(self, identities: Iterable[str]) -> set[str]:
        """The subset of ``identities`` already stored (the Bloom filter's "maybe" check)."""

    def iter_identities(self, chunk: int = 50_000) -> Iterator[list[str]]:
        """Every stored identity, in chunks (to rebuild the Bloom filter on resume)."""

    def claim_queued(
        self, limit: int, *, hosts: Sequence[str] | None = None, per_host: int | None = None
    ) -> list[StoredURL]:
        """Move up to ``limit`` queued URLs to ``in-flight`` and return them.

        Order: priority (high first), depth (breadth-first, 004 §2), discovery order.
        With ``hosts``, claim only from those hosts, at most ``per_host`` from each (default:
        ``limit`` in total): the engine asks ``queued_hosts`` which hosts have work and keeps
        only a window of URLs per host in memory, so a million queued URLs stay in the DB.
        """

    def queued(self, after_id: int = 0, limit: int = 1000) -> list[StoredURL]:
        """Queued URLs with ``id > after_id`` by id, without claiming them (keyset paging)."""

    def queued_hosts(self, limit: int = 10_000) -> dict[str, int]:
        """Hosts with queued URLs and how many each has (up to ``limit`` hosts)."""

    def requeue_in_flight(self) -> int:
        """Return every ``in-flight`` URL to ``queued`` (after a crash); how many were."""

    def set_url_state(self, ids: Sequence[int], state: URLState) -> None:
        """Set the state of many URLs (e.g. requeue a collection for a recrawl batch)."""

    def urls_by_id(self, ids: Iterable[int]) -> dict[int, StoredURL]:
        """URL rows by id."""

    def label_urls(self, labels: Sequence[URLLabel]) -> None:
        """Set page type and category of URLs, by identity (seed 002 pattern scripts)."""

    def url_counts(self) -> dict[URLState, int]:
        """How many URLs are in each state."""

    # -- fetches -----------------------------------------------------------------------------
    def record_fetches(self, batch: Sequence[FetchRecord]) -> list[int]:
        """Insert one row per fetch (never overwriting) and set each URL's state; fetch ids."""

    def content_seen(self, sha1s: Iterable[str]) -> dict[str, ContentRef]:
        """For each payload SHA-1 already stored, the first fetch that stored it (003)."""

    def last_fetches(self, url_ids: Iterable[int]) -> dict[int, FetchRow]:
        """The latest fetch of each URL (validators for conditional recrawls, issue 8)."""

    def iter_fetches(self, batch: int | None = None, chunk: int = 10_000) -> Iterator[FetchRow]:
        """Every fetch (of one batch, or all), by id, joined with its URL row."""

    def fetch_state_counts(self, batch: int | None = None) -> dict[str, int]:
        """Fetches per network state (004 Tables 1–2)."""

    def warc_ends(self) -> dict[str, int]:
        """Per WARC file, the end offset of the last record the DB points at."""

    # -- hosts and seeds ---------------------------------------------------------------------
    def update_hosts(self, batch: Sequence[HostInfo]) -> None:
        """Insert or replace host rows."""

    def hosts(self, names: Iterable[str] | None = None) -> dict[str, HostInfo]:
        """Host rows by name (all when ``names`` is None)."""

    def add_seeds(self, batch: Sequence[NewSeed]) -> list[tuple[int, bool]]:
        """Insert seeds by identity: ``(seed id, inserted)`` per item, existing id if known."""

    def update_seeds(self, batch: Sequence[SeedUpdate]) -> None:
        """Record what a finished party taught about its seed (None fields are left alone)."""

    def seeds(self) -> list[SeedRow]:
        """Every seed by id: the output URL list of 004 Fig. 1 (``seeds.out.txt``)."""

    def add_spellings(self, pairs: Sequence[tuple[str, str]], limit: int) -> None:
        """Keep other spellings ``(identity, url)`` met, at most ``limit`` per identity."""

    # -- analysis ----------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read-only SQL query over the documented schema (docs/storage.md)."""
