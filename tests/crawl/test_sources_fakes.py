"""Sitemaps and feeds in the engine against a table web (no sockets): where sources come
from, the sitemaps.org cross-host rules, the index bounds, robots.txt, redirects, site rules.

The fake fetcher streams each body into the engine's sink in small chunks, as the real one
does, so the entries are admitted while the "download" is still going on.
"""

from __future__ import annotations

import asyncio
import gzip
import time
from collections.abc import Mapping

from dustless.crawl import CrawlConfig, CrawlSetup, build_parts
from dustless.crawl.engine import Crawler
from dustless.crawl.scripted import load_rules
from dustless.fetch import FetchResult
from dustless.states import NetState
from dustless.store import SQLiteStore, WarcWriter

from .test_engine_fakes import ROBOTS_ALL, FakeFetcher, Page, links


class StreamingFetcher(FakeFetcher):
    """``FakeFetcher`` that hands a body to a sink in 100-byte chunks."""

    async def fetch_with(self, url, headers, limits, *, keep_prefix=False, sink=None):
        result: FetchResult = await super().fetch_with(url, headers, limits)
        if sink is None or result.status is None or not sink.wants(result.status):
            return result
        body = result.body
        for i in range(0, len(body), 100):
            await asyncio.sleep(0)
            if sink.feed(body[i : i + 100]):
                break
        return FetchResult(**{**_fields(result), "body": b""})


def _fields(r: FetchResult) -> dict:
    return {name: getattr(r, name) for name in FetchResult.__dataclass_fields__}


def urlset(*urls: str, lastmod: str = "2026-03-01") -> bytes:
    rows = "".join(f"<url><loc>{u}</loc><lastmod>{lastmod}</lastmod></url>" for u in urls)
    return f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{rows}</urlset>'.encode()


def index(*urls: str) -> bytes:
    rows = "".join(f"<sitemap><loc>{u}</loc></sitemap>" for u in urls)
    return f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{rows}</sitemapindex>'.encode()


def xml(body: bytes) -> Page:
    return Page(200, body, "application/xml")


def robots(*lines: str) -> Page:
    return Page(200, ("User-agent: *\nAllow: /\n" + "".join(lines)).encode(), "text/plain")


def crawl(tmp_path, web, *seeds, rules=(), **options):
    store = SQLiteStore(":memory:")
    config = CrawlConfig(
        seeds=seeds,
        delay=0.0,
        delay_factor=0.0,
        backoff=0.001,
        progress=False,
        rules=tuple(rules),
        **options,
    )
    batch = store.start_batch(config.to_json(), time.time())
    fetcher = StreamingFetcher(web)
    warc = WarcWriter(tmp_path / "warc")
    rules = load_rules(config.rules, ())
    setup = CrawlSetup(config, store, fetcher, warc, batch, rules=rules, strict=True)
    crawler = Crawler(build_parts(setup))
    result = asyncio.run(crawler.run())
    warc.close()
    return store, fetcher, result


def fetched(store) -> dict[str, tuple[str, str, str | None]]:
    """url -> (kind, state, source state)."""
    return {
        url: (kind, state, source)
        for url, kind, state, source in store.query(
            "SELECT u.url, u.kind, f.state, f.source_state FROM fetches f "
            "JOIN urls u ON u.id = f.url_id"
        )
    }


def test_cross_host_entries_follow_the_sitemaps_org_rules(tmp_path: object) -> None:
    web: Mapping[str, Page | NetState | Exception] = {
        # a.test's robots.txt vouches for a sitemap another host serves for it.
        "http://a.test/robots.txt": robots("Sitemap: http://maps.test/for-a.xml\n"),
        "http://a.test/": Page(body=b"home"),
        "http://a.test/only-in-map": Page(body=b"found through maps.test"),
        "http://maps.test/robots.txt": ROBOTS_ALL,
        "http://maps.test/for-a.xml": xml(
            urlset("http://a.test/only-in-map", "http://c.test/not-vouched")
        ),
        "http://c.test/robots.txt": ROBOTS_ALL,
        "http://c.test/not-vouched": Page(body=b"never"),
    }
    store, fetcher, result = crawl(tmp_path, web, "http://a.test/", sitemaps=True)
    assert result.finished
    got = fetched(store)
    assert got["http://maps.test/for-a.xml"] == ("m", "code", "ok")
    assert got["http://a.test/only-in-map"] == ("l", "OK", None)
    assert "http://c.test/not-vouched" not in fetcher.asked
    assert result.stats.sources_refused == {"other-origin": 1}
    with store:
        (error,) = store.query(
            "SELECT f.error FROM fetches f JOIN urls u ON u.id = f.url_id WHERE u.kind = 'm'"
        )[0]
    assert error == "not followed: other-origin 1"


