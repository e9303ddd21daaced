"""Sitemaps and feeds in a crawl: URL sources read as they stream in (``docs/sitemaps.md``).

A sitemap or a feed is a URL of the frontier like any other, of its own kind (``m``, ``n``:
``dustless.kinds``), so it is fetched once (URL-seen), in its host's queue, behind the same
politeness clock, robots.txt rules and network states as a page. What differs is the body:
it goes, chunk by chunk as it arrives (``fetch.BodySink``), through the streaming parser of
``dustless.sources``, and each chunk's entries go at once through the filter, the normalizer
and URL-seen (``Discovery.links``) into the admission batches (``Admission``). Memory holds
one chunk, the parser's open elements and at most one admission batch: neither the file's
size nor its number of URLs (the engine is one thread, so this runs between two reads of the
fetch, never inside another decision).

Where they come from:

* ``--sitemaps``: the ``Sitemap:`` lines of each origin's robots.txt as it is fetched, or its
  ``/sitemap.xml`` when robots.txt names none; the child sitemaps of an index, at most
  ``sitemap_depth`` levels below robots.txt (the URL's depth is its level) and at most
  ``max_sitemaps`` a host; a sitemap that redirects, its target (same level).
* ``--feeds``: the ``<link rel="alternate" type="application/rss+xml|atom+xml">`` of the
  pages crawled, one level below the page like a link.

Which entries count (sitemaps.org "Sitemap file location" and "Sitemaps & Cross Submits",
``sources.entry_allowed``): a sitemap lists URLs of its own origin at or below its own
directory, unless the robots.txt of the entry's origin lists the sitemap — or the root of
its index tree, whose listing vouches for the sitemaps it names. Feeds list links, which are
followed as links are.

What is recorded: one fetch row per source, with the network state of the transfer and, in
``source_state``, how reading ended (``SourceState``: ``ok``, ``bomb``, ``malformed`` …);
``links_internal``/``links_external`` count the entries handed to admission. Each entry's
``lastmod``/``changefreq`` (a feed entry's date) goes to ``url_dates`` for the batch, for
``recrawl`` and ``changes``. A source's body is not written to the WARC files: keeping it
would mean holding it whole, which is what streaming avoids.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dustless.crawl.admission import Admission
from dustless.crawl.discover import Candidate, Discovery, fetch_form, link_counts
from dustless.crawl.hosts import HostTable
from dustless.crawl.progress import RunCounters
from dustless.errors import InvalidURL
from dustless.fetch import FetchLimits, FetchResult
from dustless.frontier import QueuedURL
from dustless.kinds import LinkKind
from dustless.robots import Robots, RobotsOutcome, classify_response, robots_key
from dustless.rules import RuleSet
from dustless.sources import (
    Admit,
    ChangeFreq,
    CrossHost,
    EntryKind,
    FeedEntry,
    FeedParser,
    SitemapEntry,
    SitemapParser,
    SourceLimits,
    SourceOutcome,
    discover_feeds,
    entry_allowed,
)
from dustless.store import CrawlStore, FetchRecord, URLDate
from dustless.url import origin_of

__all__ = ["SiteSwitch", "SourceReader", "SourceSwitch", "Sources", "site_switch"]

_DATES_AT = 5_000  # dates waiting for their URL rows: past this, admit and write them
_MAX_CHAIN = 8  # parents walked up to find the root of a sitemap's index tree
# A page that announces a feed names its media type: a cheap test before parsing the HTML
# again (HTML attribute values of this kind are ASCII case-insensitive).
_FEED_TYPE = re.compile(rb"application/(?:rss|atom)\+xml", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class SourceSwitch:
    """Which sources a host's crawl reads; the crawl's flags, or what site rules say."""

    sitemaps: bool
    feeds: bool


#: A URL's site-rule choice (``<site sitemaps="…" feeds="…">``), ``None`` where no rule says.
SiteSwitch = Callable[[str], SourceSwitch | None]


def site_switch(rules: RuleSet | None, default: SourceSwitch) -> SiteSwitch | None:
    """The site rules' choices over the crawl's flags (``None``: no site chooses)."""
    if rules is None or not rules.chooses_sources:
        return None

    def choose(url: str) -> SourceSwitch | None:
        sitemaps, feeds = rules.sources_for(url)
        if sitemaps is None and feeds is None:
            return None
        return SourceSwitch(
            default.sitemaps if sitemaps is None else sitemaps,
            default.feeds if feeds is None else feeds,
        )

    return choose


class SourceReader:
    """The sink of one sitemap or feed fetch (``fetch.BodySink``): parses the body as it
    arrives and hands each chunk's entries to :class:`Sources`.

    Never raises into the fetcher: an error of ours (or of the store) is kept in ``error``
    and stops the download; the engine raises it once the fetch has returned.
    """

    __slots__ = (
        "_roots",
        "_vouch",
        "directory",
        "error",
        "external",
        "internal",
        "item",
        "outcome",
        "parser",
        "read",
        "refused",
        "sources",
    )

    def __init__(self, sources: Sources, item: QueuedURL, limits: SourceLimits) -> None:
        self.sources = sources
        self.item = item
        self.parser: SitemapParser | FeedParser = (
            FeedParser(limits, base=item.url)
            if item.kind is LinkKind.FEED
            else SitemapParser(limits)
        )
        self.read = False  # the answer was 2xx: its body went to the parser
        self.internal = 0  # entries handed to admission, inside / outside the party
        self.external = 0
        self.error: BaseException | None = None
        self.outcome: SourceOutcome | None = None
        self.refused: dict[str, int] = {}  # entries not followed, by reason
        self._roots: frozenset[str] | None = None  # this sitemap and its index ancestors
        self._vouch: dict[str, bool] = {}  # origin -> its robots.txt lists one of _roots
        # What a sitemap may list without a robots.txt's word: its own directory (its URL
        # up to the last "/" of the path, the query left out).
        path_end = min(
            (i for i in (item.url.find("?"), item.url.find("#")) if i >= 0), default=len(item.url)
        )
        self.directory = item.url[: item.url.rfind("/", 0, path_end) + 1]

    def refuse(self, reason: str, n: int = 1) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + n
        self.sources.stats.reject_source(reason, n)

    def wants(self, status: int) -> bool:
        self.read = 200 <= status < 300
        return self.read

    def feed(self, chunk: bytes) -> bool:
        if self.error is not None:
            return True
        try:
            entries = self.parser.feed(chunk)
            if entries:
                self.sources.entries(self, entries)
        except BaseException as exc:  # kept for the engine: the fetcher must not classify it
            self.error = exc
            return True
        return self.parser.done

    def close(self) -> SourceOutcome | None:
        """The file's one outcome (``None`` when the answer was not read)."""
        if not self.read or self.outcome is not None:
            return self.outcome
        outcome = self.parser.close()
        tail = self.parser.tail
        if tail:
            self.sources.entries(self, tail)
        self.outcome = outcome
        return outcome


