"""How long the crawl's event loop stalls, and what a worker fetches while PostgreSQL is away.

1. stall: a crawl of the test web (``clean`` profile, ``--delay 0``) in this process, with a
   ticker on the crawl's own event loop that asks to run every 5 ms and notes how late it
   runs: the longest lateness is the longest time the loop ran something else without a
   break (a commit's fsync, a page's handling). ``--db DSN`` crawls as one worker of a
   PostgreSQL crawl instead of on SQLite.
2. outage (``--outage PGDATA``): the same crawl on PostgreSQL (``--db``), the server stopped
   with ``pg_ctl stop -m fast`` once 200 pages are in, started again 10 s later: the pages
   the test web served meanwhile (a worker fetches the URLs it holds while the DB is away).

Run: ``.venv/bin/python bench/loop_stall.py [--pages N] [--runs N] [--db DSN [--outage PGDATA
--pg-options OPTS --pg-ctl-prefix 'runuser -u postgres --']]`` (``--pg-options``: the
server's own, as ``pg_ctl -o`` takes them, to start it again; ``--runs``: that many crawls,
each in a fresh database of the server); ``PYTHONPATH=OTHER/src`` runs another tree's code
for a side-by-side figure. A figure is one run's, on the machine's load of the moment:
compare runs made side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import dustless.crawl.run as crawl_run
from dustless.cli.main import main as dustless_main

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
TICK = 0.005


class Ticker:
    """Runs every ``TICK`` seconds on the loop it is started on; ``worst``: the latest run."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.late: list[float] = []

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        def tick(due: float) -> None:
            now = loop.time()
            lag = now - due
            self.late.append(lag)
            self.worst = max(self.worst, lag)
            loop.call_at(now + TICK, tick, now + TICK)

        loop.call_soon(tick, loop.time())


def _serve(sites: int, pages: int) -> tuple[subprocess.Popen[str], list[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dustless", "testweb", "--profile", "clean", "--port", "0",
         "--sites", str(sites), "--pages-per-site", str(pages)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    seeds: list[str] = []
    port = ""
    for line in proc.stdout:
        if line.startswith("serving "):
            port = line.split(":")[-1].strip()
        elif line.startswith("seed "):
            seeds.append(line.split()[1])
            if len(seeds) == sites:
                break
    return proc, seeds, port


def _served(port: str) -> int:
    with _OPENER.open(f"http://127.0.0.1:{port}/__testweb/stats", timeout=30) as r:
        stats = json.load(r)
    return int(sum(h.get("requests", 0) for h in stats["hosts"].values()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=6000)
    ap.add_argument("--sites", type=int, default=20)
    ap.add_argument("--db", help="a postgresql:// URL: crawl as one worker of it")
    ap.add_argument("--outage", metavar="PGDATA", help="stop this server 10 s mid-crawl")
    ap.add_argument("--pg-ctl-prefix", default="", help="e.g. 'runuser -u postgres --'")
    ap.add_argument("--pg-options", default="", help="the server's options (pg_ctl -o)")
    ap.add_argument("--runs", type=int, default=1, help="crawls, each in a fresh database")
    args = ap.parse_args()
    served: list[int] = []
    for run in range(args.runs):
        if args.runs > 1:
            print(f"run {run + 1} of {args.runs}:")
        db = args.db
        if db and args.runs > 1:
            db = _fresh_database(db, run)
        _run(args, db, served)
    if len(served) > 1:
        print(f"requests served while PostgreSQL was stopped, per run: {served}")


def _fresh_database(dsn: str, run: int) -> str:
    import psycopg

    name = f"loop_stall_{run}_{time.monotonic_ns()}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return dsn.rsplit("/", 1)[0] + "/" + name


def _run(args: argparse.Namespace, db: str | None, served_during: list[int]) -> None:
    web, seeds, port = _serve(args.sites, args.pages // args.sites)
    ticker = Ticker()
    real: Callable[[], Callable[[], asyncio.AbstractEventLoop] | None] = crawl_run._loop_factory

    def factory() -> asyncio.AbstractEventLoop:
        made = real()
        loop = made() if made is not None else asyncio.new_event_loop()
        ticker.start(loop)
        return loop

    crawl_run._loop_factory = lambda: factory  # type: ignore[assignment]
    during: list[int] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "crawl"
            argv = ["crawl", str(out), *seeds, "--resolve", "*.test:127.0.0.1", "--delay", "0",
                    "--quiet", "--max-depth", "100"]  # fmt: skip
            if db:
                argv += ["--db", db, "--worker", "bench", "--lease-ttl", "60"]
            if args.outage:
                threading.Thread(target=_outage, args=(args, port, during), daemon=True).start()
            t0 = time.monotonic()
            status = dustless_main(argv)
            took = time.monotonic() - t0
    finally:
        crawl_run._loop_factory = real  # the next run starts its own ticker
        served = _served(port)
        web.terminate()
        web.wait()
    late = sorted(ticker.late)
    p99 = late[int(len(late) * 0.99)] if late else 0.0
    print(
        f"exit {status}: {served:,} requests in {took:.1f} s; loop stall: longest "
        f"{ticker.worst * 1000:.0f} ms, 99th percentile {p99 * 1000:.1f} ms"
    )
    if during:
        print(f"requests served while PostgreSQL was stopped (10 s): {during[0]:,}")
        served_during.append(during[0])


def _outage(args: argparse.Namespace, port: str, during: list[int]) -> None:
    while _served(port) < 200:
        time.sleep(0.05)
    ctl = [*args.pg_ctl_prefix.split(), "pg_ctl", "-D", args.outage]
    subprocess.run([*ctl, "-m", "fast", "-w", "stop"], check=True, capture_output=True)
    before = _served(port)
    time.sleep(10)
    during.append(_served(port) - before)
    log = str(Path(args.outage).parent / "bench-pg.log")
    subprocess.run(
        [*ctl, "-o", args.pg_options, "-l", log, "-w", "start"], check=True, capture_output=True
    )


if __name__ == "__main__":
    main()
