"""The engine against fakes: a table for a web, an in-memory crawl DB, no sockets.

``Crawler`` is given its parts; here the fetcher answers from a dict (and records what was
asked), the store is SQLite in memory, so each test runs in milliseconds and can make the web
do what a real one rarely does on cue: robots.txt that differs per scheme, a refused address,
a bug of ours in the middle of a page. Each test runs on both stores (``open_store``):
SQLite, and PostgreSQL as one worker of a shared crawl.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import time
from collections.abc import Mapping

import pytest

from dustless.crawl import CrawlConfig, CrawlSetup, build_parts
from dustless.crawl.engine import Crawler
from dustless.fetch import FetchLimits, FetchResult
from dustless.states import NetState
from dustless.store import SQLiteStore, WarcWriter


@dataclasses.dataclass
class Page:
    status: int = 200
    body: bytes = b""
    mime: str = "text/html"
    location: str | None = None


class FakeFetcher:
    """Answers from ``web`` (url -> Page, a NetState, or an exception to raise)."""

    def __init__(
        self, web: Mapping[str, Page | NetState | Exception], slow: Mapping[str, float] = {}
    ) -> None:
        self.web = dict(web)
        self.slow = dict(slow)  # url -> seconds its answer takes
        self.asked: list[str] = []
        self.asked_at: dict[str, float] = {}
        self.limits = FetchLimits()

    async def fetch(self, url: str, headers: Mapping[str, str] | None = None) -> FetchResult:
        return await self.fetch_with(url, headers, self.limits)

    async def fetch_with(self, url, headers, limits, *, keep_prefix=False) -> FetchResult:
        self.asked_at.setdefault(url, time.monotonic())
        await asyncio.sleep(self.slow.get(url, 0))
        self.asked.append(url)
        page = self.web.get(url, Page(404, b"not here", "text/plain"))
        if isinstance(page, Exception):
            raise page
        if isinstance(page, NetState):
            return FetchResult.unfetched(url, page, error=f"address policy: {url} is loopback")
        return answer(url, page)

    async def close(self) -> None:
        pass


def answer(url: str, page: Page) -> FetchResult:
    """``page`` as the fetcher's result for ``url`` (OK for a 200 HTML page)."""
    state = NetState.OK if page.status == 200 and page.mime == "text/html" else NetState.code
    return FetchResult(
        url=url,
        state=state,
        status=page.status,
        headers=(("Content-Type", page.mime),),
        body=page.body,
        mime=page.mime,
        location=page.location,
        ip="192.0.2.1",
        started=time.time(),
        elapsed=0.001,
        raw_response_head=f"HTTP/1.1 {page.status} X\r\nContent-Type: {page.mime}\r\n\r\n".encode(),
    )


def table_answer(url: str, body: bytes | None) -> FetchResult:
    """robots.txt allows all; a page of the table is HTML, any other URL a 404."""
    if url.endswith("/robots.txt"):
        return answer(url, Page(200, b"User-agent: *\nAllow: /\n", "text/plain"))
    return answer(url, Page(404, b"no", "text/plain") if body is None else Page(200, body))


def links(*urls: str) -> bytes:
    return "".join(f'<a href="{u}">x</a>' for u in urls).encode()


ROBOTS_ALL = Page(200, b"User-agent: *\nAllow: /\n", "text/plain")


def crawl(tmp_path, web, *seeds, store=None, strict=True, slow=None, **options):
    """Run one crawl of ``web`` into ``store`` (a new in-memory one by default)."""
    store = store or SQLiteStore(":memory:")
    # These tests count the requests a crawl makes: no soft-404 probe among them unless asked
    # (it has tests of its own: test_soft404.py).
    options.setdefault("no_soft404_probe", True)
    config = CrawlConfig(
        seeds=seeds, delay=0.0, delay_factor=0.0, backoff=0.001, progress=False, **options
    )
    batch = store.resume_batch() or store.start_batch(config.to_json(), time.time())
    fetcher = FakeFetcher(web, slow or {})
    warc = WarcWriter(tmp_path / "warc", exact_ends=store.warc_committed_ends())
    crawler = Crawler(build_parts(CrawlSetup(config, store, fetcher, warc, batch, strict=strict)))
    result = asyncio.run(crawler.run())
    warc.close()
    return store, fetcher, result


def states(store) -> dict[str, str]:
    return dict(store.query("SELECT u.url, f.state FROM fetches f JOIN urls u ON u.id = f.url_id"))


