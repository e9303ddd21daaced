"""How many duplicate documents ``crawl --learn`` still fetches on the ``real`` test web.

For each seed: start ``dustless testweb --profile real``, crawl it with ``--policy standard``
and with ``--policy standard --learn``, and count by the truth (its ``doc`` rows) the
resources each crawl reached and the duplicate documents it fetched (fetches of a resource
already fetched). Prints one line per seed, then the median and the worst seed (the highest
learn/standard share of duplicates): the baseline the learner's work is judged by. A seed is
replayed with ``dustless testweb --profile real --seed N --sites K --pages-per-site M``.

    .venv/bin/python bench/learn_realweb.py [SEEDS=5] [--first 1] [--sites 5] [--pages-per-site 500]
        [--no-scrapy] [--jobs 1]

The issue's figure (20 seeds, two at a time on a two-core machine, ~30 min idle)::

    .venv/bin/python bench/learn_realweb.py 20 --sites 2 --pages-per-site 500 --no-scrapy --jobs 2

Then, over all seeds, the remaining duplicates by kind: each duplicate fetch classified by how
its URL differs from the URL its resource was first fetched at (another host, a path
parameter ``;name=value``, the query's parameter names, a leading path prefix such as
``/amp/``, a query form of the path such as ``/index.php?page=…``), for the standard crawl,
the learning one and Scrapy (run on the same web in the same run, as ``bench/crawl_peers.py``
runs it; ``make bench`` installs it; ``--no-scrapy`` skips it). And the CPU each crawl took
per fetch (the crawl processes' user + system time): the learner's share is the learning
crawl's CPU per fetch beyond that of a crawl given its learned rules from the first page.

Everything runs on 127.0.0.1 through the ``dustless`` command, as a user would run it.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

DUSTLESS = [sys.executable, "-m", "dustless"]


def _serve(
    seed: int, args: argparse.Namespace, truth: Path
) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [*DUSTLESS, "testweb", "--profile", "real", "--port", "0", "--seed", str(seed),
         "--sites", str(args.sites), "--pages-per-site", str(args.pages_per_site),
         "--truth", str(truth)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if not first.startswith("serving "):
        proc.kill()
        raise SystemExit(f"seed {seed}: the test web did not start: {first!r}")
    seeds: list[str] = []
    while len(seeds) < args.sites:
        word, _, value = proc.stdout.readline().strip().partition(" ")
        if word == "seed":
            seeds.append(value)
    return proc, seeds


def _run(argv: list[str]) -> float:
    """Run ``argv`` to its end; its CPU seconds (user + system, from its own rusage: exact
    while other seeds' processes run beside it, ``--jobs``)."""
    proc = subprocess.Popen(argv)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, argv)
    return usage.ru_utime + usage.ru_stime


def _crawl(seeds: list[str], out: Path, *extra: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one crawl."""
    start = time.monotonic()
    cpu = _run(
        [*DUSTLESS, "crawl", *seeds, "--out", str(out), "--policy", "standard",
         "--resolve", "*.test:127.0.0.1", "--delay", "0.01", "--delay-factor", "0",
         "--quiet", *extra],
    )  # fmt: skip
    return time.monotonic() - start, cpu


# Scrapy as bench/crawl_peers.py runs it (its own URL fingerprint dedups requests), writing
# the URLs of its 2xx responses in the order they came.
SCRAPY_SPIDER = textwrap.dedent(
    """
    import json, socket, sys

    _real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kw):  # like --resolve '*.test:127.0.0.1'
        if isinstance(host, str) and host.endswith(".test"):
            host = "127.0.0.1"
        return _real(host, *args, **kw)

    _real_byname = socket.gethostbyname

    def gethostbyname(host):
        return "127.0.0.1" if host.endswith(".test") else _real_byname(host)

    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname

    import scrapy
    from scrapy.crawler import CrawlerProcess
    from scrapy.linkextractors import LinkExtractor

    seeds, limit, out = json.loads(sys.argv[1])
    got = []

    class Peer(scrapy.Spider):
        name = "peer"
        allowed_domains = ["test"]
        start_urls = seeds
        links = LinkExtractor()

        def parse(self, response):
            if 200 <= response.status < 300:
                got.append(response.url)
            if not hasattr(response, "text"):
                return
            for link in self.links.extract_links(response):
                yield response.follow(link.url, callback=self.parse)

    process = CrawlerProcess(settings={
        "CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 16, "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": False, "ROBOTSTXT_OBEY": True, "DEPTH_LIMIT": 50,
        "CLOSESPIDER_PAGECOUNT": limit, "LOG_LEVEL": "ERROR", "TELNETCONSOLE_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 30, "RETRY_ENABLED": False,
    })
    process.crawl(Peer)
    process.start()
    with open(out, "w") as f:
        json.dump(got, f)
    """
)


def _scrapy(seeds: list[str], work: Path, limit: int) -> tuple[list[str], float]:
    """The URLs of Scrapy's 2xx responses, in order, and its CPU seconds (``work``: the
    seed's own directory)."""
    work.mkdir(parents=True, exist_ok=True)
    script = work / "peer_spider.py"
    script.write_text(SCRAPY_SPIDER)
    out = work / "scrapy-urls.json"
    cpu = _run([sys.executable, str(script), json.dumps([seeds, limit, str(out)])])
    return json.loads(out.read_text()), cpu


