"""URL sources other than links: sitemaps (sitemaps.org) and RSS/Atom feeds. Pure: bytes in.

``SitemapParser`` and ``FeedParser`` are fed a body in chunks and hand out entries as they
complete, with memory bounded by neither the file size nor the entry count; ``close()``
gives the file's one :class:`SourceOutcome`. ``entry_allowed`` applies the sitemaps.org
cross-host rules; ``SitemapBudget`` bounds index depth and count and detects loops;
``discover_feeds`` finds a page's feeds. ``docs/sitemaps.md`` is the guide.
"""

from dustless.sources._dates import parse_rfc822, parse_w3c
from dustless.sources._discover import FeedKind, FeedLink, discover_feeds
from dustless.sources._feed import FeedParser
from dustless.sources._rules import Admit, CrossHost, SitemapBudget, entry_allowed
from dustless.sources._sitemap import SitemapParser
from dustless.sources._types import (
    MAX_LOC_CHARS,
    PROTOCOL_MAX_BYTES,
    PROTOCOL_MAX_URLS,
    ChangeFreq,
    EntryKind,
    FeedEntry,
    RootKind,
    SitemapEntry,
    SourceLimits,
    SourceOutcome,
    SourceState,
)

__all__ = [
    "MAX_LOC_CHARS",
    "PROTOCOL_MAX_BYTES",
    "PROTOCOL_MAX_URLS",
    "Admit",
    "ChangeFreq",
    "CrossHost",
    "EntryKind",
    "FeedEntry",
    "FeedKind",
    "FeedLink",
    "FeedParser",
    "RootKind",
    "SitemapBudget",
    "SitemapEntry",
    "SitemapParser",
    "SourceLimits",
    "SourceOutcome",
    "SourceState",
    "discover_feeds",
    "entry_allowed",
    "parse_rfc822",
    "parse_w3c",
]