def test_links_are_followed_once_and_the_crawl_ends(tmp_path, open_store):
    web = {
        "http://a.test/robots.txt": ROBOTS_ALL,
        "http://a.test/": Page(body=links("/1", "/2", "/1#again", "http://b.test/")),
        "http://a.test/1": Page(body=links("/", "/2")),
        "http://a.test/2": Page(body=b"leaf"),
        "http://b.test/robots.txt": ROBOTS_ALL,
        "http://b.test/": Page(body=b"other site"),
    }
    store, fetcher, result = crawl(tmp_path, web, "http://a.test/", store=open_store())
    assert result.finished
    assert sorted(u for u in fetcher.asked if not u.endswith("robots.txt")) == [
        "http://a.test/",
        "http://a.test/1",
        "http://a.test/2",
        "http://b.test/",
    ]
    assert store.work_left(time.time()).queued_hosts == 0
    assert {s for s in states(store).values()} == {"OK"}


def test_pages_whose_links_the_crawl_waits_for_are_not_held_long(tmp_path, open_store):
    # A shared store handles finished pages in batches worth a round trip; a batch waits
    # for company only briefly when the crawl waits for its links (a chain of pages, one
    # host), and not at all when nothing else is in flight. Held half a second a page, this
    # chain took 5 s (and on both stores, links waiting for the rate-limited admission were
    # taken at the next commit: a page a second).
    chain = [f"http://a.test/{i}" for i in range(10)]
    web = {
        "http://a.test/robots.txt": ROBOTS_ALL,
        "http://b.test/robots.txt": ROBOTS_ALL,
        "http://b.test/slow": Page(body=b"slow"),
        **{u: Page(body=links(nxt)) for u, nxt in itertools.pairwise(chain)},
        chain[-1]: Page(body=b"end"),
    }
    started = time.monotonic()
    _store, fetcher, result = crawl(
        tmp_path, web, chain[0], "http://b.test/slow", store=open_store(),
        slow={"http://b.test/slow": 6.0}, max_depth=20,
    )  # fmt: skip
    assert result.finished
    # The chain while the slow page is out: each page held briefly at most (0.3 s), not
    # the half second a batch waits for company when other work is at hand. A loaded
    # machine only lengthens a gap between two pages of the chain, never shortens one: a
    # hold of 0.5 s (or a page a second) is in every gap, so the shortest gap tells
    # (10 pages held 0.3 s take 3 s, and a loaded CI machine made that 4.1 s).
    asked = [fetcher.asked_at[u] for u in chain]
    gaps = [b - a for a, b in itertools.pairwise(asked)]
    assert min(gaps) < 0.45, gaps
    assert asked[-1] - started < 6.0  # all of it while the slow page (6 s) was out


def test_fetches_that_end_together_do_not_send_their_pages_alone(tmp_path, pg_db):
    # A server that answers every request of a wave at the same moment (its latency is one
    # timer): all fetches out end at once. The next wave is started before the finished
    # pages are looked at, so they wait for its company (one content-seen query for many
    # pages) instead of going alone because nothing was in flight: one query a wave.
    from dustless.store import PostgresCrawlStore

    hosts = [f"h{i}.test" for i in range(16)]
    web: dict[str, Page | NetState | Exception] = {}
    for h in hosts:
        web[f"http://{h}/robots.txt"] = ROBOTS_ALL
        pages = [f"http://{h}/{n}" for n in range(6)]
        web[f"http://{h}/"] = Page(body=links(*pages))
        web.update({u: Page(body=f"page {u}".encode()) for u in pages})
    slow = {u: 0.05 for u in web if not u.endswith("robots.txt")}
    store = PostgresCrawlStore(pg_db, worker="w")
    asked: list[int] = []
    content_seen = store.content_seen

    def counted(sha1s):
        asked.append(len(sha1s))
        return content_seen(sha1s)

    store.content_seen = counted  # type: ignore[method-assign]
    _store, fetcher, result = crawl(
        tmp_path, web, *(f"http://{h}/" for h in hosts), store=store, slow=slow, concurrency=8
    )
    assert result.finished
    pages = sum(1 for u in fetcher.asked if not u.endswith("robots.txt"))
    assert pages == 16 * 7
    # 14 waves of 8: a query each before; now a few batches (held up to 0.5 s).
    assert len(asked) <= 6, asked
    store.close()


