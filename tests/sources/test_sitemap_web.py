"""Sitemaps and feeds of the test web (profile ``sitemaps``) read by the real crawl.

The test web is the judge: it counts the requests for each path (``/__requests``), so
"each sitemap fetched once" is what the server saw, and it knows which pages no link
reaches. Each hostile case ends as one recorded state on its one fetch row, and the crawl
goes on.
"""

from __future__ import annotations

import collections
import http.client
import json
from urllib.parse import urlsplit

import pytest

from crawl.conftest import crawl
from dustless.analysis import crawl_stats
from dustless.store import SQLiteStore, open_crawl
from dustless.testweb._sitemaps import (
    CHILDREN,
    HOSTILE_SITEMAP_HOST,
    HOSTILE_SITEMAPS,
    LINKED,
    ORPHANS,
    REQUESTS_PATH,
    SITEMAP_HOST,
)

SITEMAP_FILES = {"/sitemap_index.xml", "/sitemaps/pages.xml", "/sitemaps/orphans.xml.gz"}


@pytest.fixture
def web(testweb_factory):
    return testweb_factory(profile="sitemaps")


def served(web, host: str) -> collections.Counter[str]:
    """The requests the test web answered for each path of ``host`` so far."""
    conn = http.client.HTTPConnection(web.address, web.port, timeout=30)
    try:
        conn.request("GET", REQUESTS_PATH, headers={"Host": f"{host}:{web.port}"})
        return collections.Counter(json.loads(conn.getresponse().read()))
    finally:
        conn.close()


class Requests:
    """What the server answered during a ``with`` block (the pool's server is shared)."""

    def __init__(self, web, host: str) -> None:
        self.web, self.host = web, host

    def __enter__(self) -> collections.Counter[str]:
        self.before = served(self.web, self.host)
        self.delta: collections.Counter[str] = collections.Counter()
        return self.delta

    def __exit__(self, *exc: object) -> None:
        self.delta.update(served(self.web, self.host) - self.before)


def rows(out):
    with SQLiteStore(out) as store:
        return store.query(
            "SELECT u.url, u.kind, u.depth, f.state, f.status, f.source_state, "
            "f.links_internal, f.error FROM fetches f JOIN urls u ON u.id = f.url_id ORDER BY f.id"
        )


def test_sitemaps_crawl_the_pages_no_link_reaches_each_sitemap_once(web, tmp_path) -> None:
    origin = web.base_url(SITEMAP_HOST)
    orphans = {f"{origin}/orphan/{i}.html" for i in range(1, ORPHANS + 1)}
    seeds = (origin + "/",)

    # Links alone: no sitemap is asked for, no orphan is crawled.
    with Requests(web, SITEMAP_HOST) as asked:
        assert crawl(web, tmp_path / "links", seeds=seeds).finished
    crawled = {url for url, *_, status, _, _, _ in rows(tmp_path / "links") if status == 200}
    assert f"{origin}/page-1.html" in crawled
    assert not orphans & crawled
    assert not SITEMAP_FILES & set(asked)
    assert not any(p.startswith("/orphan/") for p in asked)

    # --sitemaps: robots.txt → the index → a urlset and a gzip urlset of the orphans.
    with Requests(web, SITEMAP_HOST) as asked:
        result = crawl(web, tmp_path / "maps", seeds=seeds, sitemaps=True)
    assert result.finished
    got = rows(tmp_path / "maps")
    by_url = {r[0]: r for r in got}
    assert orphans <= {url for url, *_, status, _, _, _ in got if status == 200}
    assert set(asked) >= SITEMAP_FILES
    assert set(asked.values()) == {1}, asked  # each sitemap, page and robots.txt: once
    assert len(got) == len(by_url)  # one fetch row per URL
    for path in SITEMAP_FILES:
        url, kind, _depth, state, status, source_state, *_ = by_url[origin + path]
        assert (kind, state, status, source_state) == ("m", "code", 200, "ok")
    assert by_url[origin + "/sitemap_index.xml"][2] == 0  # listed by robots.txt: level 0
    assert by_url[origin + "/sitemaps/pages.xml"][2] == 1  # listed by the index: level 1
    assert by_url[origin + "/sitemaps/orphans.xml.gz"][6] == ORPHANS  # entries admitted
    for url in orphans:
        assert by_url[url][1:3] == ("l", 1)  # link kind l, one step from the site
    assert result.stats.sources == {"m ok": 3}
    # Every listed URL keeps its lastmod and changefreq for this batch.
    with SQLiteStore(tmp_path / "maps") as store:
        dated = dict(
            store.query(
                "SELECT u.url, d.changefreq FROM url_dates d JOIN urls u ON u.id = d.url_id "
                "WHERE d.batch = 1 AND d.lastmod IS NOT NULL"
            )
        )
    assert orphans <= set(dated)
    assert len(dated) == 1 + LINKED + ORPHANS
    assert set(dated.values()) == {"weekly"}
    # Statistics count documents: the sitemaps (robots.txt's at depth 0) are no seeds.
    with open_crawl(tmp_path / "maps") as db:
        stats = crawl_stats(db)
    assert stats.fetches == len(got) - len(SITEMAP_FILES)
    assert sum(s.count for s in stats.seed_states) == 1


