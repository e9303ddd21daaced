"""CPU per page of what the crawl does with a fetched page (issue 28), by stage.

Over the pages of the ``clean`` test web (50 sites × 100 pages, rendered in-process), or the
HTML response records of a crawl's WARC files, runs in one process the work the engine asks
of ``crawl.page.page_outcome``, by stage:

* ``page_outcome``: the whole of it (parse, links, canonical, main text, fingerprint,
  discovery's filter/normalizer/scope), with a fresh ``Discovery`` each round, as a new
  crawl has (its caches of settled strings fill during the round, as the crawl's do);
* ``extract``: ``extract_links`` alone (decode, parse, links resolved), without text;
* ``main``: the main-content text of the page (``extract.main_text``: parse and walk);
* ``fingerprint``: ``fingerprint_text`` of that text (shingles and MinHash);
* ``discover``: ``Discovery.links`` of the page's links;
* ``peer``: what a bare crawl loop does with a page: lxml parses it and every link is
  joined to the page's URL (``urllib.parse.urljoin``), nothing else. The ratio printed
  is page_outcome's CPU over the peer's.

Times are CPU (``time.process_time``), best of ``--rounds``; the machine is shared, so
compare two trees by running this twice, interleaved (``PYTHONPATH=OTHER/src``), or under
``valgrind --tool=callgrind`` with ``--rounds 1`` (instruction counts are repeatable).

    .venv/bin/python -m dustless testweb --port 0 --profile clean --sites 50 \
        --pages-per-site 100                      # prints "serving ADDR" and the seeds
    .venv/bin/python -m dustless crawl SEEDS --out /tmp/tw --resolve '*.test:127.0.0.1' \
        --delay 0 --delay-factor 0 --concurrency 64 --quiet --max-depth 5 --policy standard
    .venv/bin/python bench/page_cpu_bench.py [/tmp/tw/warc/*.warc.gz] [--rounds 5] [--profile]
    .venv/bin/python bench/page_cpu_bench.py --html ~/.cache/dustless/realweb/git-doc/root

Without WARC files it renders the test web's pages itself (``make bench`` runs it so).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urljoin

import lxml.html
from warcio.archiveiterator import ArchiveIterator

from dustless.crawl.discover import Candidate, Discovery
from dustless.crawl.filter import UrlFilter
from dustless.crawl.page import page_outcome
from dustless.crawl.record import Stored
from dustless.crawl.soft404 import Soft404Hosts
from dustless.extract import extract_links, fingerprint_text, main_text
from dustless.fetch import FetchResult
from dustless.frontier import QueuedURL
from dustless.states import NetState
from dustless.testweb import Profile, WebConfig, build_web, render_page
from dustless.url import Normalizer, authority_of

SORT = __import__("os").environ.get("SORT", "tottime")
Page = tuple[str, str, bytes]  # url, Content-Type, body


def rendered() -> list[Page]:
    web = build_web(WebConfig(seed=1, sites=50, pages_per_site=100, profile=Profile.CLEAN))
    ctype = "text/html; charset=utf-8"
    return [(p.url, ctype, render_page(p, 0)) for p in web.pages_by_rid.values()]


def load(paths: list[Path]) -> list[Page]:
    pages: list[Page] = []
    for path in paths:
        with path.open("rb") as f:
            for rec in ArchiveIterator(f):
                if rec.rec_type != "response" or rec.http_headers is None:
                    continue
                ctype = rec.http_headers.get_header("Content-Type") or ""
                if not ctype.startswith("text/html"):
                    continue
                url = rec.rec_headers.get_header("WARC-Target-URI")
                pages.append((url, ctype, rec.content_stream().read()))
    return pages


def html_files(root: Path, limit: int) -> list[Page]:
    """The ``*.html`` files under ``root`` (e.g. a real documentation package, as
    bench/realdocs_peers.py serves them), as pages of ``http://docs.test/``."""
    pages: list[Page] = []
    for path in sorted(root.rglob("*.html"))[:limit]:
        url = "http://docs.test/" + path.relative_to(root).as_posix()
        pages.append((url, "text/html; charset=utf-8", path.read_bytes()))
    return pages


