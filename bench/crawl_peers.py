"""dustless crawl against Scrapy and the other crawlers a user might pick, on the test web
(the README's table of measured figures; issue 28's CPU per page).

Two runs, each crawler in the same run of this script, against the same server:

1. throughput: the test web's ``clean`` profile, 20,000 pages over 50 hosts, no politeness
   delay. dustless runs its full pipeline (robots.txt, normalization, URL-seen, content-seen,
   WARC, crawl DB), and again with ``--store none`` when ``dustless crawl --help`` lists it;
   Scrapy 2.x runs with its politeness off (no delay, no AutoThrottle, no robots.txt) and 64
   concurrent requests; then the peers of bench/peer_crawlers.py (the lean asyncio loop,
   wget2, GNU wget with a WARC, Crawlee, spider), each with the same depth and concurrency.
   Each crawler is timed as a whole process, start-up included; CPU time and peak RSS come
   from the process's own rusage (``os.wait4``). Pages are counted by the server (distinct
   pages served, ``resources_fetched``), the same count for every crawler; the table gives
   CPU seconds per 1,000 of them beside pages/s. On a shared machine the CPU figures are the
   evidence; pages/s moves with the load.
2. duplicates: a dirty web (the ``mixed`` profile: fragments, tracking and session
   parameters, ``/./``, reordered queries, www aliases, a calendar trap) with the same depth
   limit; dustless with policy ``aggressive``, which learns each site's rules while it crawls
   (``--learn``, docs/learning.md), and again with ``--no-learn`` (the fixed policy alone).
   The server counts repeated fetches of one resource, resources reached and trap hits.
   ``--dirty-profile canonical`` runs it on dirty sites that declare their canonical URLs,
   with misconfigured ones beside them.

Throughput is measured with ``--policy standard`` as before, and once more with ``--learn``:
learning must not cost the crawl's pages/s.

The server runs on one core and the crawlers on another (``os.sched_setaffinity``), so
neither steals the other's CPU. Run: ``.venv/bin/python bench/crawl_peers.py``
(``--pages``/``--hosts`` to scale down for a quick look, ``--peers lean,wget2`` to choose
peers; ``make bench`` installs them, a missing one is printed with its install hint).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import urllib.request
from pathlib import Path

import peer_crawlers

PY = sys.executable
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

SCRAPY_SPIDER = textwrap.dedent(
    """
    import json, socket, sys

    _real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kw):  # like --resolve '*.test:127.0.0.1'
        if isinstance(host, str) and host.endswith(".test"):
            host = "127.0.0.1"
        return _real(host, *args, **kw)

    _real_byname = socket.gethostbyname

    def gethostbyname(host):  # Scrapy's CachingThreadedResolver asks this one
        return "127.0.0.1" if host.endswith(".test") else _real_byname(host)

    socket.getaddrinfo = getaddrinfo  # before Twisted binds it as a default argument
    socket.gethostbyname = gethostbyname

    import scrapy
    from scrapy.crawler import CrawlerProcess
    from scrapy.linkextractors import LinkExtractor

    seeds, port, depth, out = json.loads(sys.argv[1])

    class Peer(scrapy.Spider):
        name = "peer"
        allowed_domains = ["test"]
        start_urls = seeds
        links = LinkExtractor()

        def parse(self, response):
            if not hasattr(response, "text"):
                return
            for link in self.links.extract_links(response):
                yield response.follow(link.url, callback=self.parse)

    process = CrawlerProcess(settings={
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 64,
        "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "DEPTH_LIMIT": depth,
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 10,
        "RETRY_ENABLED": False,
        "DNSCACHE_ENABLED": True,
    })
    crawler = process.create_crawler(Peer)
    process.crawl(crawler)
    process.start()
    stats = crawler.stats.get_stats()
    with open(out, "w") as f:
        json.dump({"responses": stats.get("downloader/response_count", 0)}, f)
    """
)


class Server:
    def __init__(self, tmp: Path, *, profile: str, sites: int, pages: int, extra: list[str]):
        self.truth = tmp / f"truth-{profile}.tsv"
        cmd = [
            PY, "-m", "dustless", "testweb", "--port", "0", "--profile", profile,
            "--sites", str(sites), "--pages-per-site", str(pages), "--truth", str(self.truth),
            *extra,
        ]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        pin(self.proc.pid, SERVER_CPU)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().decode()
        if not first.startswith("serving "):
            raise SystemExit(f"test web did not start: {first!r}")
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()  # drain
        self.address, _, port = first.split()[1].rpartition(":")
        self.port = int(port)
        info = self.get("info")
        self.seeds: list[str] = info["seeds"]
        self.resolve: list[str] = info["resolve"]
        self.hosts: list[str] = info["hosts"]

    def get(self, what: str) -> dict:
        url = f"http://{self.address}:{self.port}/__testweb/{what}"
        with _OPENER.open(url, timeout=30) as resp:
            return json.loads(resp.read())

    def cpu(self) -> float:
        """CPU seconds the server process has used so far (/proc/PID/stat utime + stime)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


