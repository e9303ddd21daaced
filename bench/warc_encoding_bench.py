"""What storing responses *as received* (gzip, with Content-Encoding) would cost against
storing them *decoded* (what dustless does), and what the CDXJ index costs per record.

Pages: the clean test web's (seed 1), each gzip-encoded at level 6 as a server would send it.
Both ways the crawler inflates every body (links are extracted from decoded HTML), so that
cost is common and not counted. Timed: writing the WARC records (per-record deflate + digests).
"as received" also needs the SHA-1 of the decoded body (the content identity) on top of the
WARC payload digest of the encoded bytes. Then ``CdxjIndex.sync`` over the decoded WARC:
the per-record cost of keeping the index in step.

Run: ``.venv/bin/python bench/warc_encoding_bench.py [PAGES]``.
"""

from __future__ import annotations

import gzip
import hashlib
import sys
import tempfile
import time
import zlib
from pathlib import Path

from dustless.store import CdxjIndex, WarcWriter
from dustless.testweb import WebConfig
from dustless.testweb._core import Profile
from dustless.testweb._html import render_page
from dustless.testweb._web import build_web

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"


def pages(n: int) -> list[tuple[str, bytes]]:
    web = build_web(WebConfig(profile=Profile.CLEAN, sites=max(1, n // 100), pages_per_site=100))
    out = [(p.url, render_page(p, 0)) for s in web.sites for p in s.pages()]
    return out[:n]


def write(d: Path, items: list[tuple[str, bytes, bytes]], encoded: bool) -> tuple[float, int]:
    t = time.perf_counter()
    with WarcWriter(d, compress_level=6) as w:
        for url, body, wire in items:
            if encoded:
                hashlib.sha1(body).digest()  # the content identity, still of the decoded body
                head = HEAD + b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(wire)
                w.write_response(url, head, wire, fetched_at=1e9)
            else:
                w.write_response(url, HEAD + b"\r\n", body, fetched_at=1e9)
    return time.perf_counter() - t, sum(p.stat().st_size for p in d.iterdir())


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    items = [(u, b, gzip.compress(b, 6)) for u, b in pages(n)]
    raw = sum(len(b) for _, b, _ in items)
    wire = sum(len(g) for _, _, g in items)
    print(f"{len(items)} pages, {raw / len(items):.0f} B decoded, {wire / len(items):.0f} B gzip")
    with tempfile.TemporaryDirectory() as tmp:
        t_dec, s_dec = write(Path(tmp) / "decoded", items, False)
        t_enc, s_enc = write(Path(tmp) / "encoded", items, True)
        print(f"decoded:     {t_dec / len(items) * 1e6:6.1f} us/page, {s_dec / 1e6:6.2f} MB")
        print(f"as received: {t_enc / len(items) * 1e6:6.1f} us/page, {s_enc / 1e6:6.2f} MB")
        print(f"as received / decoded: time {t_enc / t_dec:.2f}x, size {s_enc / s_dec:.2f}x")
        index = CdxjIndex(Path(tmp) / "indexes", Path(tmp) / "decoded")
        t = time.perf_counter()
        lines = index.sync()
        t_idx = time.perf_counter() - t
        print(
            f"CdxjIndex.sync: {t_idx / lines * 1e6:.1f} us/record ({lines} records), "
            f"{t_idx / t_dec:.2f}x the WARC writing"
        )
    deflate(items)


def deflate(items: list[tuple[str, bytes, bytes]]) -> None:
    """The writer's compressor against zlib's level 6 (what warcio, wget and Heritrix
    write): one raw-deflate stream cut per record with a full flush, as the writer did, and
    one ISA-L call per record ending its stream, as the writer does now."""
    from dustless.store._warc import _deflater, _isal, _isal_level

    blocks = [HEAD + b"\r\n" + body for _, body, _ in items]
    raw = sum(len(b) for b in blocks)
    got = {}
    for name, make in (("zlib level 6", lambda: zlib.compressobj(6, zlib.DEFLATED, -15)),
                       ("dustless (level 6)", lambda: _deflater(6))):  # fmt: skip
        best, size = float("inf"), 0
        for _ in range(3):
            c = make()
            t = time.perf_counter()
            size = sum(len(c.compress(b)) + len(c.flush(zlib.Z_FULL_FLUSH)) for b in blocks)
            best = min(best, time.perf_counter() - t)
        got[name] = best
        print(f"{name:19} {best / len(blocks) * 1e6:5.1f} us/record, ratio {size / raw:.3f}")
    level = _isal_level(6)
    if _isal is not None and level is not None:
        best, size = float("inf"), 0
        for _ in range(3):
            t = time.perf_counter()
            size = sum(len(_isal.compress(b, level, -15)) for b in blocks)
            best = min(best, time.perf_counter() - t)
        got["one call"] = best
        print(f"{'one call a record':19} {best / len(blocks) * 1e6:5.1f} us/record, "
              f"ratio {size / raw:.3f}")  # fmt: skip
    print(f"deflate: dustless {got['zlib level 6'] / got['dustless (level 6)']:.2f}x zlib's speed")


if __name__ == "__main__":
    main()
