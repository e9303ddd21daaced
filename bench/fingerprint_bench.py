"""The near-duplicate fingerprint's cost per page, against its peers in the same run.

Pages: the test web's ``clean`` profile (what ``bench/crawl_peers.py`` crawls for its
throughput figure) and the ``field`` profile (longer dynamic and templated pages). For each
page it times:

* ``content_fingerprint`` — visible text, letter-only tokens, 3-word shingles, 128 b-bit
  MinHash values through ``rensa``, from a stored body (a parse of its own);
* the fingerprint as the crawler computes it for every new 2xx HTML document: the visible
  text taken from the tree ``extract_links`` parsed, then the sketch (``extract_links`` with
  ``with_text`` and ``fingerprint_text``, less ``extract_links`` alone);
* the same sketch written in Python (one hash per shingle with ``hashlib.blake2b``, 128
  values by one-permutation hashing), the peer that says why the library is used;
* ``extract_links`` on the same bytes, the crawler's other per-page parse.

With ``--crawl-cpu-ms`` (the crawl's CPU per page that ``bench/crawl_peers.py`` prints) it
prints the fingerprint's share of it (the goal is ≤ 10 %).

    .venv/bin/python bench/fingerprint_bench.py --crawl-cpu-ms 0.61
"""

from __future__ import annotations

import argparse
import hashlib
import time

from dustless.extract import content_fingerprint, extract_links, fingerprint_text
from dustless.extract._fingerprint import _tokens, visible_text
from dustless.testweb import Profile, WebConfig, build_web, render_page


def python_sketch(body: bytes) -> bytes:
    """The peer: the same b-bit MinHash sketch in Python (one-permutation hashing)."""
    words = _tokens(visible_text(body))
    shingles = [" ".join(words[i : i + 3]) for i in range(max(1, len(words) - 2))]
    mins = [1 << 64] * 128
    for s in shingles:
        h = int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), "big")
        b = h & 127
        v = h >> 7
        if v < mins[b]:
            mins[b] = v
    return bytes(m & 0xFF for m in mins)


def _pages(profile: Profile, sites: int, per_site: int) -> list[tuple[str, bytes]]:
    web = build_web(WebConfig(seed=1, sites=sites, pages_per_site=per_site, profile=profile))
    out = []
    for site in web.sites:
        for page in site.pages():
            out.append((page.url, render_page(page, 0, 1)))
    return out


def _time(fn, pages, rounds: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for url, body in pages:
            fn(url, body)
        best = min(best, time.perf_counter() - t)
    return best / len(pages) * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--crawl-cpu-ms", type=float, help="the crawl's CPU ms per page")
    args = ap.parse_args()
    for profile in (Profile.CLEAN, Profile.FIELD):
        pages = _pages(profile, 20, 50)
        size = sum(len(b) for _, b in pages) / len(pages)
        fp = _time(lambda u, b: content_fingerprint(b, "text/html"), pages, args.rounds)
        peer = _time(lambda u, b: python_sketch(b), pages, args.rounds)
        links = _time(lambda u, b: extract_links(b, u, "text/html"), pages, args.rounds)

        def in_crawl(u: str, b: bytes) -> None:
            fingerprint_text(extract_links(b, u, "text/html", with_text=True).text or "")

        crawl = _time(in_crawl, pages, args.rounds) - links
        line = (
            f"{profile.value}: {len(pages)} pages, {size:,.0f} bytes mean; fingerprint in the "
            f"crawl {crawl:.1f} µs/page, from a stored body {fp:.1f} µs; Python sketch "
            f"{peer:.1f} µs ({peer / fp:.1f}× the library); extract_links {links:.1f} µs"
        )
        if args.crawl_cpu_ms:
            line += f"; {crawl / (args.crawl_cpu_ms * 1000):.1%} of the crawl's CPU per page"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