CPUS = sorted(os.sched_getaffinity(0))
SERVER_CPU = CPUS[0]
CRAWLER_CPU = CPUS[-1]


def pin(pid: int, cpu: int) -> None:
    os.sched_setaffinity(pid, {cpu})


class PeerFailed(Exception):
    pass


def timed(cmd: list[str], *, check: bool = True, ok: tuple[int, ...] = (0,)) -> dict:
    """Run a whole process on the crawler core; wall, CPU and peak RSS from its rusage.

    A process that fails ends the bench (``check``), or raises PeerFailed for a peer."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: pin(0, CRAWLER_CPU),
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in ok:
        why = f"{cmd[:4]} failed ({proc.returncode}): {err.decode(errors='replace')[-2000:]}"
        if not check:
            raise PeerFailed(why)
        raise SystemExit(why)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss * 1024}


def run_dustless(server: Server, tmp: Path, name: str, *extra: str) -> dict:
    out = tmp / name
    cmd = [
        PY, "-m", "dustless", "crawl", *server.seeds, "--out", str(out), *server.resolve,
        "--delay", "0", "--delay-factor", "0", "--concurrency", "64", "--quiet", *extra,
    ]  # fmt: skip
    server.get("reset")
    before = server.cpu()
    m = timed(cmd)
    m["server_cpu"] = server.cpu() - before
    stats = server.get("stats")
    m.update(pages=stats["resources_fetched"], server=stats)
    return m


def store_none() -> bool:
    """Whether this dustless has ``crawl --store none`` (issue 28; not on every version)."""
    help_text = subprocess.run(
        [PY, "-m", "dustless", "crawl", "--help"], capture_output=True, text=True, check=True
    ).stdout
    # The option's own entry: "--store" not followed by "-" (not --store-bodies or the
    # like), up to the next option's entry; "none" among its choices or in its help.
    entry = re.search(r"^  --store(?![-\w]).*?(?=^  -|\Z)", help_text, re.M | re.S)
    return entry is not None and re.search(r"\bnone\b", entry.group(0)) is not None


def run_scrapy(server: Server, tmp: Path, depth: int) -> dict:
    script = tmp / "peer_spider.py"
    script.write_text(SCRAPY_SPIDER)
    result = tmp / "scrapy.json"
    server.get("reset")
    before = server.cpu()
    m = timed([PY, str(script), json.dumps([server.seeds, server.port, depth, str(result)])])
    m["server_cpu"] = server.cpu() - before
    stats = server.get("stats")
    m.update(pages=stats["resources_fetched"], server=stats)
    return m


def run_peer(server: Server, tmp: Path, name: str, depth: int) -> dict:
    """Peer ``name`` of bench/peer_crawlers.py; raises PeerMissing or PeerFailed."""
    work = tmp / f"peer-{name}"
    work.mkdir(exist_ok=True)
    hosts = peer_crawlers.hosts_file(work / "hosts", dict.fromkeys(server.hosts, server.address))
    cmd = peer_crawlers.command(
        name, server.seeds, hosts, server.hosts, work, depth=depth, concurrency=64
    )
    server.get("reset")
    before = server.cpu()
    m = timed(cmd, check=False, ok=peer_crawlers.ok_codes(name))
    m["server_cpu"] = server.cpu() - before
    stats = server.get("stats")
    m.update(pages=stats["resources_fetched"], server=stats)
    return m


def line(name: str, m: dict) -> str:
    return (
        f"  {name:9} {m['pages']:7,} pages in {m['wall']:6.2f} s = {m['pages'] / m['wall']:8,.0f} "
        f"pages/s, {1000 * m['cpu'] / max(m['pages'], 1):6.2f} CPU ms/page, "
        f"peak RSS {m['rss'] / 2**20:5.0f} MiB (server CPU {m['server_cpu']:.1f} s)"
    )


def table(rows: list[tuple[str, str, str, dict | str]], base: dict) -> list[str]:
    """The peers' table: one row a crawler, its figures or why it is missing."""
    head = (
        f"  {'crawler':17} {'stores':28} {'robots':6} {'pages':>7} {'requests':>8} "
        f"{'pages/s':>8} {'CPU-s/1k':>8} {'x dustless':>10}"
    )
    out = [head, "  " + "-" * (len(head) - 2)]
    base_cpu = base["cpu"] / max(base["pages"], 1)
    for name, stores, robots, m in rows:
        if isinstance(m, str):
            out.append(f"  {name:17} missing: {m}")
            continue
        per_page = m["cpu"] / max(m["pages"], 1)
        out.append(
            f"  {name:17} {stores:28} {robots:6} {m['pages']:7,} {m['server']['requests']:8,} "
            f"{m['pages'] / m['wall']:8,.0f} {1000 * per_page:8.2f} {per_page / base_cpu:9.2f}x"
        )
    differ = sorted({m["pages"] for *_, m in rows if not isinstance(m, str)})
    if len(differ) > 1:
        out.append(f"  (not every crawler reached the same pages: {differ})")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--skip-dirty", action="store_true")
    ap.add_argument("--dirty-profile", default="mixed", choices=("mixed", "dirty", "canonical"))
    ap.add_argument("--dirty-sites", type=int, default=12)
    ap.add_argument("--dirty-pages", type=int, default=30)
    ap.add_argument("--dirty-policy", default="aggressive", choices=("aggressive", "standard"))
    ap.add_argument(
        "--peers",
        default=",".join(peer_crawlers.PEERS),
        help="comma-separated peers beside dustless and Scrapy (default: all; '' for none)",
    )
    args = ap.parse_args()
    try:
        import scrapy
    except ImportError:
        print("scrapy is not installed: make bench installs it (pip install -e '.[bench]')")
        return 1
    print(
        f"crawl_peers: dustless vs Scrapy {scrapy.__version__}; server on CPU {SERVER_CPU}, "
        f"crawlers on CPU {CRAWLER_CPU}"
    )
    with tempfile.TemporaryDirectory(prefix="crawl-peers-") as t:
        tmp = Path(t)
        per_site = max(1, args.pages // args.hosts)
        print(f"\nthroughput: clean profile, {args.hosts} hosts x {per_site} pages, no delay")
        server = Server(tmp, profile="clean", sites=args.hosts, pages=per_site, extra=[])
        peers = [p for p in args.peers.split(",") if p]
        results: dict[str, dict | str] = {}
        try:
            depth = str(args.depth)
            d = run_dustless(server, tmp, "clean", "--max-depth", depth, "--policy", "standard")
            dl = run_dustless(
                server, tmp, "clean-learn", "--max-depth", depth, "--policy", "standard", "--learn"
            )
            if store_none():
                results["dustless none"] = run_dustless(
                    server, tmp, "clean-none", "--max-depth", depth, "--policy", "standard",
                    "--store", "none",
                )  # fmt: skip
            else:
                results["dustless none"] = (
                    "this dustless has no crawl --store none (issue 28): figure missing"
                )
            s = run_scrapy(server, tmp, args.depth)
            for name in peers:
                try:
                    results[name] = run_peer(server, tmp, name, args.depth)
                except (peer_crawlers.PeerMissing, PeerFailed) as exc:
                    results[name] = str(exc)
        finally:
            server.stop()
        print(line("dustless", d))
        print(line("--learn", dl))
        print(line("scrapy", s))
        scrapy_rate = s["pages"] / s["wall"]
        ratio = (d["pages"] / d["wall"]) / scrapy_rate
        ratio_learn = (dl["pages"] / dl["wall"]) / scrapy_rate
        print(
            f"  ratio: dustless {ratio:.1f}x Scrapy's pages/s, with --learn {ratio_learn:.1f}x "
            "(target >= 6x)"
        )
        stored = "WARC + CDXJ + SQLite"
        rows: list[tuple[str, str, str, dict | str]] = [
            ("dustless", stored, "yes", d),
            ("dustless --learn", stored, "yes", dl),
            ("dustless none", "nothing (--store none)", "yes", results.pop("dustless none")),
            ("scrapy", "nothing", "no", s),
        ]
        for name in peers:
            peer = peer_crawlers.PEERS.get(name)
            stores, robots = (peer.stores, "yes" if peer.robots else "no") if peer else ("", "")
            rows.append((name, stores, robots, results[name]))
        print(
            f"\nCPU per page, every crawler pinned to CPU {CRAWLER_CPU} as a whole process "
            f"(rusage), pages counted by the server; depth {args.depth}, 64 at once "
            "(GNU wget: one connection)"
        )
        print("\n".join(table(rows, d)))
        if not args.skip_dirty:
            print(
                f"\nduplicates: {args.dirty_profile} profile ({args.dirty_sites} sites x "
                f"{args.dirty_pages} pages), same depth"
            )
            server = Server(
                tmp, profile=args.dirty_profile, sites=args.dirty_sites, pages=args.dirty_pages,
                extra=["--crawl-delay", "0.05", "--slow", "0.2", "--stall", "1"],
            )  # fmt: skip
            try:
                opts = ("--max-depth", depth, "--policy", args.dirty_policy)
                d = run_dustless(server, tmp, "dirty", *opts, "--learn")
                dn = run_dustless(server, tmp, "dirty-fixed", *opts, "--no-learn")
                # What a crawl with the safe steps only reaches: the coverage to keep.
                std = run_dustless(
                    server, tmp, "dirty-std", "--max-depth", depth, "--policy", "standard",
                    "--no-learn",
                )  # fmt: skip
                s = run_scrapy(server, tmp, args.depth)
            finally:
                server.stop()
            print(f"  dustless --policy {args.dirty_policy}, with and without --learn:")
            for name, m in (("--learn", d), ("no-learn", dn), ("standard", std), ("scrapy", s)):
                print(
                    f"  {name:9} {m['server']['requests']:6,} requests, "
                    f"{m['server']['resources_fetched']:5,} resources, "
                    f"{m['server']['duplicate_fetches']:5,} duplicate fetches, "
                    f"{m['server']['trap_hits']:4,} trap pages"
                )
            ours, fixed = d["server"]["duplicate_fetches"], dn["server"]["duplicate_fetches"]
            theirs = max(1, s["server"]["duplicate_fetches"])
            reached = d["server"]["resources_fetched"]
            traps = d["server"]["trap_hits"] <= s["server"]["trap_hits"]
            print(
                f"  dustless --learn duplicates: {ours / theirs:.1%} of Scrapy's (goal <= 10%; "
                f"without learning {fixed / theirs:.1%}); resources reached: {reached:,} "
                f"(without learning {dn['server']['resources_fetched']:,}, standard "
                f"{std['server']['resources_fetched']:,}, Scrapy "
                f"{s['server']['resources_fetched']:,}); trap pages <= Scrapy's: {traps}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
