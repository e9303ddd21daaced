"""Sites that publish sitemaps and feeds, well and badly (profile ``sitemaps``), pure.

``sitemaps.test`` is a well-behaved site: robots.txt names a sitemap index, which lists a
plain urlset of the linked pages and a gzip urlset of *orphan* pages that no link reaches
(only a crawler that reads sitemaps finds them); its home page announces an RSS and an Atom
feed (``<link rel="alternate">``). It also has a redirect to another page and a byte-identical
copy of a page, which the archive tests replay.

Its sitemap's ``<lastmod>`` follows the simulated day (``testweb --day``): a page's lastmod
is the day of its last change (``LASTMOD_EPOCH`` + days), so it moves exactly when the page
changes — except for two liars, as real sites have them: ``/page-4.html`` keeps the lastmod
of day 0 whatever happens (a stale sitemap), ``/page-5.html`` says "today" every day (a CMS
that stamps every URL with the build date). :func:`declared_lastmod` is the truth a test
compares ``changes`` with.

Both sites count the requests for each path and answer ``GET /__requests`` with the counts
as JSON (that path uncounted), so a test can check that each sitemap was fetched once.

``sitemaps-hostile.test`` serves what a sitemap reader must survive, each listed in its
robots.txt: an index that lists itself (and a two-index loop), an index of 10,000 child
sitemaps, a gzip bomb, a 200 MB sitemap, malformed XML, an entity-expansion attack
("billion laughs"), an external entity (XXE), and a "feed" that is an HTML page.
"""

from __future__ import annotations

import calendar
import collections
import dataclasses
import functools
import json
import time
import zlib
from collections.abc import Iterable

from dustless.testweb._core import Link, Outcome, Page, Site, WebConfig, origin

__all__ = [
    "HOSTILE_SITEMAPS",
    "HOSTILE_SITEMAP_HOST",
    "LASTMOD_EPOCH",
    "LIARS",
    "ORPHANS",
    "REQUESTS_PATH",
    "SITEMAP_HOST",
    "HostileSitemapSite",
    "SitemapSite",
    "declared_lastmod",
    "sitemap_sites",
]

SITEMAP_HOST = "sitemaps.test"
HOSTILE_SITEMAP_HOST = "sitemaps-hostile.test"
LINKED = 5  # /page-1.html … /page-5.html, linked from the home page
ORPHANS = 8  # /orphan/1.html … /orphan/8.html, listed only in a sitemap
CHILDREN = 10_000
BOMB_BYTES = 256 * 1024 * 1024  # whitespace inside a urlset: ~256 KiB of gzip
HUGE_BYTES = 200 * 1024 * 1024
# Path → what it is; the hostile robots.txt lists every one as a Sitemap.
HOSTILE_SITEMAPS = {
    "/self-index.xml": "an index that lists itself and /loop-b.xml",
    "/loop-b.xml": "an index that lists /self-index.xml",
    "/ten-thousand.xml": f"an index of {CHILDREN:,} child sitemaps",
    "/bomb.xml.gz": f"gzip that expands to {BOMB_BYTES >> 20} MiB",
    "/huge.xml": f"a {HUGE_BYTES >> 20} MB sitemap",
    "/malformed.xml": "a urlset whose XML breaks after two entries",
    "/laughs.xml": "an entity-expansion attack",
    "/xxe.xml": "an external entity naming /etc/passwd",
    "/feed-html.rss": "an HTML page where a feed should be",
}
_NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
_XML = "application/xml"
REQUESTS_PATH = "/__requests"
#: Day 0 of the simulated calendar, as lastmod dates give it (2026-01-01T00:00:00Z).
LASTMOD_EPOCH = calendar.timegm((2026, 1, 1, 0, 0, 0, 0, 0, 0))
_DAY = 86_400
#: Pages whose sitemap lastmod lies: "stale" never moves, "today" moves every day.
LIARS = {"/page-4.html": "stale", "/page-5.html": "today"}


def declared_lastmod(page: Page, day: int, liar: str | None = None) -> float:
    """The lastmod the sitemap gives ``page`` on ``day`` (seconds since the epoch, UTC):
    the day of its last change, or what its kind of liar says."""
    if liar == "today":
        last = day
    elif liar == "stale":
        last = 0
    else:
        version = page.version(day)
        last = day
        while last > 0 and page.version(last - 1) == version:
            last -= 1
    return float(LASTMOD_EPOCH + last * _DAY)


def _w3c_date(stamp: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(stamp))


class _Counted(Site):
    """Counts the requests for each path; ``/__requests`` answers the counts as JSON.

    Every answer is marked uncacheable so that the server asks ``route`` each time (the
    sites are small: a few dozen paths).
    """

    requests: collections.Counter[str]

    def route(self, host: str, path: str, query: str) -> Outcome:
        if path == REQUESTS_PATH:
            body = json.dumps(dict(self.requests), sort_keys=True).encode()
            return Outcome(
                200, "requests", body=body, content_type="application/json", cacheable=False
            )
        self.requests[path] += 1
        return dataclasses.replace(self.answer(host, path, query), cacheable=False)

    def answer(self, host: str, path: str, query: str) -> Outcome:
        raise NotImplementedError


