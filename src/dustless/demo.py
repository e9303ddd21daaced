"""``make demo``: the main job end to end on the bundled test web.

Starts the test web (mixed profile), crawls it, then runs the statistics (``dustless stats``),
the normalization evaluation against the test web's truth (``dustless evaluate``) and writes
the HTML report (``dustless report``), and says where everything is (``./demo-out/``).

Runs in well under a minute: the test web's hostile servers are told to misbehave briefly
(short crawl-delays, stalls and slow first bytes), and the crawler's politeness delay is
small, as it may be on one's own loopback. Nothing leaves 127.0.0.1. Its pages/s are set
by politeness (one request at a time per host, a rest between two), not by the crawler's
speed, which ``bench/crawl_peers.py`` measures; the demo says so.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from dustless.crawl import run_crawl
from dustless.crawl.config import CrawlConfig
from dustless.crawl.progress import Progress
from dustless.store import max_depth, open_crawl

__all__ = ["main"]

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _start_testweb(tmp: Path) -> tuple[subprocess.Popen[bytes], str, dict[str, list[str]]]:
    cmd = [
        sys.executable, "-m", "dustless", "testweb", "--port", "0", "--profile", "mixed",
        "--truth", str(tmp / "truth.tsv"),
        "--crawl-delay", "0.1", "--slow", "0.5", "--stall", "6",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    first = proc.stdout.readline().decode().strip()
    if not first.startswith("serving "):
        proc.kill()
        raise SystemExit(f"demo: the test web did not start ({first!r})")
    threading.Thread(target=proc.stdout.read, daemon=True).start()  # keep the pipe drained
    address = first.split()[1]
    with _OPENER.open(f"http://{address}/__testweb/info", timeout=10) as resp:
        info = json.loads(resp.read())
    return proc, address, info


def _dustless(*args: str) -> None:
    """Run one ``dustless`` command as a user would, its output shown as it comes."""
    print(f"\n$ dustless {' '.join(args)}", flush=True)
    subprocess.run([sys.executable, "-m", "dustless", *args], check=True)


def main() -> int:
    work = Path("demo-out").resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    out = work / "crawl"
    print("dustless demo: a crawl of the synthetic test web (profile 'mixed') on loopback")
    proc, address, info = _start_testweb(work)
    try:
        resolve = tuple(info["resolve"][i + 1] for i in range(0, len(info["resolve"]), 2))
        print(f"test web on {address}: {len(info['hosts'])} hosts, {len(info['seeds'])} seeds")
        config = CrawlConfig(
            seeds=tuple(info["seeds"]),
            resolve=resolve,
            # standard keeps the spellings the paper's factors differ in apart, so that
            # `evaluate` below has candidate sets to measure (docs/evaluation.md).
            policy="standard",
            delay=0.05,
            delay_factor=1.0,
            concurrency=32,
            max_pages_per_site=150,
            backoff=0.5,
        )
        started = time.monotonic()
        result = run_crawl(config, out, progress=Progress(enabled=True))
        seconds = time.monotonic() - started
        with _OPENER.open(f"http://{address}/__testweb/stats", timeout=10) as resp:
            server = json.loads(resp.read())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    s = result.stats
    print(f"\ncrawled {s.fetched} pages in {seconds:.1f} s ({s.fetched / seconds:.0f} pages/s)")
    hosts = len(info["hosts"])
    print(
        f"  politeness, not speed, sets this rate: one request at a time to each of the "
        f"{hosts} hosts,\n  each resting {config.delay:g} s or {config.delay_factor:g} x its "
        "last fetch time between two, longer where robots.txt asks\n  (Crawl-delay) or a "
        "server is slow; the crawler's own speed is measured by\n  "
        'bench/crawl_peers.py (make bench; README, "Numbers")'
    )
    print(f"  network states: {s.summary()}")
    print(f"  {s.revisits} payloads seen before (WARC revisit records, links not re-extracted)")
    print(f"  {s.discovered} URLs queued, {s.seeds_added} seeds discovered (parties, seed 004 §2)")
    print(
        f"  the server saw {server['requests']} requests, {server['resources_fetched']} "
        f"resources, {server['duplicate_fetches']} repeats of one resource, "
        f"{server['trap_hits']} trap pages"
    )
    polite = all(h["max_concurrent"] <= 1 for h in server["hosts"].values())
    print(f"  never two requests at once to one host: {polite}")
    with open_crawl(out) as db:
        depth = max_depth(db)
    print(f"  deepest URL: depth {depth} (limit {config.max_depth})")
    truth = str(work / "truth.tsv")
    report = work / "report.html"
    _dustless("stats", str(out), "--top-hosts", "5")
    _dustless("evaluate", str(out), "--truth", truth)
    _dustless("report", str(out), "-o", str(report), "--truth", truth)
    print(f"\ncrawl DB:   {out / 'crawl.db'}")
    print(f"WARC files: {out / 'warc'}")
    print(f"seeds out:  {out / 'seeds.out.txt'}")
    print(f"truth:      {truth}")
    print(f"report:     {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