def test_robots_txt_is_per_scheme_host_and_port(tmp_path, open_store):
    # RFC 9309 §2.3: http://a.test/ and https://a.test/ are two origins, two robots.txt.
    web = {
        "http://a.test/robots.txt": Page(200, b"User-agent: *\nDisallow: /private\n", "text/plain"),
        "https://a.test/robots.txt": ROBOTS_ALL,
        "http://a.test/private": Page(body=b"no"),
        "https://a.test/private": Page(body=b"yes"),
    }
    store, fetcher, _ = crawl(
        tmp_path, web, "http://a.test/private", "https://a.test/private", store=open_store()
    )
    got = states(store)
    assert got["http://a.test/private"] == "robots"
    assert got["https://a.test/private"] == "OK"
    assert fetcher.asked.count("http://a.test/robots.txt") == 1
    assert fetcher.asked.count("https://a.test/robots.txt") == 1


def test_robots_txt_in_the_db_is_reused_within_its_day(tmp_path, open_store):
    web = {"http://a.test/robots.txt": ROBOTS_ALL, "http://a.test/1": Page(body=b"one")}
    store, first, _ = crawl(tmp_path, web, "http://a.test/1", max_pages=1, store=open_store())
    assert first.asked.count("http://a.test/robots.txt") == 1
    # A resumed run (or another worker) meets the same origin: the stored rules serve.
    web["http://a.test/2"] = Page(body=b"two")
    store.admit([_given("http://a.test/2")], _no_limits(), 1)
    store.commit()
    _, second, _ = crawl(tmp_path, web, store=store)
    assert second.asked == ["http://a.test/2"]


def test_a_refused_address_is_filtered_at_once(tmp_path, open_store):
    web = {
        "http://a.test/robots.txt": ROBOTS_ALL,
        "http://a.test/": Page(body=links("http://10.0.0.1/admin", "http://10.0.0.1/x")),
        "http://10.0.0.1/robots.txt": NetState.filtered,
    }
    store, fetcher, result = crawl(tmp_path, web, "http://a.test/", store=open_store())
    got = states(store)
    assert got["http://10.0.0.1/admin"] == "filtered"
    assert fetcher.asked.count("http://10.0.0.1/robots.txt") == 1  # never retried
    assert result.stats.refused_hosts == {
        "10.0.0.1": "address policy: http://10.0.0.1/robots.txt is loopback"
    }


def test_unreachable_robots_backs_off_then_gives_the_host_up(tmp_path, open_store):
    web = {
        "http://a.test/robots.txt": Page(503, b"busy", "text/plain"),
        "http://a.test/1": Page(body=b"never"),
    }
    store, fetcher, _ = crawl(tmp_path, web, "http://a.test/1", max_failures=3, store=open_store())
    assert fetcher.asked == ["http://a.test/robots.txt"] * 3  # RFC 9309 §2.3.1.4
    assert states(store)["http://a.test/1"] == "robots"


def test_a_bug_of_ours_is_one_urls_iErr_and_fails_loudly_in_strict_mode(tmp_path, open_store):
    web = {
        "http://a.test/robots.txt": ROBOTS_ALL,
        "http://a.test/": Page(body=links("/bug", "/ok")),
        "http://a.test/bug": TypeError("a bug of ours"),
        "http://a.test/ok": Page(body=b"fine"),
    }
    store, _, result = crawl(tmp_path, web, "http://a.test/", strict=False, store=open_store())
    got = states(store)
    assert got["http://a.test/bug"] == "iErr"
    assert got["http://a.test/ok"] == "OK"
    assert result.stats.states["iErr"] == 1
    with pytest.raises(TypeError, match="a bug of ours"):
        crawl(tmp_path / "strict", web, "http://a.test/", strict=True)


def test_limits_hold_in_the_db(tmp_path, open_store):
    web = {"http://a.test/robots.txt": ROBOTS_ALL}
    web["http://a.test/"] = Page(body=links(*(f"/{i}" for i in range(20))))
    for i in range(20):
        web[f"http://a.test/{i}"] = Page(body=b"leaf")
    store, _fetcher, _ = crawl(tmp_path, web, "http://a.test/", max_pages=5, store=open_store())
    assert len(states(store)) == 5
    assert dict(store.query("SELECT site, pages FROM sites")) == {"a.test": 5}


def _given(url):
    from dustless.kinds import LinkKind
    from dustless.store import AdmitURL

    host = url.split("/")[2]
    return AdmitURL(url, url, host, host, 0, LinkKind.SEED, None, None, given=True)


def _no_limits():
    from dustless.store import Limits

    return Limits()
