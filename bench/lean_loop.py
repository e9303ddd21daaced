"""The lean crawl loop: the least a Python crawler does, the floor dustless is measured against.

asyncio + aiohttp (one session, ``--concurrency`` connections) + lxml link extraction + a
seen-set of absolute URLs without fragments. No robots.txt, no normalization beyond
``urljoin`` and ``urldefrag``, no politeness, no retries, and it stores nothing: each body is
read, parsed for ``<a href>`` and dropped. Links are followed on ``http``/``https`` hosts
given with ``--host`` (all of them when none is given) to ``--max-depth`` hops from a seed
(seeds are depth 0, as ``dustless crawl --max-depth``).

bench/crawl_peers.py runs it as a whole process, pinned to the crawler's core; names
resolve through the system resolver (crawl_peers gives it a private /etc/hosts).
Run: ``.venv/bin/python bench/lean_loop.py URL… [--max-depth 5] [--concurrency 64]``;
it prints one JSON line: ``{"pages": N, "errors": N}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from urllib.parse import urldefrag, urljoin, urlsplit

import aiohttp
import lxml.html


async def crawl(seeds: list[str], depth: int, concurrency: int, hosts: set[str]) -> dict:
    seen = set(seeds)
    queue: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
    for url in seeds:
        queue.put_nowait((url, 0))
    counts = {"pages": 0, "errors": 0}

    def follow(base: str, body: bytes, d: int) -> None:
        try:
            doc = lxml.html.fromstring(body)
        except (ValueError, lxml.etree.ParserError):
            return
        for href in doc.xpath("//a/@href"):
            url = urldefrag(urljoin(base, href.strip())).url
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or (hosts and parts.hostname not in hosts):
                continue
            if url not in seen:
                seen.add(url)
                queue.put_nowait((url, d + 1))

    async def worker(session: aiohttp.ClientSession) -> None:
        while True:
            url, d = await queue.get()
            try:
                async with session.get(url, allow_redirects=False) as resp:
                    body = await resp.read()
                    html = resp.content_type == "text/html"
                counts["pages"] += 1
                if d < depth and html and body:
                    follow(url, body, d)
            except (aiohttp.ClientError, TimeoutError, UnicodeError):
                counts["errors"] += 1
            finally:
                queue.task_done()

    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=0, ttl_dns_cache=None)
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        workers = [asyncio.create_task(worker(session)) for _ in range(concurrency)]
        await queue.join()
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seeds", nargs="+")
    ap.add_argument("--max-depth", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--host", action="append", default=[], help="follow links to this host")
    args = ap.parse_args()
    counts = asyncio.run(crawl(args.seeds, args.max_depth, args.concurrency, set(args.host)))
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
