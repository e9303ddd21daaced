"""How a URL came to be known: seed 004 Table 13's link kinds, and the crawler's own.

A top-level module because every layer speaks of them: the extractor finds the first three,
the engine adds the others, the store keeps the letter in ``urls.kind``, statistics count them.

Sitemaps and feeds (``docs/sitemaps.md``) add four. Two are the source documents themselves,
which the engine reads with a streaming parser instead of extracting links: ``m`` (a
sitemap: a urlset or an index) and ``n`` (a news feed: RSS or Atom; ``f`` is the frame).
Two are the pages they name: ``l`` (listed in a sitemap) and ``e`` (an entry of a feed).
``s`` would have been the natural letter for "found in a sitemap", but every stored crawl
already uses it for seeds, so a page from a sitemap would read as a seed in old queries.
"""

from __future__ import annotations

import enum

__all__ = ["DOCUMENT_KINDS", "SOURCE_KINDS", "LinkKind"]


class LinkKind(enum.Enum):
    """Where a URL was found; the values are the letters stored in the crawl DB."""

    FRAME = "f"  # 004 Table 13: in a <frame>
    ANCHOR = "a"  # 004 Table 13: in an <a href>
    OTHER = "h"  # 004 Table 13: anywhere else in a document (iframe, area, script, refresh …)
    SEED = "s"  # a seed: given, or an outside link that starts a new party (004 §2)
    REDIRECT = "r"  # the target of a redirect (the same document under another URL)
    SITEMAP = "m"  # a sitemap file (urlset or index): from robots.txt, /sitemap.xml, an index
    FEED = "n"  # an RSS or Atom feed a page announces (<link rel="alternate">)
    LISTED = "l"  # a page a sitemap lists (its <url><loc>)
    ENTRY = "e"  # a page a feed entry links to (RSS <item><link>, Atom <entry><link>)


# The kinds a document can hold, in 004 Table 13's order of its "연결 종류" code (h, a, f).
DOCUMENT_KINDS: tuple[LinkKind, ...] = (LinkKind.OTHER, LinkKind.ANCHOR, LinkKind.FRAME)

# The kinds whose URLs are read as URL sources (sitemaps and feeds), not as documents.
SOURCE_KINDS: frozenset[LinkKind] = frozenset({LinkKind.SITEMAP, LinkKind.FEED})
