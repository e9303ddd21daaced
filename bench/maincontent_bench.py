"""The main-content step's cost per page, against the whole visible text and boilerplate libraries.

The fingerprint hashes the text of a page's main content (``extract._maincontent``: one
walk of the tree extraction parsed). For each set of pages it prints µs per page of:

* ``parse``: selectolax (Lexbor) parsing the decoded page (the crawl does it once anyway);
* ``visible``: the whole visible text from that tree (what the fingerprint read before);
* ``main``: the main content's text from that tree (what it reads now);
* ``fingerprint``: ``content_fingerprint`` from the bytes (decode, parse, main text, sketch);
* peers, when installed (they are not dependencies): trafilatura ``extract``, jusText
  ``justext`` and readability-lxml ``Document.summary`` on the same bytes.

Pages: the ``real`` test web's documents in their ordinary, print, mobile and AMP templates
(3–10 KB), and Debian's documentation as installed or downloaded for the test web
(libxml2's HTML pages, PostgreSQL 15's, 5–60 KB).

    .venv/bin/python bench/maincontent_bench.py [--rounds 3] [--peers]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

from dustless.extract import content_fingerprint
from dustless.extract._maincontent import main_text
from dustless.extract._visible import all_text
from dustless.testweb import Profile, WebConfig, build_web
from dustless.testweb._corpus import load_corpus


def _real_web_pages() -> list[bytes]:
    web = build_web(WebConfig(seed=1, sites=6, pages_per_site=40, profile=Profile.REAL))
    out: list[bytes] = []
    for site in web.sites:
        plan = getattr(site, "plan", None)
        for doc in getattr(plan, "docs", ()):
            path = site.primary_path(doc)  # type: ignore[attr-defined]
            asks = [(site.host, path, "")]
            if plan.print_mode == "param":
                asks.append((site.host, path, plan.print_param))
            if plan.mobile_mode == "host":
                asks.append(("m." + site.host, path, ""))
            if plan.amp_mode == "path":
                asks.append((site.host, "/amp" + path, ""))
            for host, p, q in asks:
                outcome = site.route(host, p, q)
                if outcome.render is not None:
                    out.append(outcome.render(0))
    return out


def _doc_pages(root: Path, limit: int) -> list[bytes]:
    files = sorted(root.glob("*.html"))[:limit] if root.is_dir() else []
    return [f.read_bytes() for f in files]


def _time(fn: Callable[[bytes], object], pages: list[bytes], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for body in pages:
            fn(body)
        best = min(best, time.perf_counter() - t)
    return best / len(pages) * 1e6


def _peers() -> dict[str, Callable[[bytes], object]]:
    out: dict[str, Callable[[bytes], object]] = {}
    try:
        import trafilatura

        out["trafilatura"] = lambda b: trafilatura.extract(b.decode("utf-8", "replace"))
    except ImportError:
        pass
    try:
        import justext

        stop = justext.get_stoplist("English")
        out["justext"] = lambda b: justext.justext(b, stop)
    except ImportError:
        pass
    try:
        from readability import Document

        out["readability"] = lambda b: Document(b.decode("utf-8", "replace")).summary()
    except ImportError:
        pass
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=int, default=300, help="pages per documentation package")
    ap.add_argument("--peers", action="store_true", help="time the libraries too")
    args = ap.parse_args()
    roots = load_corpus().roots  # where the test web found each package's pages
    sets = {"real test web": _real_web_pages()}
    for package in ("libxml2-doc", "postgresql-doc-15"):
        sets[package] = _doc_pages(roots.get(package, Path("/nonexistent")), args.limit)
    peers = _peers() if args.peers else {}
    for name, pages in sets.items():
        if not pages:
            print(f"{name}: no pages here")
            continue
        texts = [b.decode("utf-8", "replace") for b in pages]
        size = sum(map(len, pages)) / len(pages)
        parse = _time(lambda b: LexborHTMLParser(b), pages, args.rounds)
        best_visible = best_main = float("inf")
        for _ in range(args.rounds):
            for reader in (all_text, main_text):  # a fresh tree each: all_text strips it
                parsers = [LexborHTMLParser(t) for t in texts]
                t0 = time.perf_counter()
                for p in parsers:
                    if reader is all_text:
                        all_text(p, "<script")
                    else:
                        main_text(p)
                cost = (time.perf_counter() - t0) / len(pages) * 1e6
                if reader is all_text:
                    best_visible = min(best_visible, cost)
                else:
                    best_main = min(best_main, cost)
        fp = _time(lambda b: content_fingerprint(b, "text/html"), pages, args.rounds)
        line = (
            f"{name}: {len(pages)} pages, {size / 1000:.1f} KB mean; parse {parse:.0f} µs/page, "
            f"visible text {best_visible:.0f} µs, main content {best_main:.0f} µs "
            f"({best_main / best_visible:.1f}× visible), content_fingerprint {fp:.0f} µs"
        )
        for peer, fn in peers.items():
            cost = _time(fn, pages, 1)
            line += f"; {peer} {cost:,.0f} µs ({cost / best_main:.0f}× main content)"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