def _kind(first: str, dup: str) -> str:
    """How ``dup`` differs from ``first``, the URL its resource was first fetched at."""
    a, b = urlsplit(first), urlsplit(dup)
    if a.hostname != b.hostname:
        return "host"
    bare_a = "/".join(seg.split(";")[0] for seg in a.path.split("/"))
    bare_b = "/".join(seg.split(";")[0] for seg in b.path.split("/"))
    out = []
    if a.path != b.path and bare_a == bare_b:
        out.append("path parameter")
    qa, qb = parse_qsl(a.query, keep_blank_values=True), parse_qsl(b.query, keep_blank_values=True)
    if bare_a != bare_b:
        (qs, other), _ = sorted([(qa, bare_b), (qb, bare_a)], key=lambda x: -len(x[0]))
        if any(len(v) > 1 and v in other for _, v in qs):
            return " + ".join([*out, "query↔path"])
        short, long_ = sorted((bare_a, bare_b), key=len)
        if long_.endswith(short) and long_[: len(long_) - len(short) + 1].endswith("/"):
            out.append(f"path prefix {long_[: len(long_) - len(short) + 1]}")
        else:
            out.append("other path")
    if qa != qb:
        da, db = dict(qa), dict(qb)
        names = (da.keys() ^ db.keys()) | {n for n in da.keys() & db.keys() if da[n] != db[n]}
        out.append("query: " + ",".join(sorted(names)) if names else "query: order")
    return " + ".join(out) or "same URL"


def _duplicates(urls: list[str], truth: dict[str, str]) -> Counter[str]:
    """Each fetch of a resource after its first, by kind."""
    first: dict[str, str] = {}
    kinds: Counter[str] = Counter()
    for url in urls:
        r = truth.get(url)
        if r is None:
            continue
        if r in first:
            kinds[_kind(first[r], url)] += 1
        else:
            first[r] = url
    return kinds


def _truth(path: Path) -> dict[str, str]:
    """url -> resource id of every URL the truth says is a document."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) >= 4 and fields[3] == "doc":
            out[fields[0]] = fields[2]
    return out


def _count(crawl: Path, truth: dict[str, str]) -> tuple[int, int, int, Counter[str]]:
    """(resources reached, duplicate document fetches, fetches, duplicates by kind) of a
    crawl, by the truth."""
    db = sqlite3.connect(crawl / "crawl.db")
    rows = db.execute(
        "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id "
        "WHERE f.status BETWEEN 200 AND 299 AND f.state IN ('OK', 'code') ORDER BY f.id"
    ).fetchall()
    fetches = db.execute("SELECT count(*) FROM fetches").fetchone()[0]
    db.close()
    urls = [url for (url,) in rows]
    found = [r for url in urls if (r := truth.get(url)) is not None]
    kinds = _duplicates(urls, truth)
    return len(set(found)), len(found) - len(set(found)), int(fetches), kinds


@dataclass
class _Seed:
    """One seed's crawls, counted by its truth."""

    seed: int
    row: str = ""
    share: float = 0.0
    kinds: dict[str, Counter[str]] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    fetches: dict[str, int] = field(default_factory=dict)


