"""Sitemaps and feeds of the test web (profile ``sitemaps``), read through the pure API the
way the crawl engine will: robots.txt ``Sitemap:`` lines, the index budget, bodies in chunks.

Each hostile case ends in one state; the orphan pages only a sitemap lists are found by the
sitemap walk and by no link.
"""

from __future__ import annotations

import collections
import http.client
from urllib.parse import urlsplit

import pytest

from crawl.conftest import crawl
from dustless.sources import (
    Admit,
    CrossHost,
    EntryKind,
    FeedParser,
    RootKind,
    SitemapBudget,
    SitemapParser,
    SourceState,
    discover_feeds,
    entry_allowed,
)
from dustless.store import SQLiteStore
from dustless.testweb._sitemaps import CHILDREN, HOSTILE_SITEMAPS, LINKED, ORPHANS

CHUNK = 64 * 1024


@pytest.fixture
def web(testweb_factory):
    return testweb_factory(profile="sitemaps")


class Reader:
    """GETs through the test web's address, counting requests per URL."""

    def __init__(self, web) -> None:
        self.web = web
        self.requests: collections.Counter[str] = collections.Counter()

    def get(self, url: str, parser=None):
        self.requests[url] = self.requests[url] + 1
        parts = urlsplit(url)
        conn = http.client.HTTPConnection(self.web.address, self.web.port, timeout=60)
        try:
            conn.request("GET", parts.path, headers={"Host": parts.netloc})
            resp = conn.getresponse()
            if parser is None:
                return resp.read()
            entries = []
            while chunk := resp.read(CHUNK):
                entries += parser.feed(chunk)
                if parser.done:
                    break  # a limit or an error: the rest is never downloaded
            outcome = parser.close()
            return entries + parser.tail, outcome
        finally:
            conn.close()

    def sitemap_lines(self, origin: str) -> list[str]:
        robots = self.get(origin + "/robots.txt").decode()
        return [
            line.split(":", 1)[1].strip()
            for line in robots.splitlines()
            if line.lower().startswith("sitemap:")
        ]

    def walk(self, origin: str, budget: SitemapBudget):
        """Every page a host's sitemaps list (allowed by the cross-host rules), and the
        outcome of each sitemap fetched."""
        pages, outcomes = [], {}
        todo = [(url, 0) for url in self.sitemap_lines(origin)]
        while todo:
            url, depth = todo.pop(0)
            if budget.admit(url, depth) is not Admit.FETCH:
                continue
            entries, outcome = self.get(url, SitemapParser())
            outcomes[url] = outcome
            for e in entries:
                if entry_allowed(e.url, url, [origin]) is not CrossHost.ALLOWED:
                    continue
                if e.kind is EntryKind.SITEMAP:
                    todo.append((e.url, depth + 1))
                else:
                    pages.append(e)
        return pages, outcomes


def test_sitemap_index_finds_the_pages_no_link_reaches(web, tmp_path) -> None:
    origin = web.base_url("sitemaps.test")
    reader = Reader(web)
    pages, outcomes = reader.walk(origin, SitemapBudget())
    urls = {p.url for p in pages}
    orphans = {f"{origin}/orphan/{i}.html" for i in range(1, ORPHANS + 1)}
    assert orphans <= urls
    assert len(urls) == 1 + LINKED + ORPHANS
    assert all(p.lastmod is not None for p in pages)
    assert all(o.state is SourceState.OK for o in outcomes.values())
    assert {o.gzip for o in outcomes.values()} == {True, False}  # orphans.xml.gz
    assert set(reader.requests.values()) == {1}  # each sitemap fetched once

    # Links alone never reach them.
    result = crawl(web, tmp_path / "c", seeds=(origin + "/",))
    assert result.finished
    with SQLiteStore(tmp_path / "c") as store:
        crawled = {r.url for r in store.iter_fetches() if r.status == 200}
    assert not orphans & crawled
    assert f"{origin}/page-1.html" in crawled


def test_feeds_are_discovered_and_read_with_dates(web) -> None:
    origin = web.base_url("sitemaps.test")
    reader = Reader(web)
    feeds = discover_feeds(reader.get(origin + "/"), origin + "/")
    assert [f.url for f in feeds] == [origin + "/feed.rss", origin + "/feed.atom"]
    for feed in feeds:
        entries, outcome = reader.get(feed.url, FeedParser(base=feed.url))
        assert outcome.state is SourceState.OK
        assert [e.url for e in entries] == [f"{origin}/page-{i}.html" for i in range(1, 6)]
        assert all(e.date is not None for e in entries)


EXPECTED = {
    "/self-index.xml": SourceState.OK,
    "/loop-b.xml": SourceState.OK,
    "/ten-thousand.xml": SourceState.OK,
    "/bomb.xml.gz": SourceState.BOMB,
    "/huge.xml": SourceState.SIZE_LIMIT,
    "/malformed.xml": SourceState.MALFORMED,
    "/laughs.xml": SourceState.DTD,
    "/xxe.xml": SourceState.DTD,
    "/feed-html.rss": SourceState.NOT_SOURCE,
}


@pytest.mark.slow
def test_each_hostile_sitemap_ends_in_one_state(web) -> None:
    assert set(EXPECTED) == set(HOSTILE_SITEMAPS)
    origin = web.base_url("sitemaps-hostile.test")
    reader = Reader(web)
    budget = SitemapBudget(max_depth=1, max_sitemaps=100)
    pages, outcomes = reader.walk(origin, budget)
    states = {urlsplit(u).path: o.state for u, o in outcomes.items()}
    # the children of the 10,000-sitemap index that the budget let through
    children = {p for p in states if p.startswith("/child/")}
    assert len(children) == 100 - len(EXPECTED)
    assert {states.pop(p) for p in children} == {SourceState.OK}
    assert states == EXPECTED
    # the loops were read once; the rest of the 10,000 were refused, not fetched
    assert budget.refused[Admit.SEEN] == 3  # self-index twice (itself, loop-b), loop-b once
    assert budget.refused[Admit.TOO_MANY] == CHILDREN - len(children)
    assert set(reader.requests.values()) == {1}
    assert outcomes[origin + "/ten-thousand.xml"].entries == CHILDREN
    assert outcomes[origin + "/malformed.xml"].entries == 2  # kept before the error
    assert outcomes[origin + "/huge.xml"].bytes_out == 50 * 1024 * 1024
    assert outcomes[origin + "/bomb.xml.gz"].bytes_out < 3 << 20
    assert outcomes[origin + "/feed-html.rss"].root is RootKind.HTML
    assert not any("passwd" in p.url or "x.test" in p.url for p in pages)
    # the HTML "feed" read as a feed: the same one state
    feed = discover_feeds(reader.get(origin + "/"), origin + "/")[0]
    _, outcome = reader.get(feed.url, FeedParser())
    assert (outcome.state, outcome.root) == (SourceState.NOT_SOURCE, RootKind.HTML)
