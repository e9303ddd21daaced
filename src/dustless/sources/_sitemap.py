"""``SitemapParser``: sitemaps.org urlsets and indexes, text sitemaps, and feeds used as
sitemaps (the protocol accepts RSS 2.0 and Atom 1.0 files as sitemaps), gzip or not.

    parser = SitemapParser()                 # the protocol's limits
    for chunk in body_chunks:
        for entry in parser.feed(chunk):     # SitemapEntry: url, kind, lastmod, …
            ...
        if parser.done:                      # a limit or an error: stop downloading
            break
    outcome = parser.close()                 # SourceOutcome: the one recorded state
"""

from __future__ import annotations

from dustless.sources._stream import Record, StreamReader, usable_url
from dustless.sources._types import EntryKind, RootKind, SitemapEntry

__all__ = ["SitemapParser"]


class SitemapParser(StreamReader[SitemapEntry]):
    """Streaming sitemap reader; see the module docstring and ``docs/sitemaps.md``."""

    _ACCEPT = frozenset(
        {RootKind.URLSET, RootKind.SITEMAPINDEX, RootKind.RSS, RootKind.RDF, RootKind.ATOM}
    )
    _TEXT_OK = True

    def _entry(self, rec: Record) -> SitemapEntry | None:
        url = usable_url(rec.url) or usable_url(rec.guid)
        if url is None:
            return None
        if rec.kind is EntryKind.SITEMAP:
            return SitemapEntry(url, EntryKind.SITEMAP, rec.lastmod)
        lastmod = rec.lastmod
        if lastmod is None:  # a feed read as a sitemap: its newest date
            dates = [d for d in (rec.updated, rec.published) if d is not None]
            lastmod = max(dates) if dates else None
        return SitemapEntry(url, EntryKind.PAGE, lastmod, rec.changefreq, rec.priority)