def _urlset(urls: Iterable[tuple[str, str]]) -> bytes:
    rows = "".join(
        f"<url><loc>{u}</loc><lastmod>{m}</lastmod><changefreq>weekly</changefreq></url>\n"
        for u, m in urls
    )
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {_NS}>\n{rows}</urlset>\n'.encode()


def _index(locs: Iterable[str]) -> bytes:
    rows = "".join(f"<sitemap><loc>{u}</loc></sitemap>\n" for u in locs)
    return f'<?xml version="1.0"?>\n<sitemapindex {_NS}>\n{rows}</sitemapindex>\n'.encode()


def _xml(body: bytes, content_type: str = _XML, rid: str = "sitemap") -> Outcome:
    return Outcome(200, rid, body=body, content_type=content_type, resource=False)


class SitemapSite(_Counted):
    """Linked pages, orphan pages reachable only through the sitemap index, two feeds."""

    def __init__(self, cfg: WebConfig, address: str = "127.0.0.1") -> None:
        self.cfg = cfg
        self.requests = collections.Counter()
        self.name = "sitemaps"
        self.personality_name = "sitemaps"
        self.hosts = (SITEMAP_HOST,)
        self.address = address
        self.origin = o = origin(SITEMAP_HOST, cfg.port)
        self.seeds = (o + "/",)
        linked = [
            Page(f"sitemaps:/page-{i}.html", f"{o}/page-{i}.html", f"Page {i}", period=3)
            for i in range(1, LINKED + 1)
        ]
        self.orphans = [
            Page(f"sitemaps:/orphan/{i}.html", f"{o}/orphan/{i}.html", f"Orphan {i}")
            for i in range(1, ORPHANS + 1)
        ]
        links = [Link(p.url, f'<a href="{p.url}">{p.title}</a>') for p in linked]
        links.append(Link(f"{o}/moved.html", f'<a href="{o}/moved.html">moved</a>'))
        links.append(Link(f"{o}/copy-of-1.html", f'<a href="{o}/copy-of-1.html">copy</a>'))
        feeds = (
            f'<link rel="alternate" type="application/rss+xml" title="News" href="/feed.rss">\n'
            f'<link rel="Alternate" type="application/atom+xml" href="{o}/feed.atom">\n'
        )
        self.home = Page("sitemaps:/", o + "/", "Sitemaps home", tuple(links), head=feeds)
        self._pages = {"/": self.home} | {p.url[len(o) :]: p for p in linked + self.orphans}
        self._pages["/copy-of-1.html"] = linked[0]  # byte-identical: a revisit record
        self.linked = linked

    def pages(self) -> Iterable[Page]:
        yield self.home
        yield from self.linked
        yield from self.orphans

    def lastmods(self, pages: list[Page], day: int) -> list[tuple[str, str]]:
        o = self.origin
        return [
            (p.url, _w3c_date(declared_lastmod(p, day, LIARS.get(p.url[len(o) :])))) for p in pages
        ]

    def answer(self, host: str, path: str, query: str) -> Outcome:
        o = self.origin
        if path == "/robots.txt":
            body = f"User-agent: *\nDisallow: /private/\nSitemap: {o}/sitemap_index.xml\n"
            return Outcome(200, "robots:sitemaps", body=body.encode(), content_type="text/plain")
        if path == "/sitemap_index.xml":
            return _xml(_index([f"{o}/sitemaps/pages.xml", f"{o}/sitemaps/orphans.xml.gz"]))
        if path == "/sitemaps/pages.xml":
            pages = [self.home, *self.linked]
            return Outcome(
                200,
                "sitemap",
                content_type=_XML,
                resource=False,
                render=lambda day: _urlset(self.lastmods(pages, day)),
            )
        if path == "/sitemaps/orphans.xml.gz":
            packed = zlib.compress(_urlset(self.lastmods(self.orphans, 0)), 9, wbits=31)
            return _xml(packed, "application/gzip")
        if path in ("/feed.rss", "/feed.atom"):
            return _xml(_feed(path, self.linked), _FEED_TYPES[path], "feed")
        if path == "/moved.html":
            return Outcome(301, "redirect", location=f"{o}/page-2.html", resource=False)
        page = self._pages.get(path)
        if page is not None and not query:
            return Outcome(200, page.rid, page=page)
        return Outcome(404, "404", body=b"not found\n", content_type="text/plain", resource=False)


_FEED_TYPES = {"/feed.rss": "application/rss+xml", "/feed.atom": "application/atom+xml"}


def _feed(path: str, pages: list[Page]) -> bytes:
    if path == "/feed.rss":
        items = "".join(
            f"<item><title>{p.title}</title><link>{p.url}</link>"
            f"<pubDate>Mon, 0{i + 1} Jun 2026 10:00:00 GMT</pubDate></item>\n"
            for i, p in enumerate(pages)
        )
        return (
            f'<rss version="2.0"><channel><title>News</title>\n{items}</channel></rss>\n'.encode()
        )
    entries = "".join(
        f'<entry><title>{p.title}</title><link href="{p.url}"/>'
        f"<updated>2026-06-0{i + 1}T10:00:00Z</updated></entry>\n"
        for i, p in enumerate(pages)
    )
    return f'<feed xmlns="http://www.w3.org/2005/Atom"><title>News</title>\n{entries}</feed>\n'.encode()


