"""A fetch that fails for dustless's own reasons never ends a URL at once (issue 24).

The first internal failure of a URL queues it again (an ``iErr`` row kept for the record,
no failure counted against its host); a second in the same run ends it ``iErr``, and the
crawl ends. The web is a table (no sockets); each test runs on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Mapping

from crawl.test_engine_fakes import Page, answer
from dustless.crawl import CrawlConfig, CrawlSetup, build_parts
from dustless.crawl import engine as engine_module
from dustless.crawl.engine import Crawler
from dustless.crawl.progress import Progress
from dustless.fetch import FetchLimits, FetchResult
from dustless.store import WarcWriter


class Bug(Exception):
    """A bug of dustless, on cue."""


class Web:
    """Answers from a table of ``url -> (status, mime, body)``; ``bugs[url]``: how many
    times asking for ``url`` raises before it answers (a big number: always)."""

    def __init__(self, pages: Mapping[str, tuple[int, str, bytes]], bugs: Mapping[str, int]):
        self.pages = dict(pages)
        self.bugs = dict(bugs)
        self.asked: list[str] = []
        self.limits = FetchLimits()

    async def fetch(self, url: str, headers: Mapping[str, str] | None = None) -> FetchResult:
        return await self.fetch_with(url, headers, self.limits)

    async def fetch_with(self, url, headers, limits, *, keep_prefix=False, sink=None):
        self.asked.append(url)
        if self.bugs.get(url, 0) > 0:
            self.bugs[url] -= 1
            raise Bug(f"a bug of ours on {url}")
        status, mime, body = self.pages.get(url, (404, "text/plain", b"no"))
        return answer(url, Page(status, body, mime))

    async def close(self) -> None:
        pass


PAGES = {
    "http://a.test/robots.txt": (200, "text/plain", b"User-agent: *\nAllow: /\n"),
    "http://a.test/": (200, "text/html", b'<a href="/bug">x</a><a href="/ok">y</a>'),
    "http://a.test/bug": (200, "text/html", b"fine after all"),
    "http://a.test/ok": (200, "text/html", b"fine"),
}
ALWAYS = 1_000_000


def run(tmp_path, store, web, **options):
    config = CrawlConfig(
        seeds=("http://a.test/",),
        delay=0.0,
        delay_factor=0.0,
        backoff=0.001,
        progress=False,
        **options,
    )
    batch = store.start_batch(config.to_json(), time.time())
    warc = WarcWriter(tmp_path / "warc")
    stream = io.StringIO()
    progress = Progress(stream, interval=0.0)
    crawler = Crawler(
        build_parts(CrawlSetup(config, store, web, warc, batch, strict=False, progress=progress))
    )
    result = asyncio.run(crawler.run())
    warc.close()
    return result, crawler


def rows(store, url):
    """The fetch rows of ``url``, in order: (state, error)."""
    return store.query(
        "SELECT f.state, f.error FROM fetches f JOIN urls u ON u.id = f.url_id "
        "WHERE u.url = ? ORDER BY f.id",
        (url,),
    )


def url_state(store, url):
    return store.query("SELECT state FROM urls WHERE url = ?", (url,))[0][0]


def test_a_fetch_that_raises_once_is_queued_again_and_ends_ok(tmp_path, open_store):
    store = open_store()
    web = Web(PAGES, {"http://a.test/bug": 1})
    result, _ = run(tmp_path, store, web, max_failures=1)
    assert result.finished
    got = rows(store, "http://a.test/bug")
    assert [state for state, _ in got] == ["iErr", "OK"]
    assert "a bug of ours" in got[0][1]
    assert url_state(store, "http://a.test/bug") == "done"
    # Not the server's failure: with --max-failures 1 the host would have been given up.
    assert [state for state, _ in rows(store, "http://a.test/ok")] == ["OK"]
    assert result.stats.internal_errors == 1
    assert "iErr" not in result.stats.states
    assert "iErr" not in result.stats.errors


def test_a_fetch_that_always_raises_ends_iErr_after_two_tries(tmp_path, open_store):
    store = open_store()
    web = Web(PAGES, {"http://a.test/bug": ALWAYS})
    result, _ = run(tmp_path, store, web)
    assert result.finished
    assert web.asked.count("http://a.test/bug") == 2
    assert [state for state, _ in rows(store, "http://a.test/bug")] == ["iErr", "iErr"]
    assert url_state(store, "http://a.test/bug") == "done"
    assert [state for state, _ in rows(store, "http://a.test/ok")] == ["OK"]
    assert result.stats.internal_errors == 2
    assert result.stats.states["iErr"] == 1


def test_handling_that_raises_once_is_retried(tmp_path, open_store, monkeypatch):
    # A bug after the response arrived: in working out the page's outcome.
    store = open_store()
    real = engine_module.page_outcome
    failed: list[str] = []

    def buggy(item, *args, **kwargs):
        if item.url == "http://a.test/bug" and not failed:
            failed.append(item.url)
            raise Bug("a bug of ours in handling")
        return real(item, *args, **kwargs)

    monkeypatch.setattr(engine_module, "page_outcome", buggy)
    web = Web(PAGES, {})
    result, _ = run(tmp_path, store, web)
    assert result.finished
    assert failed == ["http://a.test/bug"]
    assert [state for state, _ in rows(store, "http://a.test/bug")] == ["iErr", "OK"]
    assert url_state(store, "http://a.test/bug") == "done"
    assert result.stats.internal_errors == 1


def test_a_robots_txt_fetch_that_raises_once_is_asked_again(tmp_path, open_store):
    store = open_store()
    web = Web(PAGES, {"http://a.test/robots.txt": 1})
    result, _ = run(tmp_path, store, web, max_failures=1)
    assert result.finished
    assert web.asked.count("http://a.test/robots.txt") == 2
    for url in ("http://a.test/", "http://a.test/bug", "http://a.test/ok"):
        assert [state for state, _ in rows(store, url)] == ["OK"], url
    assert result.stats.internal_errors == 1


def test_a_robots_txt_fetch_that_always_raises_ends_the_crawl(tmp_path, open_store):
    store = open_store()
    web = Web(PAGES, {"http://a.test/robots.txt": ALWAYS})
    result, _ = run(tmp_path, store, web, max_failures=2)
    assert result.finished
    # Once retried as ours, then unreachable (RFC 9309 §2.3.1.4) until given up.
    assert web.asked == ["http://a.test/robots.txt"] * 3
    assert [state for state, _ in rows(store, "http://a.test/")] == ["robots"]
    assert result.stats.internal_errors == 3


def test_the_progress_line_counts_internal_errors_apart(tmp_path, open_store):
    from dustless.crawl.progress import progress_lines

    store = open_store()
    web = Web(PAGES, {"http://a.test/bug": ALWAYS})
    result, _ = run(tmp_path, store, web)
    text = "\n".join(progress_lines(result.stats, time.monotonic(), 1.0, 80))
    assert "internal errors 2, see the log" in text
    assert "errors: none" in text  # not the servers'
