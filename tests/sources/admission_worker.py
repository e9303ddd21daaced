"""Admit the URLs of N generated sitemap files through the crawl's own path: the engine's
sitemap reader (``crawl/sources.py``) fed 64 KiB chunks of gzip, as the fetcher hands them
on, with the filter, the normalizer, URL-seen and ``Admission`` into a real crawl DB
(SQLite, on disk). Prints the URLs parsed, the URLs queued in the DB, the seconds taken and
the peak RSS (KiB).

Usage: python admission_worker.py DIR FILES URLS_PER_FILE. Run as a subprocess so that the
peak RSS (``VmHWM``) is this work's alone.
"""

from __future__ import annotations

import sys
import time
import zlib
from pathlib import Path

from dustless.crawl._build import discovery_of, fetch_limits, politeness_of
from dustless.crawl.admission import Admission
from dustless.crawl.config import CrawlConfig
from dustless.crawl.hosts import HostTable
from dustless.crawl.progress import RunCounters
from dustless.crawl.sources import Sources, SourceSwitch
from dustless.frontier import QueuedURL
from dustless.kinds import LinkKind
from dustless.store import SQLiteStore
from dustless.url import Normalizer, get_policy

HOST = "site.test"


def sitemap_chunks(n: int, urls: int):
    """One gzip urlset, generated and compressed on the fly (never whole in memory)."""
    comp = zlib.compressobj(6, zlib.DEFLATED, 31)
    yield comp.compress(
        b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    )
    rows = []
    for i in range(urls):
        rows.append(
            f"<url><loc>http://{HOST}/section-{i % 97}/item-{n}-{i}.html?ref=Map</loc>"
            f"<lastmod>2026-01-{1 + i % 28:02d}</lastmod><changefreq>weekly</changefreq></url>\n"
        )
        if len(rows) == 500:
            yield comp.compress("".join(rows).encode())
            rows = []
    yield comp.compress("".join(rows).encode() + b"</urlset>") + comp.flush()


def chunked(pieces, size: int = 65536):
    pending = b""
    for piece in pieces:
        pending += piece
        while len(pending) >= size:
            yield pending[:size]
            pending = pending[size:]
    if pending:
        yield pending


def main(directory: str, files: int, urls: int) -> None:
    config = CrawlConfig(seeds=(f"http://{HOST}/",), sitemaps=True, progress=False)
    store = SQLiteStore(Path(directory))
    batch = store.start_batch(config.to_json(), time.time())
    stats = RunCounters()
    discovery = discovery_of(config, Normalizer(get_policy(config.policy)))
    hosts = HostTable(store, politeness_of(config), agent=config.user_agent)
    admission = Admission(store, discovery, hosts, stats, batch=batch.number, scripted=None)
    sources = Sources(
        store,
        discovery,
        admission,
        hosts,
        stats,
        batch=batch.number,
        default=SourceSwitch(sitemaps=True, feeds=False),
        page_limits=fetch_limits(config),
        depth=config.sitemap_depth,
        max_sitemaps=config.max_sitemaps,
    )
    admission.seed(config.seeds)
    started = time.perf_counter()
    parsed = 0
    for n in range(files):
        item = QueuedURL(
            f"http://{HOST}/sitemap-{n}.xml.gz", HOST, 0, kind=LinkKind.SITEMAP, url_id=n + 1
        )
        reader = sources.reader(item)
        assert reader.wants(200)
        for chunk in chunked(sitemap_chunks(n, urls)):
            if reader.feed(chunk):
                break
        outcome = reader.close()
        assert outcome is not None
        assert outcome.ok, outcome
        assert reader.error is None, reader.error
        parsed += outcome.entries
        sources.write()
        store.commit()
    admission.flush()
    store.commit()
    seconds = time.perf_counter() - started
    queued = stats.discovered  # URLs the DB queued (its verdicts), the seeds left out
    store.close()
    # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across execve, so a child of a big pytest
    # process would report its parent's peak; VmHWM belongs to this process's memory map.
    with open("/proc/self/status") as f:
        peak_kib = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    print(parsed, queued, f"{seconds:.2f}", peak_kib)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