@functools.cache
def bomb() -> bytes:
    """A urlset holding 256 MiB of spaces, gzip level 9: about 256 KiB on the wire."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [comp.compress(f'<?xml version="1.0"?><urlset {_NS}><url><loc>'.encode())]
    chunk = b" " * (1 << 20)
    out += [comp.compress(chunk) for _ in range(BOMB_BYTES >> 20)]
    out.append(comp.compress(b"http://x.test/</loc></url></urlset>") + comp.flush())
    return b"".join(out)


def huge(o: str) -> bytes:
    """200 MB of well-formed urlset: 4 KiB entries, so the 50 MB limit comes before the
    50,000-URL one. Built per request and never cached by the server (``cacheable``)."""
    entry = f"<url><loc>{o}/huge/{'x' * 1900}</loc></url>" + " " * 2000 + "\n"
    head = f'<?xml version="1.0"?><urlset {_NS}>\n'.encode()
    unit = entry.encode()
    return head + unit * (HUGE_BYTES // len(unit)) + b"</urlset>\n"


_LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE urlset [\n<!ENTITY a "aaaaaaaaaaaaaaaaaaaa">\n'
    + b"".join(
        f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">\n'.encode() for i in range(9)
    )
    + b"]>\n<urlset><url><loc>http://x.test/&j;</loc></url></urlset>\n"
)
_XXE = (
    b'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
    b"<urlset><url><loc>http://x.test/&x;</loc></url></urlset>\n"
)
_HTML_FEED = (
    b"<!DOCTYPE html>\n<html><head><title>Our news</title></head><body>\n"
    b"<p>Subscribe!<br><img src=x.png></p></body></html>\n"
)


class HostileSitemapSite(_Counted):
    """Every hostile sitemap and feed case, each listed in robots.txt."""

    def __init__(self, cfg: WebConfig, address: str = "127.0.0.1") -> None:
        self.cfg = cfg
        self.requests = collections.Counter()
        self.name = "sitemaps-hostile"
        self.personality_name = "sitemaps-hostile"
        self.hosts = (HOSTILE_SITEMAP_HOST,)
        self.address = address
        self.origin = o = origin(HOSTILE_SITEMAP_HOST, cfg.port)
        self.seeds = (o + "/",)
        feed = '<link rel="alternate" type="application/rss+xml" href="/feed-html.rss">\n'
        self.home = Page("sitemaps-hostile:/", o + "/", "Hostile sitemaps", head=feed)

    def pages(self) -> Iterable[Page]:
        yield self.home

    def answer(self, host: str, path: str, query: str) -> Outcome:
        o = self.origin
        if path == "/robots.txt":
            lines = "".join(f"Sitemap: {o}{p}\n" for p in HOSTILE_SITEMAPS)
            body = f"User-agent: *\nAllow: /\n{lines}".encode()
            return Outcome(200, "robots:sitemaps-hostile", body=body, content_type="text/plain")
        if path == "/":
            return Outcome(200, self.home.rid, page=self.home)
        if path == "/self-index.xml":
            return _xml(_index([f"{o}/self-index.xml", f"{o}/loop-b.xml"]))
        if path == "/loop-b.xml":
            return _xml(_index([f"{o}/self-index.xml"]))
        if path == "/ten-thousand.xml":
            return _xml(_index(f"{o}/child/{i}.xml" for i in range(CHILDREN)), rid="sitemap:10k")
        if path.startswith("/child/") and path.endswith(".xml"):
            n = path[len("/child/") : -len(".xml")]
            return _xml(_urlset([(f"{o}/child-page/{n}.html", "2026-01-01")]))
        if path == "/bomb.xml.gz":
            return _xml(bomb(), "application/gzip")
        if path == "/huge.xml":
            return Outcome(200, "sitemap", body=huge(o), content_type=_XML, cacheable=False)
        if path == "/malformed.xml":
            body = _urlset([(f"{o}/a.html", "2026-01-01"), (f"{o}/b.html", "2026-01-02")])
            return _xml(body.replace(b"</urlset>", b"<url><loc>http://x.test/</url></urlset"))
        if path == "/laughs.xml":
            return _xml(_LAUGHS)
        if path == "/xxe.xml":
            return _xml(_XXE)
        if path == "/feed-html.rss":
            return _xml(_HTML_FEED, "application/rss+xml")
        return Outcome(404, "404", body=b"not found\n", content_type="text/plain", resource=False)


def sitemap_sites(cfg: WebConfig) -> list[Site]:
    """The sites of profile ``sitemaps``."""
    return [SitemapSite(cfg, cfg.addresses[0]), HostileSitemapSite(cfg, cfg.addresses[-1])]