def test_feeds_are_discovered_read_and_their_entries_dated(web, tmp_path) -> None:
    origin = web.base_url(SITEMAP_HOST)
    with Requests(web, SITEMAP_HOST) as asked:
        result = crawl(web, tmp_path / "c", seeds=(origin + "/",), feeds=True)
    assert result.finished
    by_url = {r[0]: r for r in rows(tmp_path / "c")}
    for path in ("/feed.rss", "/feed.atom"):
        _url, kind, depth, _state, status, source_state, *_ = by_url[origin + path]
        assert (kind, depth, status, source_state) == ("n", 1, 200, "ok")
        assert asked[path] == 1
    assert not SITEMAP_FILES & set(asked)  # feeds only: no sitemap
    assert result.stats.sources == {"n ok": 2}
    with SQLiteStore(tmp_path / "c") as store:
        dated = store.query(
            "SELECT u.url, d.lastmod, s.url FROM url_dates d JOIN urls u ON u.id = d.url_id "
            "JOIN urls s ON s.id = d.source_id"
        )
    assert {u for u, _, _ in dated} == {f"{origin}/page-{i}.html" for i in range(1, LINKED + 1)}
    assert all(lastmod is not None for _, lastmod, _ in dated)
    assert {s for _, _, s in dated} <= {origin + "/feed.rss", origin + "/feed.atom"}


EXPECTED = {
    "/self-index.xml": "ok",
    "/loop-b.xml": "ok",
    "/ten-thousand.xml": "ok",
    "/bomb.xml.gz": "bomb",
    "/huge.xml": "size-limit",
    "/malformed.xml": "malformed",
    "/laughs.xml": "dtd",
    "/xxe.xml": "dtd",
    "/feed-html.rss": "not-source",
}


@pytest.mark.slow
def test_each_hostile_sitemap_and_feed_ends_as_one_recorded_state(web, tmp_path) -> None:
    assert set(EXPECTED) == set(HOSTILE_SITEMAPS)
    origin = web.base_url(HOSTILE_SITEMAP_HOST)
    seeds = (origin + "/",)

    # The HTML page the home page announces as a feed, read as a feed.
    with Requests(web, HOSTILE_SITEMAP_HOST) as asked:
        result = crawl(web, tmp_path / "feeds", seeds=seeds, feeds=True)
    assert result.finished
    by_url = {r[0]: r for r in rows(tmp_path / "feeds")}
    feed = by_url[origin + "/feed-html.rss"]
    assert (feed[1], feed[4], feed[5]) == ("n", 200, "not-source")
    assert asked["/feed-html.rss"] == 1

    # Every hostile sitemap robots.txt lists, feeds too: the crawl goes on past each.
    max_sitemaps = 30
    with Requests(web, HOSTILE_SITEMAP_HOST) as asked:
        result = crawl(
            web,
            tmp_path / "maps",
            seeds=seeds,
            sitemaps=True,
            feeds=True,
            sitemap_depth=1,
            max_sitemaps=max_sitemaps,
        )
    assert result.finished
    got = rows(tmp_path / "maps")
    states: dict[str, list[str | None]] = collections.defaultdict(list)
    for url, kind, _depth, _state, _status, source_state, *_ in got:
        if kind == "m":
            states[urlsplit(url).path].append(source_state)
    children = {p for p in states if p.startswith("/child/")}
    assert {p: states[p] for p in EXPECTED} == {p: [s] for p, s in EXPECTED.items()}
    assert {s for p in children for s in states[p]} == {"ok"}
    assert len(states) <= max_sitemaps  # the per-host bound, loops and repeats included
    assert set(asked.values()) == {1}, asked  # loops read once, nothing fetched twice
    assert not set(asked) & {f"/child/{i}.xml" for i in range(CHILDREN)} - children
    assert result.stats.sources_refused["too-many"] >= CHILDREN - max_sitemaps
    by_url = {r[0]: r for r in got}
    assert by_url[origin + "/"][3] == "OK"  # the crawl went on: the home page is in
    assert by_url[origin + "/malformed.xml"][6] == 2  # entries before the error, kept
    assert "not followed: too-many" in by_url[origin + "/ten-thousand.xml"][7]
    assert "52428800 bytes" in by_url[origin + "/huge.xml"][7]  # 50 MB: the limit hit
    assert by_url[origin + "/feed-html.rss"][1] == "m"  # robots.txt named it first
    with SQLiteStore(tmp_path / "maps") as store:
        urls = [u for (u,) in store.query("SELECT url FROM urls")]
    assert not any("passwd" in u or "x.test" in u for u in urls)


def test_the_command_line_reads_sitemaps_and_says_how_they_ended(web, tmp_path) -> None:
    from crawl.conftest import run_cli

    seed = web.base_url(SITEMAP_HOST) + "/"
    out = tmp_path / "c"
    proc = run_cli("crawl", str(out), seed, *web.resolve_args, "--delay", "0", "--sitemaps")
    assert proc.returncode == 0, proc.stderr
    # 2 sitemaps in the index, 6 pages in pages.xml, 8 orphans
    assert "sources: sitemaps 3 (ok 3); 16 entries" in proc.stderr
    with SQLiteStore(out) as store:
        kinds = dict(store.query("SELECT kind, count(*) FROM urls GROUP BY kind"))
    assert kinds["m"] == 3
    assert kinds["l"] == ORPHANS
    bad = run_cli("crawl", str(tmp_path / "d"), seed, "--max-sitemaps", "0")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "dustless crawl: error: --max-sitemaps must be >= 1, not 0"
    ]
