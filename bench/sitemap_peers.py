"""Sitemap URLs admitted per second, against ultimate-sitemap-parser on the same files.

All read the same generated urlsets (25 x 40,000 URLs by default, as bytes in memory, so no
network is timed). dustless, three ways:

* ``parse``: ``SitemapParser`` fed 64 KiB chunks;
* ``parse + Bloom``: each URL also normalized (``standard``) and put through a Bloom
  URL-seen filter, the cheapest admission there is;
* ``crawl admission``: the crawl's own path — the engine's sitemap reader
  (``crawl/sources.py``: the cross-host rules, the rfc3986 form), ``Discovery.links`` (the
  filter, the normalizer, the party), ``Admission`` and the crawl DB's URL-seen and limits
  (SQLite on disk, a commit per file), lastmod and changefreq stored per URL. What
  ``dustless crawl --sitemaps`` does with each entry, less the fetching.

The peer: ``usp.tree.sitemap_from_str`` on the decoded text, then iterating its pages
(parsing only: its figure is an upper bound for what admission would cost on top of it).

Run: ``make bench`` or ``.venv/bin/python bench/sitemap_peers.py [FILES] [URLS]``.
"""

from __future__ import annotations

import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path

from rbloom import Bloom

from dustless.sources import SitemapParser
from dustless.url import Normalizer, get_policy

HOST = "site.test"


def make_files(files: int, urls: int) -> list[bytes]:
    out = []
    for n in range(files):
        rows = "".join(
            f"<url><loc>http://{HOST}/section-{i % 97}/item-{n}-{i}.html</loc>"
            f"<lastmod>2026-01-{1 + i % 28:02d}</lastmod><changefreq>weekly</changefreq>"
            f"<priority>0.5</priority></url>\n"
            for i in range(urls)
        )
        out.append(
            (
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
                f"{rows}</urlset>\n"
            ).encode()
        )
    return out


def ours(files: list[bytes], admit: bool) -> int:
    normalizer = Normalizer(get_policy("standard"))
    seen = Bloom(sum(f.count(b"<url>") for f in files) + 1, 0.001)
    n = 0
    for data in files:
        parser = SitemapParser()
        for i in range(0, len(data), 65536):
            for e in parser.feed(data[i : i + 65536]):
                n += 1
                if admit:
                    identity = normalizer.normalize(e.url)
                    if identity not in seen:
                        seen.add(identity)
        parser.close()
    return n


def crawl_admission(files: list[bytes]) -> int:
    """The crawl's admission path into a fresh crawl DB; returns the URLs it queued."""
    from dustless.crawl._build import discovery_of, fetch_limits, politeness_of
    from dustless.crawl.admission import Admission
    from dustless.crawl.config import CrawlConfig
    from dustless.crawl.hosts import HostTable
    from dustless.crawl.progress import RunCounters
    from dustless.crawl.sources import Sources, SourceSwitch
    from dustless.frontier import QueuedURL
    from dustless.kinds import LinkKind
    from dustless.store import SQLiteStore

    directory = Path(tempfile.mkdtemp(prefix="sitemap-bench-"))
    try:
        config = CrawlConfig(seeds=(f"http://{HOST}/",), sitemaps=True, progress=False)
        store = SQLiteStore(directory)
        batch = store.start_batch(config.to_json(), time.time()).number
        stats = RunCounters()
        discovery = discovery_of(config, Normalizer(get_policy(config.policy)))
        hosts = HostTable(store, politeness_of(config), agent=config.user_agent)
        admission = Admission(store, discovery, hosts, stats, batch=batch, scripted=None)
        sources = Sources(
            store,
            discovery,
            admission,
            hosts,
            stats,
            batch=batch,
            default=SourceSwitch(sitemaps=True, feeds=False),
            page_limits=fetch_limits(config),
            depth=config.sitemap_depth,
            max_sitemaps=config.max_sitemaps,
        )
        admission.seed(config.seeds)
        for n, data in enumerate(files):
            item = QueuedURL(
                f"http://{HOST}/sitemap-{n}.xml", HOST, 0, kind=LinkKind.SITEMAP, url_id=n + 1
            )
            reader = sources.reader(item)
            reader.wants(200)
            for i in range(0, len(data), 65536):
                if reader.feed(data[i : i + 65536]):
                    break
            outcome = reader.close()
            if outcome is None or not outcome.ok or reader.error is not None:
                raise SystemExit(f"sitemap {n}: {outcome} {reader.error!r}")
            sources.write()
            store.commit()
        admission.flush()
        store.close()
        return stats.discovered
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def peer(files: list[bytes]) -> int:
    from usp.tree import sitemap_from_str

    n = 0
    for data in files:
        sitemap = sitemap_from_str(data.decode("utf-8"))
        n += sum(1 for _ in sitemap.all_pages())
    return n


def timed(fn, *args) -> tuple[int, float]:
    t = time.perf_counter()
    n = fn(*args)
    return n, time.perf_counter() - t


def main() -> None:
    files_n = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    urls = int(sys.argv[2]) if len(sys.argv) > 2 else 40_000
    logging.disable(logging.WARNING)  # usp logs every sitemap it parses
    files = make_files(files_n, urls)
    total = files_n * urls
    mb = sum(map(len, files)) / 1e6
    print(f"{files_n} urlsets x {urls:,} URLs = {total:,} URLs, {mb:.0f} MB")
    n1, t1 = timed(ours, files, False)
    n2, t2 = timed(ours, files, True)
    n4, t4 = timed(crawl_admission, files)
    n3, t3 = timed(peer, files)
    assert n1 == n2 == n3 == n4 == total, (n1, n2, n3, n4)
    print(f"dustless parse only             {total / t1:12,.0f} URLs/s  ({t1:.2f} s)")
    print(f"dustless parse + Bloom          {total / t2:12,.0f} URLs/s  ({t2:.2f} s)")
    print(f"dustless crawl admission (DB)   {total / t4:12,.0f} URLs/s  ({t4:.2f} s)")
    print(f"ultimate-sitemap-parser (parse) {total / t3:12,.0f} URLs/s  ({t3:.2f} s)")
    print(
        f"ratio to the peer's parse: parse {t3 / t1:.2f}x, parse + Bloom {t3 / t2:.2f}x, "
        f"crawl admission {t3 / t4:.2f}x"
    )


if __name__ == "__main__":
    main()