class Sources:
    """The engine's half of sitemaps and feeds; see the module docstring."""

    def __init__(
        self,
        store: CrawlStore,
        discovery: Discovery,
        admission: Admission,
        hosts: HostTable,
        stats: RunCounters,
        *,
        batch: int,
        default: SourceSwitch,
        site_switch: SiteSwitch | None = None,
        page_limits: FetchLimits,
        depth: int,
        max_sitemaps: int,
        limits: SourceLimits | None = None,
    ) -> None:
        self.store = store
        self.discovery = discovery
        self.admission = admission
        self.hosts = hosts
        self.stats = stats
        self.batch = batch
        self.default = default
        self.site_switch = site_switch
        self.parser_limits = limits or SourceLimits()
        self.max_depth = depth
        self.max_sitemaps = max_sitemaps
        # The page limits, but room for a sitemap the protocol allows (50 MB uncompressed),
        # a body announced bigger read up to the parser's limit (``keep_prefix``); a source's
        # body is parsed, never stored as sent.
        self.fetch_limits = FetchLimits(
            max_bytes=max(page_limits.max_bytes, self.parser_limits.max_bytes + (1 << 20)),
            stall_timeout=page_limits.stall_timeout,
            connect_timeout=page_limits.connect_timeout,
            total_timeout=page_limits.total_timeout,
            user_agent=page_limits.user_agent,
        )
        self._dates: list[URLDate] = []
        self._sitemaps: dict[str, int] = {}  # host -> sitemaps it holds (count_kind, then ours)
        self._listed: set[str] = set()  # origins whose sitemaps this run has queued

    # -- switches ----------------------------------------------------------------------------

    def switch(self, url: str) -> SourceSwitch:
        """The sources to read for the host of ``url``: a site rule's choice, else the flags."""
        if self.site_switch is not None:
            chosen = self.site_switch(url)
            if chosen is not None:
                return chosen
        return self.default

    @property
    def any(self) -> bool:
        """Can any host read any source (flags, or a site rule that may say so)?"""
        return self.default.sitemaps or self.default.feeds or self.site_switch is not None

    # -- where sources come from ---------------------------------------------------------------

    def robots_listed(self, page: QueuedURL, origin: str, lines: Sequence[str]) -> None:
        """An origin's robots.txt was fetched: its ``Sitemap:`` lines (or ``/sitemap.xml``
        when it names none) are queued as sitemaps of level 0, for the party of ``page``."""
        self._note_listed(origin)
        if not self.switch(origin + "/").sitemaps:
            return
        from dustless.url import resolve

        base = origin + "/robots.txt"
        urls = []
        for line in lines or ("/sitemap.xml",):
            try:
                urls.append(resolve(base, line.strip()))
            except InvalidURL:
                self.stats.reject_source("invalid")
        self._queue(page, urls, LinkKind.SITEMAP, 0, page.seed_id or None, page.host)

    def page_origin(self, item: QueuedURL) -> None:
        """A page was handled: if its origin's robots.txt came from the crawl DB (a resume, a
        recrawl within its 24 hours, another worker's fetch), queue the sitemaps it names,
        once per origin and run; the ones already stored are known to URL-seen."""
        origin = origin_of(item.url)
        if origin in self._listed:
            return
        self._note_listed(origin)
        if not self.switch(origin + "/").sitemaps:
            return
        try:
            cached = self.hosts.robots.entry(robots_key(origin))
        except InvalidURL:
            return
        if cached is not None and cached.outcome is not RobotsOutcome.UNREACHABLE:
            self.robots_listed(item, origin, cached.robots.sitemaps)

    def _note_listed(self, origin: str) -> None:
        if len(self._listed) > 100_000:
            self._listed.clear()  # bounded: at worst an origin's sitemaps are admitted again
        self._listed.add(origin)

    def page_feeds(self, item: QueuedURL, r: FetchResult) -> None:
        """A crawled HTML page: the feeds it announces are queued one level below it."""
        if not self.switch(item.url).feeds or not _FEED_TYPE.search(r.body):
            return
        feeds = discover_feeds(r.body, item.url)
        if feeds:
            self._queue(
                item, [f.url for f in feeds], LinkKind.FEED, item.depth + 1, item.seed_id or None
            )

    def _queue(
        self,
        parent: QueuedURL,
        urls: Sequence[str],
        kind: LinkKind,
        depth: int,
        seed_id: int | None,
        party_host: str | None = None,
    ) -> list[Candidate]:
        site = self.discovery.site_of_host(party_host or parent.host)
        cands = self.discovery.sources(urls, kind, depth=depth, seed_id=seed_id, party_site=site)
        if cands:
            self.admission.discover(cands, parent)
        return cands

    # -- reading -----------------------------------------------------------------------------

    def reader(self, item: QueuedURL) -> SourceReader:
        return SourceReader(self, item, self.parser_limits)

    def entries(self, reader: SourceReader, entries: Sequence[SitemapEntry | FeedEntry]) -> None:
        """Entries the parser handed out: children sitemaps queued within their bounds,
        pages admitted like links, dates kept for the batch."""
        from dustless.url import resolve

        stats = self.stats
        stats.source_entries += len(entries)
        pages: list[tuple[str, float | None, ChangeFreq | None]] = []
        children: list[str] = []
        for e in entries:
            try:
                url = resolve(None, e.url)  # the rfc3986 spelling, as links have it
            except InvalidURL:
                reader.refuse("invalid")
                continue
            if isinstance(e, FeedEntry):  # a feed lists links: followed as links are
                pages.append((url, e.date, None))
                continue
            verdict = self._allowed(reader, url)
            if verdict is not CrossHost.ALLOWED:
                reader.refuse(verdict.value)
            elif e.kind is EntryKind.SITEMAP:
                children.append(url)
            else:
                pages.append((url, e.lastmod, e.changefreq))
        if children:
            self._children(reader, children)
        if pages:
            kind = LinkKind.ENTRY if reader.item.kind is LinkKind.FEED else LinkKind.LISTED
            self._pages(reader, pages, kind)

    def _pages(
        self,
        reader: SourceReader,
        rows: Sequence[tuple[str, float | None, ChangeFreq | None]],
        kind: LinkKind,
    ) -> None:
        item = reader.item
        d = self.discovery
        found = [(url, kind) for url, _, _ in rows]
        dated = [row for row in rows if row[1] is not None or row[2] is not None]
        # A sitemap is the site's table of contents: what it lists is one step from the
        # site's root however deep the index tree (its level is the sitemap's own depth);
        # a feed's entries are one step below the feed, as links are below their page.
        cands = d.links(
            found,
            depth=item.depth if kind is LinkKind.ENTRY else 0,
            seed_id=item.seed_id or None,
            party_site=d.site_of_host(item.host),
        )
        internal, external = link_counts(cands)
        reader.internal += internal
        reader.external += external
        if cands:
            self.admission.discover(cands, item)
        if dated:
            self._keep_dates(item, dated, {c.url: c.identity for c in cands})

    def _keep_dates(
        self,
        item: QueuedURL,
        dated: list[tuple[str, float | None, ChangeFreq | None]],
        identities: dict[str, str],
    ) -> None:
        d = self.discovery
        out = self._dates
        for url, lastmod, freq in dated:
            form = fetch_form(url)
            identity = identities.get(form)
            if identity is None:  # a string URL-seen had settled already: normalize it here
                try:
                    identity = d.identity(form)
                except InvalidURL:
                    continue
            out.append(
                URLDate(
                    identity, self.batch, lastmod, None if freq is None else freq.value, item.url_id
                )
            )
        if len(out) >= _DATES_AT:
            self.write()

    def _children(self, reader: SourceReader, urls: list[str]) -> None:
        """Sitemaps an index lists: one level deeper, within the depth and count bounds."""
        item = reader.item
        level = item.depth + 1
        if level > self.max_depth:
            reader.refuse(Admit.TOO_DEEP.value, len(urls))
            return
        room = self.max_sitemaps - self._count(item.host)
        if room <= 0:
            reader.refuse(Admit.TOO_MANY.value, len(urls))
            return
        if len(urls) > room:
            reader.refuse(Admit.TOO_MANY.value, len(urls) - room)
            urls = urls[:room]
        cands = self._queue(item, urls, LinkKind.SITEMAP, level, item.seed_id or None)
        # Counted as submitted, known ones too (a loop): the bound errs on the safe side.
        for c in cands:
            self._sitemaps[c.host] = self._count(c.host) + 1

    def _count(self, host: str) -> int:
        n = self._sitemaps.get(host)
        if n is None:
            n = self._sitemaps[host] = self.store.count_kind(host, LinkKind.SITEMAP)
        return n

    # -- cross-host rules (sitemaps.org) ---------------------------------------------------------

    def _allowed(self, reader: SourceReader, url: str) -> CrossHost:
        # Both URLs are in their rfc3986 form (lowercase scheme and host, no default port):
        # an entry under the sitemap's directory starts with it, which settles the common
        # case without parsing either URL.
        sitemap = reader.item.url
        if url.startswith(reader.directory):
            return CrossHost.ALLOWED
        origin = origin_of(url)
        if reader._vouch.get(origin) and url.startswith(origin + "/"):
            return CrossHost.ALLOWED
        verdict = entry_allowed(url, sitemap)
        if verdict is CrossHost.ALLOWED or verdict is CrossHost.NOT_HTTP:
            return verdict
        vouches = reader._vouch.get(origin)
        if vouches is None:
            if len(reader._vouch) > 1000:
                reader._vouch.clear()
            vouches = reader._vouch[origin] = self._vouches(reader, origin)
        return entry_allowed(url, sitemap, (origin,)) if vouches else verdict

    def _vouches(self, reader: SourceReader, origin: str) -> bool:
        """Does the robots.txt of ``origin`` list this sitemap, or the root of its tree?"""
        if reader._roots is None:
            reader._roots = self._roots(reader.item)
        robots = self._robots(origin)
        if robots is None:
            return False
        from dustless.url import normalize

        for line in robots.sitemaps:
            try:
                if normalize(line.strip(), "rfc3986") in reader._roots:
                    return True
            except InvalidURL:
                continue
        return False

    def _roots(self, item: QueuedURL) -> frozenset[str]:
        """This sitemap's URL and its ancestors' (the indexes that listed it), from the DB."""
        roots = {item.url}
        rows = self.store.urls_by_id([item.url_id])
        row = rows.get(item.url_id)
        for _ in range(_MAX_CHAIN):
            if row is None or row.parent_id is None:
                break
            parent = self.store.urls_by_id([row.parent_id]).get(row.parent_id)
            if parent is None or parent.kind is not LinkKind.SITEMAP:
                break
            roots.add(parent.url)
            row = parent
        return frozenset(roots)

    def _robots(self, origin: str) -> Robots | None:
        try:
            key = robots_key(origin)
        except InvalidURL:
            return None
        cached = self.hosts.robots.entry(key)
        if cached is not None:
            return cached.robots
        row = self.store.robots([origin]).get(origin)
        if row is None or classify_response(row.status) is not RobotsOutcome.PARSED:
            return None
        return Robots.parse(row.body)

    # -- recording ---------------------------------------------------------------------------

    def finished(
        self,
        item: QueuedURL,
        r: FetchResult,
        reader: SourceReader,
        *,
        started: float,
        batch: int,
    ) -> FetchRecord:
        """The fetch row of a source; a redirect's target is queued as the same kind."""
        outcome = reader.close()
        stats = self.stats
        if outcome is not None:
            stats.count_source(item.kind, outcome.state.value)
        elif r.location and r.status is not None and 300 <= r.status < 400:
            # The same source under another URL, at the same level (a redirect is no index).
            self._queue(item, [r.location], item.kind, item.depth, item.seed_id or None)
        notes = [r.error] if r.error else []
        if outcome is not None and not outcome.ok and outcome.detail:
            notes.append(outcome.detail)
        if reader.refused:  # entries the rules or the bounds refused, said on the row
            notes.append(
                "not followed: "
                + ", ".join(f"{reason} {n}" for reason, n in sorted(reader.refused.items()))
            )
        error = "; ".join(notes)
        return FetchRecord(
            url_id=item.url_id,
            fetched_at=started,
            state=r.state,
            status=r.status,
            mime=r.mime,
            size_raw=outcome.bytes_in if outcome is not None else len(r.body),
            size_stored=0,
            elapsed=r.elapsed,
            links_internal=reader.internal,
            links_external=reader.external,
            location=r.location,
            etag=r.header("etag"),
            last_modified=r.header("last-modified"),
            error=error[:500] if error else None,
            batch=batch,
            source_state=None if outcome is None else outcome.state.value,
        )

    def write(self) -> None:
        """Admit what is pending, then store the dates of the URLs now in the DB."""
        if not self._dates:
            return
        self.admission.flush()
        dates, self._dates = self._dates, []
        self.store.record_dates(dates)
