"""sitemaps.org location and cross-submit rules, the index budget, feed discovery."""

from __future__ import annotations

import pytest

from dustless.sources import (
    Admit,
    CrossHost,
    FeedKind,
    SitemapBudget,
    discover_feeds,
    entry_allowed,
)

SM = "http://www.example.com/catalog/sitemap.xml"


@pytest.mark.parametrize(
    ("entry", "robots", "verdict"),
    [
        ("http://www.example.com/catalog/show?item=23", (), CrossHost.ALLOWED),
        ("http://WWW.Example.com:80/catalog/a", (), CrossHost.ALLOWED),
        ("http://www.example.com/images/a.png", (), CrossHost.OUTSIDE_PATH),
        ("http://www.example.com/catalogue", (), CrossHost.OUTSIDE_PATH),
        ("https://www.example.com/catalog/a", (), CrossHost.OTHER_ORIGIN),
        ("http://www.example.com:8080/catalog/a", (), CrossHost.OTHER_ORIGIN),
        ("http://example.com/catalog/a", (), CrossHost.OTHER_ORIGIN),
        ("http://host2.test/any/path", ("http://host2.test/robots.txt",), CrossHost.ALLOWED),
        ("http://host3.test/x", ("http://host2.test",), CrossHost.OTHER_ORIGIN),
        # robots.txt of the sitemap's own host lists it: any path of that host
        ("http://www.example.com/images/a", ("http://www.example.com",), CrossHost.ALLOWED),
        ("mailto:a@b", (), CrossHost.NOT_HTTP),
        ("http://[::1/", (), CrossHost.NOT_HTTP),
    ],
)
def test_entry_allowed(entry: str, robots: tuple[str, ...], verdict: CrossHost) -> None:
    assert entry_allowed(entry, SM, robots) is verdict


def test_budget_depth_count_and_loops() -> None:
    b = SitemapBudget(max_depth=1, max_sitemaps=3)
    assert b.admit("http://a.test/index.xml", 0) is Admit.FETCH
    assert b.admit("http://a.test/index.xml", 1) is Admit.SEEN  # an index that lists itself
    assert b.admit("http://a.test/s1.xml", 1) is Admit.FETCH
    assert b.admit("http://a.test/deep.xml", 2) is Admit.TOO_DEEP
    assert b.admit("http://a.test/s2.xml", 1) is Admit.FETCH
    assert b.admit("http://a.test/s3.xml", 1) is Admit.TOO_MANY
    assert b.admitted == 3
    assert b.refused == {Admit.FETCH: 0, Admit.SEEN: 1, Admit.TOO_DEEP: 1, Admit.TOO_MANY: 1}


def test_discover_feeds() -> None:
    html = b"""<html><head><base href="http://a.test/news/">
    <link rel="alternate" type="application/rss+xml" title="All" href="feed.rss">
    <link rel="Alternate home" type="application/atom+xml; charset=utf-8" href="/atom">
    <link rel="alternate" type="text/html" href="/en">
    <link rel="stylesheet" type="application/rss+xml" href="/no">
    <link rel="alternate" type="application/rss+xml" href="feed.rss">
    <link rel="alternate" type="application/rss+xml" href="javascript:x()">
    </head><body><link rel="alternate" type="application/atom+xml" href="b.atom"></body></html>"""
    feeds = discover_feeds(html, "http://a.test/page")
    assert [(f.url, f.kind, f.title) for f in feeds] == [
        ("http://a.test/news/feed.rss", FeedKind.RSS, "All"),
        ("http://a.test/atom", FeedKind.ATOM, ""),
        ("http://a.test/news/b.atom", FeedKind.ATOM, ""),
    ]
    assert discover_feeds("<p>no feeds", "http://a.test/") == ()
