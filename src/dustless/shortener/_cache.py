"""The in-process cache of hot codes (seed 003 ch. 8, URL 리디렉션 상세 설계).

Reads outnumber writes ten to one (seed 003 개략적 추정: 11,600 reads/s against 1,160 writes/s),
and a few links get most clicks, so ``code → link`` pairs are kept in each worker. A link's
target never changes once created (seed 003: no update, no delete), but its owner may end it
or limit its visits, possibly through another instance: so an entry is trusted for
``REVALIDATE`` seconds after it was read, then read again — one indexed read per hot code
every few seconds, and an edit reaches every worker within that time. An expired link stays
cached and is answered 410 from its ``expires_at``. Unknown codes are not cached: a code may
be created by another worker a moment later.

Two choices keep cold traffic — a stream of codes each clicked once — from hurting:

* **Admission (segmented LRU).** A code enters a small *probation* segment; only a second hit
  while it is there moves it to the *protected* segment, which holds most of the capacity.
  One-off codes therefore only ever evict other one-off codes, never the hot ones.
* **Entries the garbage collector never walks.** An entry is a plain tuple of ints, strings,
  floats and None (the link's fields and its ``Location`` bytes): CPython stops tracking such
  a tuple at its first collection, so 100,000 cached links add nothing to the full
  collections, which walked every cached ``Link`` object before (a 10–25 ms pause every few
  seconds under the cold benchmark).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeAlias

from ._model import Link, Redirect

__all__ = ["REVALIDATE", "Entry", "LinkCache"]

# (id, code, long_url, redirect status, created_at, expires_at, is_alias, Location bytes,
#  owner, max_visits, the time it was read, valid_since, title)
Entry: TypeAlias = tuple[
    int,
    str,
    str,
    int,
    float,
    float | None,
    bool,
    bytes,
    int,
    int | None,
    float,
    float | None,
    str | None,
]
REVALIDATE = 5.0  # seconds an entry is served before the link is read again

_REDIRECTS = {int(r): r for r in Redirect}


def to_entry(link: Link, now: float = 0.0) -> Entry:
    return (
        link.id,
        link.code,
        link.long_url,
        int(link.redirect),
        link.created_at,
        link.expires_at,
        link.is_alias,
        link.long_url.encode("ascii"),
        link.owner,
        link.max_visits,
        now,
        link.valid_since,
        link.title,
    )


def to_link(entry: Entry) -> Link:
    link_id, code, long_url, redirect, created_at, expires_at, is_alias, _, owner, limit = entry[
        :10
    ]
    return Link(
        link_id,
        code,
        long_url,
        _REDIRECTS[redirect],
        created_at,
        expires_at,
        is_alias,
        owner,
        limit,
        valid_since=entry[11],
        title=entry[12],
    )


class LinkCache:
    """A segmented LRU of at most ``capacity`` links; ``probation`` is the new codes' share."""

    __slots__ = ("_hot", "_new", "capacity", "hits", "misses", "new_capacity")

    def __init__(self, capacity: int = 100_000, probation: float = 0.2) -> None:
        self.capacity = capacity
        self.new_capacity = min(capacity, max(1, int(capacity * probation)))
        self._hot: OrderedDict[str, Entry] = OrderedDict()  # protected: hit at least twice
        self._new: OrderedDict[str, Entry] = OrderedDict()  # probation: admitted, not yet hit
        self.hits = 0
        self.misses = 0

    def entry(self, code: str) -> Entry | None:
        """The cached entry of ``code`` (the redirect path's lookup), or None."""
        entry = self._hot.get(code)
        if entry is not None:
            self._hot.move_to_end(code)
            self.hits += 1
            return entry
        entry = self._new.pop(code, None)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        self._protect(code, entry)
        return entry

    def get(self, code: str) -> Link | None:
        entry = self.entry(code)
        return None if entry is None else to_link(entry)

    def put(self, link: Link, now: float = 0.0) -> Entry:
        """Admit ``link``, read at ``now`` (to probation unless already cached); its entry."""
        entry = to_entry(link, now)
        if self.capacity <= 0:
            return entry
        code = link.code
        if code in self._hot:
            self._hot[code] = entry
            self._hot.move_to_end(code)
            return entry
        new = self._new
        new[code] = entry
        new.move_to_end(code)
        if len(new) > self.new_capacity:
            new.popitem(last=False)
        return entry

    def _protect(self, code: str, entry: Entry) -> None:
        hot = self._hot
        hot[code] = entry
        if len(hot) > self.capacity - self.new_capacity:
            # The least recently used protected code gets one more chance in probation.
            demoted, old = hot.popitem(last=False)
            if self.new_capacity:
                new = self._new
                new[demoted] = old
                if len(new) > self.new_capacity:
                    new.popitem(last=False)

    def forget(self, code: str) -> None:
        self._hot.pop(code, None)
        self._new.pop(code, None)

    def __contains__(self, code: str) -> bool:
        return code in self._hot or code in self._new

    def __len__(self) -> int:
        return len(self._hot) + len(self._new)
