"""Many machines: dustless workers sharing one PostgreSQL crawl DB.

Three measurements, each against its peer in the same run of this script:

1. scale: 1, 2 and 4 workers crawl a latency-bound test web (``--latency``: every answer
   waits 50 ms, as from servers far away; 200 hosts; politeness on: one request at a time
   per host and ``--delay`` between two). A worker's pace is bound by its ``--concurrency``
   over the latency, so N workers should crawl N times as fast until the hosts' politeness
   binds. Pages/s is fetched pages over the span from the first fetch to the last (the DB's
   ``fetched_at``), so process start-up is left out; wall time is shown too. Goal: 4 workers
   ≥ 3.5 × one.
2. peer: one PostgreSQL worker against one SQLite process on ``bench/crawl_peers.py``'s site
   (the clean profile, 50 hosts, no delay, concurrency 64), whole processes timed as there.
   Goal: ≥ 0.8 ×.
3. round trips: every worker prints the DB round trips it made (``PostgresCrawlStore``
   counts each wait for the server); per fetched page. Goal: ≤ 0.05.

PostgreSQL is a throwaway server this script starts (``initdb``/``pg_ctl``, ``fsync=off`` as
in the tests: what is measured is the crawler's use of the DB, not the disk), or ``--db URL``.

    .venv/bin/python bench/crawl_scale.py [--hosts 200] [--pages 40] [--latency 0.05]

``--skip-scale --statements`` runs the peer comparison alone and prints the server's time by
statement (logging every statement slows the server: that run's ratio is not the figure).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psycopg

from crawl_peers import CRAWLER_CPU, PY, SERVER_CPU, Server, pin, timed

_TRIPS = re.compile(r"\(([\d,]+) round trips")


@contextlib.contextmanager
def postgres() -> Iterator[tuple[str, Path]]:
    """A throwaway server (as root, run as the ``postgres`` user); its admin DSN and log."""
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if not initdb or not pg_ctl:
        raise SystemExit("PostgreSQL's initdb/pg_ctl are not on PATH (or give --db URL)")
    root = Path(tempfile.mkdtemp(prefix="crawl-scale-pg-"))
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if prefix:
        shutil.chown(root, "postgres")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = root / "data"
    subprocess.run(
        [*prefix, initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync"],
        check=True, capture_output=True, cwd=root,
    )  # fmt: skip
    options = f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={root}"
    options += " -c fsync=off -c max_connections=100"
    subprocess.run(
        [*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"],
        check=True, capture_output=True, cwd=root,
    )  # fmt: skip
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres", root / "log"
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"],
                       capture_output=True, cwd=root)  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)


def fresh_db(admin: str, name: str) -> str:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return admin.rsplit("/", 1)[0] + "/" + name


def crawl_cmd(server: Server, out: Path, *extra: str) -> list[str]:
    return [
        PY, "-m", "dustless", "crawl", str(out), *server.seeds, *server.resolve,
        "--progress-interval", "0", *extra,
    ]  # fmt: skip


def workers(server: Server, tmp: Path, admin: str, n: int, args: argparse.Namespace) -> dict:
    """``n`` workers started together on a fresh DB; pages, spans and round trips."""
    db = fresh_db(admin, f"scale{n}")
    server.get("reset")
    extra = [
        "--db", db, "--delay", str(args.delay), "--delay-factor", "0",
        "--concurrency", str(args.concurrency), "--max-depth", "100",
    ]  # fmt: skip
    # Every worker appends its round trips by call site here (``_pg_conn.py``).
    trips_file = tmp / f"trips{n}.jsonl"
    trips_file.unlink(missing_ok=True)
    env = {**os.environ, "DUSTLESS_DB_TRIPS": str(trips_file)}
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            crawl_cmd(server, tmp / f"s{n}w{i}", *extra, "--worker", f"w{i}"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(n)
    ]
    trips = 0
    for proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"worker failed ({proc.returncode}): {err[-2000:]}")
        m = _TRIPS.search(err)
        trips += int(m.group(1).replace(",", "")) if m else 0
    wall = time.perf_counter() - started
    with psycopg.connect(db) as conn:
        pages, t0, t1 = conn.execute(
            "SELECT count(*), min(fetched_at), max(fetched_at) FROM fetches "
            "WHERE status IS NOT NULL"
        ).fetchone()
        per_worker = dict(conn.execute("SELECT worker, count(*) FROM fetches GROUP BY worker"))
    stats = server.get("stats")
    polite = all(h["max_concurrent"] == 1 for h in stats["hosts"].values())
    gaps = [h["min_gap_s"] for h in stats["hosts"].values() if h["min_gap_s"] is not None]
    by: Counter[str] = Counter()
    if trips_file.exists():
        for line in trips_file.read_text().splitlines():
            by.update(json.loads(line)["by"])
    return {
        "pages": pages, "span": t1 - t0, "wall": wall, "trips": trips, "by": by,
        "per_worker": per_worker, "polite": polite, "min_gap": min(gaps, default=None),
        "duplicates": stats["duplicate_fetches"],
    }  # fmt: skip


def peer(
    server: Server, tmp: Path, admin: str, depth: int, server_log: Path | None = None
) -> tuple[dict, dict]:
    """One SQLite process and one PostgreSQL worker, whole processes timed on one core.
    With ``server_log`` (the throwaway server's log), every statement of the worker is
    logged with its duration, and ``pg["statements"]`` sums them by statement."""
    common = ["--delay", "0", "--delay-factor", "0", "--concurrency", "64",
              "--max-depth", str(depth), "--policy", "standard"]  # fmt: skip
    server.get("reset")
    lite = timed(crawl_cmd(server, tmp / "peer-sqlite", *common, "--quiet"))
    import sqlite3

    with sqlite3.connect(tmp / "peer-sqlite" / "crawl.db") as db:
        (lite["pages"],) = db.execute(
            "SELECT count(*) FROM fetches WHERE status IS NOT NULL"
        ).fetchone()
    dsn = fresh_db(admin, "peer")
    start = 0
    if server_log is not None:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("ALTER DATABASE peer SET log_min_duration_statement = 0")
        start = server_log.stat().st_size
    server.get("reset")
    log = tmp / "peer-pg.log"
    with log.open("w") as f:
        pg = timed_to(crawl_cmd(server, tmp / "peer-pg", *common, "--db", dsn, "--worker", "w1"), f)
    m = _TRIPS.search(log.read_text())
    pg["trips"] = int(m.group(1).replace(",", "")) if m else 0
    with psycopg.connect(dsn) as conn:
        (pg["pages"],) = conn.execute(
            "SELECT count(*) FROM fetches WHERE status IS NOT NULL"
        ).fetchone()
    if server_log is not None:
        with server_log.open("rb") as f:
            f.seek(start)
            pg["statements"] = statement_times(f.read().decode("utf-8", "replace"))
    return lite, pg


_DURATION = re.compile(r"duration: ([\d.]+) ms\s+(?:statement|(?:parse|bind|execute)[^:]*): (.*)")


def statement_times(log: str) -> dict[str, tuple[int, float]]:
    """Server time by statement (its first 60 characters): (how many, ms), from a log
    written with ``log_min_duration_statement = 0`` (parse, bind and execute each count)."""
    out: dict[str, tuple[int, float]] = {}
    for m in _DURATION.finditer(log):
        key = " ".join(m.group(2).split())[:60]
        n, ms = out.get(key, (0, 0.0))
        out[key] = (n + 1, ms + float(m.group(1)))
    return out


def timed_to(cmd: list[str], stderr: object) -> dict:
    """``crawl_peers.timed`` for a command whose summary (stderr) is kept."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=stderr, preexec_fn=lambda: pin(0, CRAWLER_CPU)
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd[:4]} failed")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss * 1024}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=200)
    ap.add_argument("--pages", type=int, default=40, help="pages per host (scale)")
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--delay", type=float, default=0.1, help="politeness delay (scale)")
    ap.add_argument("--concurrency", type=int, default=8, help="fetches in flight per worker")
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--peer-pages", type=int, default=20_000)
    ap.add_argument("--skip-peer", action="store_true")
    ap.add_argument("--skip-scale", action="store_true")
    ap.add_argument(
        "--trips", action="store_true",
        help="scale: the round trips of each run by call site (store method < crawl function)",
    )  # fmt: skip
    ap.add_argument("--db", help="an admin DSN of a PostgreSQL server to use instead")
    ap.add_argument(
        "--statements", action="store_true",
        help="peer: log the worker's statements and print the server's time by statement "
        "(the throwaway server only)",
    )  # fmt: skip
    args = ap.parse_args()
    print(f"crawl_scale: {os.cpu_count()} CPUs (a shared machine: figures vary run to run)")
    with tempfile.TemporaryDirectory(prefix="crawl-scale-") as t:
        tmp = Path(t)
        if args.db is None:
            pg_server = postgres()
            admin, server_log = pg_server.__enter__()
        else:
            pg_server, admin, server_log = None, args.db, None
        try:
            if not args.skip_scale:
                print(
                    f"\nscale: {args.hosts} hosts x {args.pages} pages, "
                    f"{args.latency * 1000:.0f} ms per answer, --delay {args.delay:g}, "
                    f"--concurrency {args.concurrency} per worker"
                )
                server = Server(
                    tmp, profile="clean", sites=args.hosts, pages=args.pages,
                    extra=["--latency", str(args.latency)],
                )  # fmt: skip
                rates = {}
                try:
                    for n in (int(x) for x in args.workers.split(",")):
                        m = workers(server, tmp, admin, n, args)
                        rates[n] = m["pages"] / m["span"]
                        print(
                            f"  {n} worker(s): {m['pages']:6,} pages in {m['span']:6.2f} s = "
                            f"{rates[n]:6.0f} pages/s (wall {m['wall']:.1f} s), "
                            f"{m['trips'] / max(m['pages'], 1):.3f} DB round trips/page, "
                            f"per worker {sorted(m['per_worker'].values())}, one request per "
                            f"host at a time: {m['polite']}, least gap {m['min_gap']:.3f} s, "
                            f"duplicate fetches {m['duplicates']}"
                        )
                        if args.trips:
                            pages = max(m["pages"], 1)
                            for site, k in m["by"].most_common(12):
                                print(f"      {k:6,} = {k / pages:.4f}/page  {site}")
                finally:
                    server.stop()
                if 1 in rates:
                    for n, r in rates.items():
                        if n > 1:
                            print(
                                f"  ratio: {n} workers {r / rates[1]:.2f}x one (4: target >= 3.5x)"
                            )
            if not args.skip_peer:
                per_site = max(1, args.peer_pages // 50)
                print(f"\npeer: crawl_peers' site, 50 hosts x {per_site} pages, no delay")
                server = Server(tmp, profile="clean", sites=50, pages=per_site, extra=[])
                try:
                    lite, pg = peer(
                        server, tmp, admin, depth=5,
                        server_log=server_log if args.statements else None,
                    )  # fmt: skip
                finally:
                    server.stop()
                for name, m in (("SQLite", lite), ("PostgreSQL", pg)):
                    print(
                        f"  {name:10} {m['pages']:7,} pages in {m['wall']:6.2f} s = "
                        f"{m['pages'] / m['wall']:6,.0f} pages/s, "
                        f"{1000 * m['cpu'] / max(m['pages'], 1):.2f} CPU ms/page"
                    )
                ratio = (pg["pages"] / pg["wall"]) / (lite["pages"] / lite["wall"])
                print(f"  ratio: one PostgreSQL worker {ratio:.2f}x SQLite (target >= 0.8x)")
                print(
                    f"  DB round trips: {pg['trips']:,} = {pg['trips'] / max(pg['pages'], 1):.3f} "
                    "per fetched page (target <= 0.05)"
                )
                print(f"  (test web on CPU {SERVER_CPU}, crawlers on CPU {CRAWLER_CPU})")
                times = pg.get("statements")
                if times:
                    total = sum(ms for _, ms in times.values())
                    print(f"  server time of the worker's statements: {total / 1000:.2f} s; most:")
                    for key, (n, ms) in sorted(times.items(), key=lambda kv: -kv[1][1])[:6]:
                        print(f"    {ms / 1000:6.2f} s {n:6,}x  {key}")
        finally:
            if pg_server is not None:
                pg_server.__exit__(None, None, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
