"""The CPU a request costs the client: dustless's fetcher against aiohttp's client.

The crawler's fetcher speaks HTTP/1.1 over its own kept-alive connections
(``src/dustless/fetch/_http.py``: llhttp through httptools, asyncio sockets). This measures
why: the same requests, in the same run, through

* ``dustless``: ``Fetcher.fetch`` — the whole fetch, with its DNS cache, address policy,
  limits, state machine and the raw request and head kept for the WARC records;
* ``aiohttp``: a bare ``ClientSession.get`` and ``read()`` (no cookies, no decompression), the
  client the fetcher used before.

The test web (``clean`` profile) serves on one core, the clients run on the other, each with
64 requests in flight over 50 hosts; CPU time is the client process's own. Run:
``.venv/bin/python bench/http_client_bench.py [--requests N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import uvloop

sys.path.insert(0, str(Path(__file__).parent))
from crawl_peers import CRAWLER_CPU, Server, pin
from dustless.fetch import AddressPolicy, Fetcher, FetchLimits, Resolver, parse_resolve

CONCURRENCY = 64


async def _many(n: int, one: Callable[[int], Awaitable[None]]) -> None:
    slots = asyncio.Semaphore(CONCURRENCY)

    async def run(i: int) -> None:
        async with slots:
            await one(i)

    await asyncio.gather(*(run(i) for i in range(n)))


async def dustless_requests(server: Server, n: int) -> None:
    overrides = dict(parse_resolve(r) for r in server.resolve[1::2])
    fetcher = Fetcher(Resolver(overrides), FetchLimits(), AddressPolicy())
    seeds = server.seeds

    async def one(i: int) -> None:
        result = await fetcher.fetch(seeds[i % len(seeds)])
        if not result.body:
            raise SystemExit(f"dustless: no body from {result.url}: {result.state} {result.error}")

    try:
        await _many(n, one)
    finally:
        await fetcher.close()


async def aiohttp_requests(server: Server, n: int) -> None:
    hosts = [s.split("/")[2] for s in server.seeds]
    url = f"http://{server.address}:{server.port}/"
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=100),
        cookie_jar=aiohttp.DummyCookieJar(),
        auto_decompress=False,
    ) as session:

        async def one(i: int) -> None:
            async with session.get(url, headers={"Host": hosts[i % len(hosts)]}) as resp:
                if not await resp.read():
                    raise SystemExit("aiohttp: no body")

        await _many(n, one)


def measure(name: str, run: Callable[[], Awaitable[None]], n: int) -> float:
    cpu, wall = time.process_time(), time.perf_counter()
    uvloop.run(run())
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    per = cpu / n * 1e6
    print(f"  {name:9s} {per:6.1f} µs CPU a request, {n / wall:8,.0f} requests/s")
    return per


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=20_000)
    args = ap.parse_args()
    n = args.requests
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp), profile="clean", sites=50, pages=400, extra=[])
        try:
            pin(os.getpid(), CRAWLER_CPU)
            print(f"http_client_bench: {n:,} GETs, {CONCURRENCY} in flight, 50 hosts")
            ours = min(
                measure("dustless", lambda: dustless_requests(server, n), n),
                measure("dustless", lambda: dustless_requests(server, n), n),
            )
            theirs = min(
                measure("aiohttp", lambda: aiohttp_requests(server, n), n),
                measure("aiohttp", lambda: aiohttp_requests(server, n), n),
            )
        finally:
            server.stop()
    print(f"  ratio: aiohttp's client costs {theirs / ours:.1f}x the CPU of dustless's fetch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
