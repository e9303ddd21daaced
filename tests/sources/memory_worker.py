"""Parse N sitemap files of generated URLs (gzip, fed in 64 KiB chunks), normalize each URL
and add it to a Bloom URL-seen filter, as admission does; print the count and peak RSS.

Usage: python memory_worker.py FILES URLS_PER_FILE. Run as a subprocess so that the peak
RSS (``ru_maxrss``) is this work's alone.
"""

from __future__ import annotations

import sys
import zlib

from rbloom import Bloom

from dustless.sources import SitemapParser
from dustless.url import Normalizer, get_policy


def sitemap_chunks(n: int, urls: int):
    """One gzip urlset, generated and compressed on the fly (never whole in memory)."""
    comp = zlib.compressobj(6, zlib.DEFLATED, 31)
    yield comp.compress(
        b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    )
    rows = []
    for i in range(urls):
        rows.append(
            f"<url><loc>http://site{n % 7}.test/section-{i % 97}/item-{n}-{i}.html?ref=Map</loc>"
            f"<lastmod>2026-01-{1 + i % 28:02d}</lastmod><changefreq>weekly</changefreq></url>\n"
        )
        if len(rows) == 500:
            yield comp.compress("".join(rows).encode())
            rows = []
    yield comp.compress("".join(rows).encode() + b"</urlset>") + comp.flush()


def main(files: int, urls: int) -> None:
    normalizer = Normalizer(get_policy("standard"))
    seen = Bloom(files * urls, 0.001)
    admitted = parsed = 0
    for n in range(files):
        parser = SitemapParser()
        pending = b""
        for piece in sitemap_chunks(n, urls):
            pending += piece
            while len(pending) >= 65536:
                chunk, pending = pending[:65536], pending[65536:]
                for e in parser.feed(chunk):
                    identity = normalizer.normalize(e.url)
                    if identity not in seen:
                        seen.add(identity)
                        admitted += 1
        for e in parser.feed(pending):
            identity = normalizer.normalize(e.url)
            if identity not in seen:
                seen.add(identity)
                admitted += 1
        outcome = parser.close()
        assert outcome.ok, outcome
        assert not parser.tail
        parsed += outcome.entries
    # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across execve, so a child of a big pytest
    # process would report its parent's peak; VmHWM belongs to this process's memory map.
    with open("/proc/self/status") as f:
        peak_kib = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    # A Bloom "maybe" (0.1%) would be checked against the DB's unique index in the crawl.
    print(parsed, admitted, peak_kib)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
