"""URL-seen: an ``rbloom`` Bloom filter in front of the store's UNIQUE identity index.

Seed 004 §2 keeps one Bloom filter per party and accepts that a false positive drops a URL
("잘못된 긍정"); we keep the Bloom filter for speed only. A Bloom "no" is certain, so such
identities go straight to the insert; a "maybe" is checked in the store, in one batch, so a
false positive costs a lookup, never a URL (ARCHITECTURE "URL-seen"). The filter holds no
state of its own: ``rebuild`` refills it from the store on resume.

A Bloom filter cannot say "certainly seen", and most links on a page point to pages already
seen (navigation, back links), so every one of those would cost a DB lookup. A bounded set of
identities confirmed stored — a positive-only cache, exact because the store never deletes an
identity — answers most of them in memory; it is cleared when full, which bounds its memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rbloom import Bloom

from dustless.store._protocol import CrawlStore
from dustless.store._types import NewURL

__all__ = ["UrlSeen"]


class UrlSeen:
    """The URL-seen test of one crawl. ``capacity`` is the expected number of identities;
    beyond it the false-positive rate grows (more DB checks) but nothing is lost."""

    def __init__(
        self,
        store: CrawlStore,
        *,
        capacity: int = 10_000_000,
        error_rate: float = 0.001,
        recent_size: int = 200_000,
    ) -> None:
        self.store = store
        self.capacity = capacity
        self.error_rate = error_rate
        self.recent_size = recent_size
        self._bloom = Bloom(capacity, error_rate)
        self._recent: set[str] = set()  # identities known to be stored
        self.db_checks = 0  # identities looked up in the store ("maybe" answers)
        self.false_positives = 0  # of those, how many were not in the store after all

    def rebuild(self, chunk: int = 50_000) -> int:
        """Refill the filter from every identity in the store; how many were added."""
        self._bloom = Bloom(self.capacity, self.error_rate)
        self._recent.clear()
        n = 0
        for ids in self.store.iter_identities(chunk):
            self._bloom.update(ids)
            n += len(ids)
        return n

    def maybe_seen(self, identity: str) -> bool:
        """The Bloom answer alone: False is certain, True may be a false positive."""
        return identity in self._bloom

    def seen(self, identities: Sequence[str]) -> list[bool]:
        """Exact answers: ``result[i]`` is True when ``identities[i]`` is already stored."""
        recent, bloom = self._recent, self._bloom
        maybe = [i for i in identities if i not in recent and i in bloom]
        stored = self.store.contains_identities(maybe) if maybe else set()
        self.db_checks += len(maybe)
        self.false_positives += len(set(maybe) - stored)
        self._remember(stored)
        return [i in recent or i in stored for i in identities]

    def _remember(self, identities: Iterable[str]) -> None:
        if len(self._recent) >= self.recent_size:
            self._recent.clear()
        self._recent.update(identities)

    def add_urls(self, batch: Sequence[NewURL]) -> list[bool]:
        """Record the URLs whose identity is new; ``result[i]`` is True when ``batch[i]`` was.

        Identities the filter has never seen skip the lookup; "maybe" ones are checked in the
        store; then the store's own insert (UNIQUE index) decides, so even a race with another
        writer cannot duplicate or lose a URL.
        """
        known = self.seen([u.identity for u in batch])
        fresh = [u for u, k in zip(batch, known, strict=True) if not k]
        inserted = iter(self.store.add_urls(fresh) if fresh else [])
        self.add(u.identity for u in fresh)  # inserted now, or by someone else: stored
        return [False if k else next(inserted) for k in known]

    def add(self, identities: Iterable[str]) -> None:
        """Tell the filter about identities that are stored (in this store's transaction)."""
        ids = list(identities)
        self._bloom.update(ids)
        self._remember(ids)
