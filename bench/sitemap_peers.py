"""Sitemap URLs admitted per second, against ultimate-sitemap-parser on the same files.

Both read the same 25 generated urlsets (40,000 URLs each, as bytes in memory, so no I/O
is timed). dustless: ``SitemapParser`` fed 64 KiB chunks, each URL normalized (``standard``)
and put through a Bloom URL-seen filter — what admission does. The peer:
``usp.tree.sitemap_from_str`` on the decoded text, then iterating its pages (parsing only:
its figure is an upper bound for what admission would cost on top of it).

Run: ``make bench`` or ``.venv/bin/python bench/sitemap_peers.py [FILES] [URLS]``.
"""

from __future__ import annotations

import logging
import sys
import time

from rbloom import Bloom

from dustless.sources import SitemapParser
from dustless.url import Normalizer, get_policy


def make_files(files: int, urls: int) -> list[bytes]:
    out = []
    for n in range(files):
        rows = "".join(
            f"<url><loc>http://site{n % 7}.test/section-{i % 97}/item-{n}-{i}.html</loc>"
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
    n3, t3 = timed(peer, files)
    assert n1 == n2 == n3 == total, (n1, n2, n3)
    print(f"dustless parse only        {total / t1:12,.0f} URLs/s  ({t1:.2f} s)")
    print(f"dustless parse + admission {total / t2:12,.0f} URLs/s  ({t2:.2f} s)")
    print(f"ultimate-sitemap-parser    {total / t3:12,.0f} URLs/s  ({t3:.2f} s)")
    print(f"ratio parse: {t3 / t1:.2f}x; admission vs the peer's parse: {t3 / t2:.2f}x")


if __name__ == "__main__":
    main()
