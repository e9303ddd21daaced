"""Sitemap ``lastmod`` as evidence of change, checked against what the content did (pure).

A sitemap's ``<lastmod>`` (or a feed entry's date) is the site's own word on when a page
last changed (sitemaps.org: "the date of last modification of the page"). Sites keep it
well, badly (a stale file that never moves) or not at all (every URL stamped with the build
date). Two uses, both on the dates the crawl kept per URL and batch (``url_dates``):

* :func:`lastmod_agreement` — for every two consecutive downloads of a page with a lastmod
  read in both batches, did lastmod *move* (another value), and did the content change
  (another SHA-1)? The four counts are a confusion table: ``changes`` reports how often
  lastmod agreed, its precision (moved → changed) and its recall (changed → moved).
* :func:`lastmod_moved` — a recrawl's evidence: the latest lastmod read differs from the
  one read with the page's last download (or, none read then, is later than that
  download), so the copy we hold is older than what the site says it has.

Comparing values, not a lastmod with our own clock, keeps both honest when the site's clock
or its date granularity (a day, often) differs from ours.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from dustless.analysis._changes import Visit

__all__ = ["LastmodAgreement", "lastmod_agreement", "lastmod_moved"]


@dataclass(frozen=True, slots=True)
class LastmodAgreement:
    """How lastmod and the content agreed over consecutive downloads of the same pages."""

    pairs: int  # consecutive downloads with a lastmod read in both batches
    pages: int  # pages with at least one such pair
    moved_changed: int  # lastmod moved and the content changed
    moved_unchanged: int  # lastmod moved, the content did not (a false alarm)
    still_changed: int  # the content changed, lastmod did not move (a change missed)
    still_unchanged: int

    @property
    def agreed(self) -> int:
        return self.moved_changed + self.still_unchanged

    @property
    def agreement(self) -> float | None:
        """Share of pairs where lastmod told the truth about a change."""
        return self.agreed / self.pairs if self.pairs else None

    @property
    def precision(self) -> float | None:
        """When lastmod moved, how often the content had changed."""
        moved = self.moved_changed + self.moved_unchanged
        return self.moved_changed / moved if moved else None

    @property
    def recall(self) -> float | None:
        """Of the changes seen, how many lastmod announced."""
        changed = self.moved_changed + self.still_changed
        return self.moved_changed / changed if changed else None


def lastmod_agreement(pages: Iterable[Sequence[Visit]]) -> LastmodAgreement | None:
    """The confusion table over every page's visits; ``None`` when no pair had lastmods."""
    counts = [0, 0, 0, 0]
    pairs = pages_seen = 0
    for visits in pages:
        ok = sorted((v for v in visits if v.success), key=lambda v: v.batch)
        seen = False
        for a, b in pairwise(ok):
            if a.lastmod is None or b.lastmod is None:
                continue
            moved = a.lastmod != b.lastmod
            changed = a.content_hash != b.content_hash
            counts[(0 if moved else 2) + (0 if changed else 1)] += 1
            pairs += 1
            seen = True
        pages_seen += seen
    if not pairs:
        return None
    return LastmodAgreement(pairs, pages_seen, *counts)


def lastmod_moved(visits: Sequence[Visit], latest: tuple[int, float] | None) -> bool:
    """Did lastmod move since the page's last download?

    ``latest`` is ``(batch, lastmod)`` of the latest lastmod read for the page. A reading
    older than the last download says nothing new; one at or after it counts when it
    differs from the lastmod read with that download, or (none read then) is later than it.
    """
    if latest is None:
        return False
    last = max((v for v in visits if v.success), key=lambda v: v.batch, default=None)
    if last is None:
        return False  # never downloaded: due anyway, as a new page
    batch, lastmod = latest
    if batch < last.batch:
        return False
    if last.lastmod is not None:
        return lastmod != last.lastmod
    return lastmod > last.time
