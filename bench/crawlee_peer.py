"""The Crawlee for Python peer of bench/crawl_peers.py: its ParselCrawler, storage in memory.

Crawlee's own defaults otherwise (its HTTP client, its autoscaled pool, its request queue),
with what makes the crawl the same as the others': ``--concurrency`` requests at once, no
retries, robots.txt not fetched (Crawlee's default), links followed from ``<a href>`` on any
host the page links to (``strategy="all"``: the test web links only to its own hosts) to
``--max-depth`` hops, and nothing kept: ``MemoryStorageClient``, no dataset pushed.

Run: ``.venv/bin/python bench/crawlee_peer.py URL… [--max-depth 5] [--concurrency 64]``;
prints one JSON line ``{"pages": N}`` (the requests Crawlee finished).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys


async def crawl(seeds: list[str], depth: int, concurrency: int) -> dict:
    from crawlee import ConcurrencySettings
    from crawlee.crawlers import ParselCrawler, ParselCrawlingContext
    from crawlee.storage_clients import MemoryStorageClient

    crawler = ParselCrawler(
        storage_client=MemoryStorageClient(),
        max_crawl_depth=depth,
        max_request_retries=0,
        concurrency_settings=ConcurrencySettings(
            min_concurrency=concurrency,
            desired_concurrency=concurrency,
            max_concurrency=concurrency,
        ),
        configure_logging=False,
    )

    @crawler.router.default_handler
    async def handler(context: ParselCrawlingContext) -> None:
        await context.enqueue_links(strategy="all")

    stats = await crawler.run(seeds)
    return {"pages": stats.requests_finished, "failed": stats.requests_failed}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seeds", nargs="+")
    ap.add_argument("--max-depth", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=64)
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    print(json.dumps(asyncio.run(crawl(args.seeds, args.max_depth, args.concurrency))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