def test_a_sitemap_lists_only_below_its_directory_unless_robots_lists_it(tmp_path) -> None:
    web = {
        # No Sitemap: line: /sitemap.xml is tried; it redirects to a deeper directory,
        # whose sitemap may list /deep/… only (no robots.txt vouches for it).
        "http://a.test/robots.txt": ROBOTS_ALL,
        "http://a.test/": Page(body=b"home"),
        "http://a.test/sitemap.xml": Page(301, b"", "text/html", "http://a.test/deep/map.xml"),
        "http://a.test/deep/map.xml": xml(urlset("http://a.test/deep/in", "http://a.test/out")),
        "http://a.test/deep/in": Page(body=b"in"),
        "http://a.test/out": Page(body=b"out"),
    }
    store, fetcher, result = crawl(tmp_path, web, "http://a.test/", sitemaps=True)
    got = fetched(store)
    assert got["http://a.test/sitemap.xml"] == ("m", "code", None)  # a redirect: not read
    assert got["http://a.test/deep/map.xml"] == ("m", "code", "ok")  # its target, as a sitemap
    assert got["http://a.test/deep/in"][0] == "l"
    assert "http://a.test/out" not in fetcher.asked
    assert result.stats.sources_refused == {"outside-path": 1}


def test_index_depth_and_count_are_bounded_and_loops_read_once(tmp_path) -> None:
    web = {
        "http://a.test/robots.txt": robots(
            "Sitemap: http://a.test/top.xml\n", "Sitemap: http://a.test/many.xml\n"
        ),
        "http://a.test/": Page(body=b"home"),
        "http://a.test/top.xml": xml(index("http://a.test/mid.xml", "http://a.test/top.xml")),
        "http://a.test/mid.xml": xml(index("http://a.test/low.xml")),
        "http://a.test/low.xml": xml(urlset("http://a.test/too-deep")),
        "http://a.test/many.xml": xml(index(*(f"http://a.test/m{i}.xml" for i in range(20)))),
    }
    for i in range(20):
        web[f"http://a.test/m{i}.xml"] = xml(urlset(f"http://a.test/p{i}"))
        web[f"http://a.test/p{i}"] = Page(body=b"p")
    _store, fetcher, result = crawl(
        tmp_path, web, "http://a.test/", sitemaps=True, sitemap_depth=1, max_sitemaps=8
    )
    asked = [u for u in fetcher.asked if u.endswith(".xml")]
    assert len(asked) == len(set(asked))  # top.xml lists itself: read once
    assert "http://a.test/mid.xml" in asked
    assert "http://a.test/low.xml" not in asked  # level 2 > --sitemap-depth 1
    assert len(asked) <= 8
    refused = result.stats.sources_refused
    assert refused["too-deep"] == 1
    assert refused["too-many"] >= 20 - 8


def test_robots_txt_rules_and_network_states_apply_to_sitemaps(tmp_path) -> None:
    web = {
        "http://a.test/robots.txt": Page(
            200,
            b"User-agent: *\nDisallow: /private/\nSitemap: http://a.test/private/map.xml\n"
            b"Sitemap: http://a.test/gone.xml\nSitemap: http://a.test/map.xml.gz\n",
            "text/plain",
        ),
        "http://a.test/": Page(body=b"home"),
        "http://a.test/map.xml.gz": Page(
            200, gzip.compress(urlset("http://a.test/from-gz")), "application/gzip"
        ),
        "http://a.test/from-gz": Page(body=b"x"),
        "http://a.test/gone.xml": NetState.cErr,
    }
    store, fetcher, _result = crawl(tmp_path, web, "http://a.test/", sitemaps=True)
    got = fetched(store)
    assert got["http://a.test/private/map.xml"] == ("m", "robots", None)
    assert "http://a.test/private/map.xml" not in fetcher.asked
    assert got["http://a.test/gone.xml"] == ("m", "cErr", None)
    assert got["http://a.test/map.xml.gz"] == ("m", "code", "ok")
    assert got["http://a.test/from-gz"][:2] == ("l", "OK")
    with store:
        (dated,) = store.query("SELECT count(*) FROM url_dates WHERE lastmod IS NOT NULL")[0]
    assert dated == 1


def test_site_rules_choose_sources_per_site(tmp_path) -> None:
    script = tmp_path / "rules.xml"
    script.write_text(
        '<crawlscript><site title="a" sitemaps="true" feeds="true">'
        '<identity value="a.test"/></site></crawlscript>'
    )
    feed = b'<link rel="alternate" type="application/atom+xml" href="/feed">'
    web = {
        "http://a.test/robots.txt": robots("Sitemap: http://a.test/map.xml\n"),
        "http://a.test/": Page(body=feed + links("http://b.test/")),
        "http://a.test/map.xml": xml(urlset("http://a.test/listed")),
        "http://a.test/listed": Page(body=b"x"),
        "http://a.test/feed": Page(
            200,
            b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="/entry"/>'
            b"<updated>2026-05-01T00:00:00Z</updated></entry></feed>",
            "application/atom+xml",
        ),
        "http://a.test/entry": Page(body=b"x"),
        "http://b.test/robots.txt": robots("Sitemap: http://b.test/map.xml\n"),
        "http://b.test/": Page(body=feed),
    }
    store, fetcher, _result = crawl(tmp_path, web, "http://a.test/", rules=[str(script)])
    got = fetched(store)
    assert got["http://a.test/map.xml"] == ("m", "code", "ok")
    assert got["http://a.test/feed"] == ("n", "code", "ok")
    assert got["http://a.test/entry"][0] == "e"
    assert "http://b.test/map.xml" not in fetcher.asked  # no rule for b.test, no flag
    assert got["http://b.test/feed"][0] == "h"  # a plain link there, fetched as a page
