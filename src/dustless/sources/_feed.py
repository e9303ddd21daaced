"""``FeedParser``: RSS 2.0 (and 1.0) and Atom (RFC 4287) feeds: entries with their dates.

The same streaming reader as sitemaps (same limits, same refusal of DTDs), accepting only
feed roots: a sitemap, an HTML page or any other XML ends as ``NOT_SOURCE``. Relative
links (Atom allows them) are resolved against ``base``, the feed's own URL.
"""

from __future__ import annotations

from dustless.sources._stream import Record, StreamReader, usable_url
from dustless.sources._types import FeedEntry, RootKind, SourceLimits

__all__ = ["FeedParser"]


class FeedParser(StreamReader[FeedEntry]):
    """Streaming feed reader: ``feed(chunk) -> list[FeedEntry]``, ``close() -> SourceOutcome``."""

    _ACCEPT = frozenset({RootKind.RSS, RootKind.RDF, RootKind.ATOM})

    def __init__(self, limits: SourceLimits | None = None, *, base: str | None = None) -> None:
        super().__init__(limits)
        self.base = base

    def _entry(self, rec: Record) -> FeedEntry | None:
        raw = rec.url or rec.guid
        url = usable_url(raw)
        if url is None and raw and self.base:
            from dustless.errors import InvalidURL
            from dustless.url import resolve

            try:
                url = usable_url(resolve(self.base, raw.strip()))
            except InvalidURL:
                url = None
        if url is None:
            return None
        return FeedEntry(url, rec.published, rec.updated, rec.title)
