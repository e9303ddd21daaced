"""The values the sitemap and feed parsers hand out: entries, limits and the one outcome.

Every input ends in exactly one :class:`SourceState`, which the crawl records as the
sitemap's (or feed's) state, whatever the bytes were: a hostile file costs one fetch and one
row, never an exception or unbounded memory (CONVENTIONS §8).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "MAX_LOC_CHARS",
    "PROTOCOL_MAX_BYTES",
    "PROTOCOL_MAX_URLS",
    "ChangeFreq",
    "EntryKind",
    "FeedEntry",
    "RootKind",
    "SitemapEntry",
    "SourceLimits",
    "SourceOutcome",
    "SourceState",
]

# sitemaps.org protocol, "Sitemap file location" and "Using Sitemap index files": a file
# holds at most 50,000 URLs and is at most 50 MB (52,428,800 bytes) uncompressed; an index
# lists at most 50,000 sitemaps.
PROTOCOL_MAX_URLS = 50_000
PROTOCOL_MAX_BYTES = 50 * 1024 * 1024
# sitemaps.org, <loc>: "must be less than 2,048 characters".
MAX_LOC_CHARS = 2047


class EntryKind(enum.Enum):
    """What an entry points at: a page to crawl, or another sitemap (from an index)."""

    PAGE = "page"
    SITEMAP = "sitemap"


class ChangeFreq(enum.Enum):
    """sitemaps.org ``<changefreq>``: a hint, not a command."""

    ALWAYS = "always"
    HOURLY = "hourly"
    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"
    YEARLY = "yearly"
    NEVER = "never"


class RootKind(enum.Enum):
    """What the document turned out to be, from its root element (or first bytes)."""

    NONE = "none"  # nothing parsed yet, or no root at all
    URLSET = "urlset"  # sitemaps.org <urlset>
    SITEMAPINDEX = "sitemapindex"  # sitemaps.org <sitemapindex>
    RSS = "rss"  # RSS 2.0 <rss><channel><item>
    RDF = "rdf"  # RSS 1.0 <rdf:RDF><item>
    ATOM = "atom"  # RFC 4287 <feed><entry>
    TEXT = "text"  # sitemaps.org text file: one URL a line
    HTML = "html"  # an HTML page where a sitemap or feed was expected
    OTHER = "other"  # some other XML vocabulary


class SourceState(enum.Enum):
    """How a sitemap or feed ended: the one state the crawl records for it.

    Entries handed out before a limit or an error are kept (they were valid when read); the
    state says why reading stopped.
    """

    OK = "ok"
    EMPTY = "empty"  # no bytes, or no root element
    URL_LIMIT = "url-limit"  # more entries than the limit: the first ones were kept
    SIZE_LIMIT = "size-limit"  # more uncompressed bytes than the limit
    BOMB = "bomb"  # gzip that expands past the ratio limit
    BAD_GZIP = "bad-gzip"  # a corrupt or truncated gzip stream
    MALFORMED = "malformed"  # XML that is not well-formed
    DTD = "dtd"  # a DOCTYPE with declarations: refused unread (entity expansion, XXE)
    NOT_SOURCE = "not-source"  # HTML or another vocabulary, not a sitemap or feed


@dataclass(frozen=True, slots=True)
class SourceLimits:
    """Bounds on one file. The defaults are the sitemaps.org protocol's limits."""

    max_urls: int = PROTOCOL_MAX_URLS
    max_bytes: int = PROTOCOL_MAX_BYTES  # uncompressed
    #: decompressed / compressed bytes past which a gzip stream is a bomb, checked once
    #: ``ratio_floor`` bytes came out (sitemaps of URLs compress 10-30x; a bomb 1000x)
    max_ratio: float = 200.0
    ratio_floor: int = 1024 * 1024
    max_field_chars: int = 8192  # text of one element (a <loc>, a <title>) kept at most
    chunk: int = 64 * 1024  # decompressed bytes handed to the XML parser at a time

    def __post_init__(self) -> None:
        for name in ("max_urls", "max_bytes", "ratio_floor", "max_field_chars", "chunk"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, not {getattr(self, name)}")
        if not self.max_ratio >= 1:
            raise ValueError(f"max_ratio must be >= 1, not {self.max_ratio}")


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    """One ``<url>`` of a urlset (a page) or ``<sitemap>`` of an index (another sitemap).

    ``lastmod`` is seconds since the epoch, UTC (W3C Datetime; a date alone is its midnight
    UTC); feeds read as sitemaps give their entry's updated or published date.
    """

    url: str
    kind: EntryKind = EntryKind.PAGE
    lastmod: float | None = None
    changefreq: ChangeFreq | None = None
    priority: float | None = None  # 0.0-1.0; anything else is dropped


@dataclass(frozen=True, slots=True)
class FeedEntry:
    """One RSS ``<item>`` or Atom ``<entry>``: its link and its dates (seconds, UTC)."""

    url: str
    published: float | None = None  # RSS pubDate / dc:date, Atom published
    updated: float | None = None  # Atom updated
    title: str = ""

    @property
    def date(self) -> float | None:
        """The newest date the entry gives: evidence of when its page last changed."""
        dates = [d for d in (self.updated, self.published) if d is not None]
        return max(dates) if dates else None


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    """How one file ended (``close()``): its state, what it was, and what was counted."""

    state: SourceState
    root: RootKind
    entries: int  # entries handed out
    skipped: int  # entries dropped: no usable URL, a URL too long, not http(s)
    bytes_in: int  # bytes fed (compressed, when gzip)
    bytes_out: int  # uncompressed bytes parsed
    gzip: bool
    detail: str = ""  # one line for the log: the XML error and where, the limit hit

    @property
    def ok(self) -> bool:
        return self.state is SourceState.OK
