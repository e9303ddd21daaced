"""Work claimed under a lease that is then lost is never lost with it.

Many machines: a worker stalled past its lease (SIGSTOP, a pause) may find, when its
robots.txt request ends, that another worker took the host over meanwhile. Nothing of the
answer is kept (its new owner asks again) — and the request's slot in this worker's frontier
must be given back all the same. Held, the host stayed "in flight" for ever: the worker's
loop waited for that request to end, so it neither ended nor crawled the host when it leased
it again (found by three workers paused past their lease, issue 24). And URLs left in flight
on a host nobody leases (claimed under a lease that was lost or given up without them) are
counted by no worker's reading of the work left: the crawl must not end with them unfetched.

The other worker is the test itself, acting on the DB as a takeover does (the host's lease
and epoch, its URLs in flight queued again). No sleeps stand for events: the request waits
until the worker's renewal has told it of the loss; the store is PostgreSQL (only a shared
store has leases).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

import psycopg

from crawl.test_engine_fakes import table_answer
from dustless.crawl import CrawlConfig, CrawlSetup, build_parts
from dustless.crawl.engine import Crawler
from dustless.fetch import FetchLimits, FetchResult
from dustless.store import PostgresCrawlStore, WarcWriter

HOST = "a.test"
TTL = 2.0  # renewed every half second: the loss is heard soon
PAGES = {f"http://{HOST}/": b'<a href="/1">one</a>', f"http://{HOST}/1": b"leaf"}


class Web:
    """Answers from ``PAGES``; the first robots.txt request is taken over while out."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.crawler: Crawler | None = None
        self.limits = FetchLimits()
        self.taken_over = False
        self.asked: list[str] = []

    def _sql(self, *statements: str) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            for sql in statements:
                conn.execute(sql, {"host": HOST})

    async def fetch(self, url: str, headers: Mapping[str, str] | None = None) -> FetchResult:
        return await self.fetch_with(url, headers, self.limits)

    async def fetch_with(self, url: str, headers: Any, limits: Any, **_: Any) -> FetchResult:
        assert self.crawler is not None
        self.asked.append(url)
        if url.endswith("/robots.txt") and not self.taken_over:
            self.taken_over = True
            # Another worker takes the host over (``_pg_work._LEASE``): a new epoch, the
            # URLs claimed here queued again.
            self._sql(
                "UPDATE urls SET state = 'queued' WHERE host = %(host)s AND state = 'in-flight'",
                "UPDATE host_work SET owner = 'other', epoch = epoch + 1, "
                "lease_until = extract(epoch FROM now()) + 3600 WHERE host = %(host)s",
            )
            hosts = self.crawler.hosts
            deadline = time.monotonic() + 60
            while hosts.holds(HOST):  # until a renewal has told the worker
                assert time.monotonic() < deadline, "the lost lease was never noticed"
                await asyncio.sleep(0.05)
        return table_answer(url, PAGES.get(url))

    def give_back(self) -> None:
        self._sql("UPDATE host_work SET owner = NULL, lease_until = NULL WHERE host = %(host)s")

    async def close(self) -> None:
        pass


def _crawler(tmp_path: Any, store: PostgresCrawlStore, web: Web) -> tuple[Crawler, WarcWriter]:
    config = CrawlConfig(
        seeds=(f"http://{HOST}/",), delay=0.0, delay_factor=0.0, progress=False, lease_ttl=TTL
    )
    batch = store.start_batch(config.to_json(), time.time())
    warc = WarcWriter(tmp_path / "warc")
    crawler = Crawler(build_parts(CrawlSetup(config, store, web, warc, batch, strict=True)))
    web.crawler = crawler
    return crawler, warc


def _fetched(store: PostgresCrawlStore) -> dict[str, str]:
    return dict(store.query("SELECT u.url, f.state FROM fetches f JOIN urls u ON u.id = f.url_id"))


def test_a_robots_txt_answer_under_a_lost_lease_frees_its_host(tmp_path: Any, pg_db: str) -> None:
    web = Web(pg_db)
    store = PostgresCrawlStore(pg_db, worker="w")
    crawler, warc = _crawler(tmp_path, store, web)
    # The other worker gives the host back once this one has dropped the robots.txt answer
    # (``Batching.lost``): leased again, the host must be crawled here.
    lost = crawler.batching.lost

    def lost_then_given_back(hosts: Any, host: str) -> bool:
        gone = lost(hosts, host)
        if gone:
            web.give_back()
        return gone

    crawler.batching.lost = lost_then_given_back  # type: ignore[method-assign]
    result = asyncio.run(asyncio.wait_for(crawler.run(), timeout=120))
    warc.close()
    assert result.finished
    assert result.stats.lease_lost_drops == 1
    assert _fetched(store) == dict.fromkeys(PAGES, "OK")
    assert web.asked.count(f"http://{HOST}/robots.txt") == 2  # asked again once leased again
    store.close()


def test_urls_left_in_flight_on_a_host_nobody_leases_are_crawled(tmp_path: Any, pg_db: str) -> None:
    orphan = "http://b.test/"
    web = Web(pg_db)
    web.taken_over = True  # no takeover here
    store = PostgresCrawlStore(pg_db, worker="w")
    crawler, warc = _crawler(tmp_path, store, web)
    # What a claim leaves under a lease that was then lost or given up without it: the URL
    # in flight, its host leased by nobody (and so counted as work by no one).
    with psycopg.connect(pg_db, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO urls (url, identity, host, depth, kind, state) "
            "VALUES (%s, %s, 'b.test', 0, 'a', 'queued')",
            (orphan, orphan),
        )
        conn.execute("UPDATE urls SET state = 'in-flight' WHERE url = %s", (orphan,))
    PAGES[orphan] = b"left in flight"
    try:
        result = asyncio.run(asyncio.wait_for(crawler.run(), timeout=120))
    finally:
        del PAGES[orphan]
    warc.close()
    assert result.finished
    assert _fetched(store) == dict.fromkeys([*PAGES, orphan], "OK")
    store.close()