def settle(discovery: Discovery, cands: list[Candidate]) -> None:
    # What admission does once the crawl DB stored them (crawl/admission.py): a URL string
    # whose fate is settled skips filter and normalizer on the next page that links it.
    for c in cands:
        discovery.settle_one(c.url, c.site)
        if c.external:
            discovery.settle_seed(c.url)


def _outcomes(pages: list[Page]) -> Callable[[], None]:
    items = []
    for i, (url, ctype, body) in enumerate(pages):
        item = QueuedURL(url, authority_of(url), 1, seed_id=1, url_id=i + 1)
        r = FetchResult(url, NetState.OK, 200, (("content-type", ctype),), body, mime="text/html")
        items.append((item, r, Stored(f"{i:040x}", None, None, None, False)))

    def run() -> None:
        discovery = Discovery(UrlFilter(), Normalizer("standard"))
        soft404 = Soft404Hosts()
        for item, r, stored in items:
            out = page_outcome(
                item,
                r,
                NetState.OK,
                stored,
                started=0.0,
                batch=1,
                discovery=discovery,
                scripted=None,
                soft404=soft404,
            )
            settle(discovery, out.links)

    return run


def site_of_host(url: str) -> str:
    return Discovery(UrlFilter(), Normalizer("standard")).site_of_host(authority_of(url))


def _stages(pages: list[Page]) -> dict[str, Callable[[], None]]:
    extractions = [extract_links(b, u, c, anchor_text=False) for u, c, b in pages]
    texts = [main_text(b, c) for _u, c, b in pages]
    found = [[(link.url, link.kind) for link in e.links] for e in extractions]
    sites = [site_of_host(u) for u, _c, _b in pages]

    def extract() -> None:
        for u, c, b in pages:
            extract_links(b, u, c, anchor_text=False)

    def main() -> None:
        for _u, c, b in pages:
            main_text(b, c)

    def fingerprint() -> None:
        for t in texts:
            fingerprint_text(t)

    def discover() -> None:
        d = Discovery(UrlFilter(), Normalizer("standard"))
        for f, site in zip(found, sites, strict=True):
            settle(d, d.links(f, depth=1, seed_id=1, party_site=site))

    def peer() -> None:
        for u, _c, b in pages:
            for _el, _attr, link, _pos in lxml.html.fromstring(b).iterlinks():
                urljoin(u, link)

    return {
        "page_outcome": _outcomes(pages),
        "extract": extract,
        "main": main,
        "fingerprint": fingerprint,
        "discover": discover,
        "peer": peer,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("warc", nargs="*", type=Path, help="a crawl's WARC files (default: render)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--html",
        type=Path,
        help="read the *.html files under this directory instead (real documentation: "
        "~/.cache/dustless/realweb/postgresql-doc-15/root)",
    )
    ap.add_argument("--limit", type=int, default=5000, help="at most this many --html pages")
    ap.add_argument("--only", help="one stage (page_outcome, extract, main, …)")
    ap.add_argument("--profile", action="store_true", help="cProfile one round of it")
    args = ap.parse_args()
    if args.html:
        pages = html_files(args.html, args.limit)
    else:
        pages = load(args.warc) if args.warc else rendered()
    stages = _stages(pages)
    if args.only:
        stages = {args.only: stages[args.only]}
    if args.profile:
        prof = cProfile.Profile()
        for fn in stages.values():
            prof.runcall(fn)
        pstats.Stats(prof).sort_stats(SORT).print_stats(40)
        return
    print(f"{len(pages)} HTML pages; CPU µs per page, best of {args.rounds}")
    bests: dict[str, float] = {}
    for name, fn in stages.items():
        best = float("inf")
        for _ in range(args.rounds):
            t0 = time.process_time()
            fn()
            best = min(best, time.process_time() - t0)
        bests[name] = best
        print(f"{name:>14} {best / len(pages) * 1e6:8.1f}")
    if "page_outcome" in bests and "peer" in bests:
        print(f"page_outcome / peer: {bests['page_outcome'] / bests['peer']:.2f}")


if __name__ == "__main__":
    main()
