"""The lease fence holds right before a request is sent, not only when its task starts.

Many machines: no request starts for a host once 3/4 of its lease's TTL may have passed
since the last renewal was sent (crawl/hosts.py). A task started while the lease was sure
may wait — behind other work of the loop, a robots.txt's rest, DNS — past that moment; it
must then send nothing until a renewal says the host is still ours. A fake monotonic clock
jumps past the fence during the first request; every request is checked against the fence
at the moment it is sent. No sleeps, no sockets: the web is a table, the store PostgreSQL
(only a shared store fences)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

from crawl.test_engine_fakes import table_answer
from dustless.crawl import CrawlConfig, CrawlSetup, build_parts
from dustless.crawl.engine import Crawler
from dustless.fetch import FetchLimits, FetchResult
from dustless.store import PostgresCrawlStore, WarcWriter

TTL = 20.0  # the lease; the fence is 15 s after a renewal


class Clock:
    """Monotonic time that a test can move ahead (a stall, without waiting for it)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self.offset


class Web:
    """Answers every page from a table; notes, for each request, whether the lease of its
    host was sure as it went out; the first request stalls the worker past the fence."""

    def __init__(self, pages: Mapping[str, bytes], clock: Clock) -> None:
        self.pages = dict(pages)
        self.clock = clock
        self.crawler: Crawler | None = None
        self.sent: list[tuple[str, bool]] = []
        self.limits = FetchLimits()

    async def fetch(self, url: str, headers: Mapping[str, str] | None = None) -> FetchResult:
        return await self.fetch_with(url, headers, self.limits)

    async def fetch_with(self, url, headers, limits, *, keep_prefix=False, sink=None):
        assert self.crawler is not None
        host = url.split("/")[2]
        self.sent.append((url, self.crawler.hosts.sure(host, self.clock())))
        if len(self.sent) == 1:
            self.clock.offset += 3 * TTL  # this worker stalls (SIGSTOP, a pause) meanwhile
        return table_answer(url, self.pages.get(url))

    async def close(self) -> None:
        pass


def test_a_task_that_waited_past_the_fence_sends_nothing_until_renewed(tmp_path, pg_db):
    hosts = ("a.test", "b.test", "c.test")
    pages = {f"http://{h}/": f'<a href="/1">{h}</a>'.encode() for h in hosts}
    pages |= {f"http://{h}/1": f"leaf of {h}".encode() for h in hosts}
    clock = Clock()
    web = Web(pages, clock)
    store = PostgresCrawlStore(pg_db, worker="w")
    config = CrawlConfig(
        seeds=tuple(f"http://{h}/" for h in hosts),
        delay=0.0,
        delay_factor=0.0,
        progress=False,
        concurrency=len(hosts),
        lease_ttl=TTL,
    )
    batch = store.start_batch(config.to_json(), time.time())
    warc = WarcWriter(tmp_path / "warc")
    crawler = Crawler(
        build_parts(CrawlSetup(config, store, web, warc, batch, strict=True, clock=clock))
    )
    web.crawler = crawler
    result = asyncio.run(asyncio.wait_for(crawler.run(), timeout=120))
    warc.close()
    assert result.finished
    # Every request went out while its host's lease was sure (the first one stalled the
    # worker: the others, started beside it, waited for a renewal).
    assert [url for url, sure in web.sent if not sure] == []
    assert result.stats.fenced >= 1
    got = dict(store.query("SELECT u.url, f.state FROM fetches f JOIN urls u ON u.id = f.url_id"))
    assert got == dict.fromkeys(pages, "OK")
    store.close()