def _one_seed(seed: int, args: argparse.Namespace, work: Path, scrapy: bool) -> _Seed:
    """Serve ``seed``'s web; crawl it with ``standard``, ``--learn``, the learned rules from
    the start, and Scrapy; count each against the truth."""
    truth_path = work / f"truth-{seed}.tsv"
    proc, seeds = _serve(seed, args, truth_path)
    scrapy_urls: list[str] = []
    got = _Seed(seed)
    try:
        t_std, c_std = _crawl(seeds, work / f"std-{seed}")
        t_learn, c_learn = _crawl(seeds, work / f"learn-{seed}", "--learn")
        # The same rules from the first page, nothing learned: the CPU the learning
        # crawl would take without its learner.
        rules = str(work / f"learn-{seed}" / "learned-rules.xml")
        _, got.cpu["rules"] = _crawl(seeds, work / f"rules-{seed}", "--rules", rules)
        got.fetches["rules"] = _count(work / f"rules-{seed}", {})[2]
        if scrapy:
            limit = 6 * args.sites * args.pages_per_site
            scrapy_urls, got.cpu["scrapy"] = _scrapy(seeds, work / f"scrapy-{seed}", limit)
            got.fetches["scrapy"] = len(scrapy_urls)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    truth = _truth(truth_path)
    docs = len(set(truth.values()))
    s_res, s_dup, got.fetches["std"], got.kinds["std"] = _count(work / f"std-{seed}", truth)
    l_res, l_dup, got.fetches["learn"], got.kinds["learn"] = _count(work / f"learn-{seed}", truth)
    got.cpu["std"], got.cpu["learn"] = c_std, c_learn
    scrapy_cells = "- | -"
    if scrapy:
        found = [r for u in scrapy_urls if (r := truth.get(u)) is not None]
        got.kinds["scrapy"] = _duplicates(scrapy_urls, truth)
        scrapy_cells = f"{len(set(found))} | {len(found) - len(set(found))}"
    got.share = l_dup / s_dup if s_dup else 0.0
    got.row = (f"| {seed} | {docs} | {s_res} | {s_dup} | {got.fetches['std']} | {l_res} | "
               f"{l_dup} | {got.fetches['learn']} | {got.share:.0%} | {s_res - l_res} | "
               f"{t_std:.0f} | {t_learn:.0f} | {scrapy_cells} |")  # fmt: skip
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", type=int, nargs="?", default=5, help="seeds (default 5)")
    parser.add_argument("--first", type=int, default=1, help="first seed (default 1)")
    parser.add_argument("--sites", type=int, default=5)
    parser.add_argument("--pages-per-site", type=int, default=500)
    parser.add_argument("--no-scrapy", action="store_true", help="skip the Scrapy column")
    parser.add_argument(
        "--jobs", type=int, default=1,
        help="seeds crawled at once (default 1); each crawl's CPU is its own process's",
    )  # fmt: skip
    args = parser.parse_args()
    if args.jobs < 1:
        raise SystemExit("--jobs must be at least 1")
    scrapy = not args.no_scrapy
    if scrapy:
        import importlib.util

        if importlib.util.find_spec("scrapy") is None:
            raise SystemExit("scrapy is not installed: make bench installs it, or --no-scrapy")
    work = Path(tempfile.mkdtemp(prefix="dustless-realweb-"))
    print(f"real test web, {args.sites} sites of {args.pages_per_site} documents; work in {work}")
    print("| seed | docs | standard: reached | dups | fetches | learn: reached | dups | fetches "
          "| dups learn/std | lost | s std | s learn | scrapy: reached | dups |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    seeds = range(args.first, args.first + args.seeds)
    done: list[_Seed] = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        # Rows as the seeds end (in seed order within one job).
        for got in pool.map(lambda n: _one_seed(n, args, work, scrapy), seeds):
            print(got.row, flush=True)
            done.append(got)
    kinds: dict[str, Counter[str]] = {k: Counter() for k in ("std", "learn", "scrapy")}
    cpu = dict.fromkeys(("std", "learn", "rules", "scrapy"), 0.0)
    fetches = dict.fromkeys(("std", "learn", "rules", "scrapy"), 0)
    for got in done:
        for k, c in got.kinds.items():
            kinds[k] += c
        for k, v in got.cpu.items():
            cpu[k] += v
        for k, n in got.fetches.items():
            fetches[k] += n
    shares = [(got.share, got.seed) for got in done]
    ranked = sorted(round(100 * s) for s, _ in shares)
    median = statistics.median(s for s, _ in shares)
    worst, worst_seed = max(shares)
    print(f"\nduplicates learn/standard: median {median:.1%}, worst {worst:.1%} (seed "
          f"{worst_seed}: replay with dustless testweb --profile real --seed {worst_seed} "
          f"--sites {args.sites} --pages-per-site {args.pages_per_site}); per seed, "
          f"sorted (%): {', '.join(map(str, ranked))}")  # fmt: skip
    print(
        "\nduplicates by kind (how a duplicate's URL differs from its resource's first one), "
        "all seeds:\n"
    )
    print("| kind | standard | learn | scrapy |\n|---|---:|---:|---:|")
    every = kinds["std"] + kinds["learn"] + kinds["scrapy"]
    for kind, _ in sorted(every.items(), key=lambda kv: (-kv[1], kv[0])):
        cells = [str(kinds[k][kind]) for k in ("std", "learn")]
        cells.append(str(kinds["scrapy"][kind]) if scrapy else "-")
        print(f"| {kind} | {' | '.join(cells)} |")
    per = {k: 1000 * cpu[k] / max(fetches[k], 1) for k in cpu}
    share = 1 - per["rules"] / per["learn"] if per["learn"] else 0.0
    peer = f", scrapy {per['scrapy']:.2f} ms" if scrapy else ""
    print(f"\nCPU per fetch (crawl processes, user + system): standard {per['std']:.2f} ms, "
          f"learn {per['learn']:.2f} ms, its rules from the start (--rules, nothing learned) "
          f"{per['rules']:.2f} ms{peer}; the learner's share of the learning crawl's CPU: "
          f"{share:.0%}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
