"""A hostile web beside a dirty one: how much longer does the pair take than the dirty web?

The ``hostile`` test web serves stalls, resets, bombs, 100,000 nested tags (1.1 and 1.4 MB),
raw bytes in ``Location`` and links to private addresses; one hostile page that froze the
event loop used to make healthy hosts time out and back off, and a crawl that took a minute
took eleven. Here the dirty web is crawled alone, then with the hostile web beside it, in
the same run of this script, each three times (medians); the goal is a ratio ≤ 1.2.

Politeness is on (``--delay 0.2``), as in a real crawl: the dirty web's hosts are what sets
the pace, and the hostile web must not slow them. The hostile sites' robots.txt Crawl-delay
is capped to the same 0.2 s, and stalls are given up after 2 s, so the hostile web's own
sequence of slow pages fits in the dirty web's time.
Run: ``.venv/bin/python bench/hostile_beside.py``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

PY = sys.executable
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Server:
    def __init__(self, profile: str, sites: int, pages: int) -> None:
        cmd = [
            PY, "-m", "dustless", "testweb", "--port", "0", "--profile", profile,
            "--sites", str(sites), "--pages-per-site", str(pages),
        ]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().decode()
        if not first.startswith("serving "):
            raise SystemExit(f"test web did not start: {first!r}")
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()
        address, _, port = first.split()[1].rpartition(":")
        url = f"http://{address}:{port}/__testweb/info"
        with _OPENER.open(url, timeout=30) as resp:
            info = json.loads(resp.read())
        self.seeds: list[str] = info["seeds"]
        self.resolve: list[str] = info["resolve"]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def dirty_done(out: Path, port: int) -> float:
    """Seconds from the crawl's start to the end of the dirty web's last fetch."""
    import sqlite3

    with sqlite3.connect(out / "crawl.db") as db:
        (start,) = db.execute("SELECT min(started_at) FROM crawls").fetchone()
        (end,) = db.execute(
            "SELECT max(f.fetched_at + coalesce(f.elapsed, 0)) FROM fetches f "
            "JOIN urls u ON u.id = f.url_id WHERE u.url LIKE ?",
            (f"%:{port}/%",),
        ).fetchone()
    return float(end - start)


def crawl(out: Path, seeds: list[str], resolve: list[str]) -> float:
    cmd = [
        PY, "-m", "dustless", "crawl", str(out), *seeds, *resolve, "--quiet",
        "--delay", "0.2", "--delay-factor", "0", "--max-crawl-delay", "0.2",
        "--stall-timeout", "2", "--total-timeout", "6", "--backoff", "0.5",
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"crawl failed: {done.stderr[-1000:]}")
    return time.perf_counter() - started


def _resolve(args: list[str]) -> list[str]:
    """``--resolve NAME:IP`` pairs of both webs, each once."""
    specs = dict.fromkeys(args[i + 1] for i in range(0, len(args), 2) if args[i] == "--resolve")
    return [x for spec in specs for x in ("--resolve", spec)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sites", type=int, default=6)
    ap.add_argument("--pages", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    dirty = Server("dirty", args.sites, args.pages)
    hostile = Server("hostile", 2, 10)
    try:
        port = int(dirty.seeds[0].split(":")[2].split("/")[0])
        alone, both, part = [], [], []
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.repeat):
                alone.append(crawl(Path(tmp) / f"a{i}", dirty.seeds, dirty.resolve))
                out = Path(tmp) / f"b{i}"
                seeds = dirty.seeds + hostile.seeds
                both.append(crawl(out, seeds, _resolve(dirty.resolve + hostile.resolve)))
                part.append(dirty_done(out, port))
        a, b, p = statistics.median(alone), statistics.median(both), statistics.median(part)

        def runs(xs: list[float]) -> str:
            return ", ".join(f"{x:.1f}" for x in xs)

        print(f"hostile_beside: dirty web {args.sites} sites x {args.pages} pages, delay 0.2 s")
        print(f"  dirty alone                    {a:6.2f} s  (runs: {runs(alone)})")
        print(f"  dirty + hostile web, all done  {b:6.2f} s  (runs: {runs(both)})")
        print(f"  ... the dirty web's part done  {p:6.2f} s  (runs: {runs(part)})")
        print(f"  ratio, whole crawl {b / a:.2f}; dirty web's part {p / a:.2f} (goal <= 1.2)")
    finally:
        dirty.stop()
        hostile.stop()


if __name__ == "__main__":
    main()
