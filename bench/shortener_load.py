"""Load benchmark of ``dustless shortener serve`` against seed 003 ch. 8's rates.

Seed 003 개략적 추정: 100 million links a day ≈ 1,160 creates/s, ten reads per write ≈ 11,600
redirects/s. This fills SQLite with 1,000,000 links, serves them with 2 workers on 127.0.0.1
and drives ``wrk`` (Debian's ``/usr/bin/wrk``) at

* hot codes  — 100 codes, served from each worker's LRU cache;
* cold codes — all 1,000,000 codes in random order, so nearly every request misses the cache
  and reads SQLite;
* creates    — ``POST /api/v1/data/shorten`` with a new long URL each time (rate limit off,
  every create fsynced before its 201);

and the same hot/cold redirects against a bare uvicorn + Starlette app answering from a dict
of the same million codes, measured in the same run (the peer to compare with).

Each redirect run is repeated ``--repeat`` times (hot and cold alternating), because one
10-second run on a shared 2-core machine says little about a p99: the summary gives the
median and the worst run, and the load average before each run.

    .venv/bin/python bench/shortener_load.py [--links 1000000] [--duration 10] [--repeat 3]
                                             [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import random
import re
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WRK = shutil.which("wrk") or "/usr/bin/wrk"


# -- the peer: a bare uvicorn + Starlette dict lookup ----------------------------------------


def bare_factory():  # type: ignore[no-untyped-def]
    """A Starlette app that redirects from a dict loaded from ``BARE_CODES`` (one worker)."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    table: dict[str, str] = {}
    with open(os.environ["BARE_CODES"], encoding="ascii") as f:
        for line in f:
            code, url = line.rstrip("\n").split("\t")
            table[code] = url

    async def redirect(request):  # type: ignore[no-untyped-def]
        url = table.get(request.path_params["code"])
        if url is None:
            return PlainTextResponse("not found", 404)
        return Response(status_code=302, headers={"location": url})

    return Starlette(routes=[Route("/{code}", redirect)])


# -- helpers --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(port: int, path: str, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            conn.request("GET", path)
            conn.getresponse().read()
            return
        except OSError:
            time.sleep(0.2)  # a benchmark harness polling a server it started
        finally:
            conn.close()
    raise SystemExit(f"server on port {port} did not come up")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def fill(db_path: Path, n: int) -> list[str]:
    """Create the schema through the store, then bulk-insert ``n`` links; return the codes."""
    sys.path.insert(0, str(HERE.parent / "src"))
    from dustless.shortener import open_store

    async def key() -> object:
        store = await open_store(f"sqlite:///{db_path}")
        codec = store.codec
        await store.close()
        return codec

    codec = asyncio.run(key())
    codes = []
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("BEGIN")
    batch = []
    now = time.time()
    for i in range(1, n + 1):
        code = codec.encode(i)  # type: ignore[attr-defined]
        codes.append(code)
        url = f"https://example.com/articles/{i}/a-fairly-typical-long-path?ref=bench"
        batch.append((i, code, url, url, 302, now, None, 0, 1))
        if len(batch) == 50_000:
            conn.executemany("INSERT INTO links VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", batch)
            batch.clear()
    conn.executemany("INSERT INTO links VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", batch)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return codes


def reuse(db: Path, n: int) -> list[str] | None:
    """The codes of a database a previous ``--keep`` run filled, if it has ``n`` links."""
    if not db.exists():
        return None
    conn = sqlite3.connect(db)
    try:
        codes = [
            c for (c,) in conn.execute("SELECT code FROM links WHERE id <= ? ORDER BY id", (n,))
        ]
        conn.execute("DELETE FROM links WHERE id > ?", (n,))  # creates of the previous run
        conn.commit()
    finally:
        conn.close()
    return codes if len(codes) == n else None


# The paths are one string of fixed-width "/CODE" records rather than a Lua table of a
# million strings: LuaJIT's collector traverses a table in one atomic step, and with the
# garbage wrk.format makes per request it did so often enough to stall wrk's own event loop
# — measured on the bare dict app, cold p99 37.6 ms with the table, 6.2 ms with the string,
# same server. Those stalls were counted as server latency.
LUA_PATHS = """
local f = assert(io.open("%s", "rb"))
local blob = f:read("*a")
f:close()
local width = %d
local n = #blob / width
local i = 0
local offset = 0
function setup(thread) thread:set("offset", math.random(0, n - 1)) end
request = function()
  i = i + 1
  local k = ((i + offset) %% n) * width
  return wrk.format("GET", blob:sub(k + 1, k + width))
end
"""

LUA_CREATE = """
local i = 0
local tag = ""
local counter = 0
function setup(thread) counter = counter + 1; thread:set("tag", tostring(counter)) end
request = function()
  i = i + 1
  local body = '{"longUrl": "https://example.org/new/' .. tag .. '/' .. i .. '/page?x=1"}'
  return wrk.format("POST", "/api/v1/data/shorten",
                    {["Content-Type"] = "application/json"}, body)
end
"""


def run_wrk(base: str, script: Path, duration: int, connections: int) -> dict[str, float]:
    load = os.getloadavg()[0]  # the machine may be shared: say how busy it was
    out = subprocess.run(
        [
            WRK,
            "-t2",
            f"-c{connections}",
            f"-d{duration}s",
            "--latency",
            "-s",
            str(script),
            base,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"99%\s+([\d.]+\w+)", out).group(1))  # type: ignore[union-attr]
    p50 = _ms(re.search(r"50%\s+([\d.]+\w+)", out).group(1))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    return {
        "rps": rps,
        "p50_ms": p50,
        "p99_ms": p99,
        "non_2xx_3xx": float(errors.group(1)) if errors else 0.0,
        "socket_errors": 1.0 if socket_errors else 0.0,
        "load1_before": load,
    }


def worker_threads_cpu(parent: int) -> dict[tuple[int, int], tuple[bool, float]]:
    """CPU seconds of every thread of ``parent``'s child processes (the uvicorn workers), each
    marked ``True`` for a process's main thread (its event loop). Linux ``/proc`` only."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[tuple[int, int], tuple[bool, float]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1]) != parent:
                continue
            for task in (proc / "task").iterdir():
                # Fields after the command name: state, ppid, … utime is the 12th, stime 13th.
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                cpu = (int(fields[11]) + int(fields[12])) / tick
                out[(int(proc.name), int(task.name))] = (task.name == proc.name, cpu)
        except (OSError, ValueError, IndexError):
            continue  # a process or thread that ended while we looked
    return out


def redirect_runs(
    results: dict[str, dict[str, float]],
    server: str,
    base: str,
    work: Path,
    args: argparse.Namespace,
    pid: int,
) -> None:
    """``--repeat`` rounds of hot then cold (one ``wrk`` run each) as ``{server}_{name}_{k}``,
    each with the CPU seconds the workers' event loops and their other threads (the click and
    create writers) used during the run."""
    for k in range(1, args.repeat + 1):
        for name in ("hot", "cold"):
            before = worker_threads_cpu(pid)
            result = run_wrk(base, work / f"{name}.lua", args.duration, args.connections)
            after = worker_threads_cpu(pid)
            spent = {
                key: cpu - before.get(key, (main, 0.0))[1] for key, (main, cpu) in after.items()
            }
            result["loop_cpu_s"] = sum(v for key, v in spent.items() if after[key][0])
            result["other_threads_cpu_s"] = sum(v for key, v in spent.items() if not after[key][0])
            results[f"{server}_{name}_{k}"] = result


def median_of(results: dict[str, dict[str, float]], prefix: str) -> dict[str, float]:
    """Per field, the median over the runs named ``{prefix}_1``, ``{prefix}_2``, …"""
    runs = [r for k, r in results.items() if k.rsplit("_", 1)[0] == prefix]
    return {field: statistics.median(r[field] for r in runs) for field in runs[0]}


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(\w+)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}[unit]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--links", type=int, default=1_000_000)
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each redirect scenario")
    parser.add_argument(
        "--click-interval",
        type=float,
        default=1.0,
        help="the shortener's seconds between click batches (1000: none during a run, the A/B "
        "of docs/shortener.md)",
    )
    parser.add_argument("--keep", help="work directory to keep and reuse (default: a temp dir)")
    parser.add_argument(
        "--extra-path",
        help="directory prepended to PYTHONPATH of both servers (e.g. one with httptools and "
        "uvloop installed, which uvicorn then picks up)",
    )
    args = parser.parse_args()
    if not os.path.exists(WRK):
        print("wrk not found (apt install wrk)", file=sys.stderr)
        return 2

    work = Path(args.keep or tempfile.mkdtemp(prefix="shortener-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "bench.db"
    codes = reuse(db, args.links) if args.keep else None
    if codes is None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        t0 = time.perf_counter()
        codes = fill(db, args.links)
        print(f"filled {args.links:,} links in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    rng = random.Random(7)
    hot = rng.sample(codes, 100)
    cold = codes[:]
    rng.shuffle(cold)
    width = 1 + len(hot[0])
    if any(len(c) + 1 != width for c in cold):
        raise SystemExit("codes of different lengths: the wrk script needs fixed-width paths")
    (work / "hot.paths").write_text("".join(f"/{c}" for c in hot))
    (work / "cold.paths").write_text("".join(f"/{c}" for c in cold))
    (work / "bare_codes.tsv").write_text(
        "".join(
            f"{c}\thttps://example.com/articles/{i}/a-fairly-typical-long-path?ref=bench\n"
            for i, c in enumerate(codes, start=1)
        )
    )
    (work / "hot.lua").write_text(LUA_PATHS % (work / "hot.paths", width))
    (work / "cold.lua").write_text(LUA_PATHS % (work / "cold.paths", width))
    (work / "create.lua").write_text(LUA_CREATE)
    del codes, cold

    results: dict[str, dict[str, float]] = {}
    paths = [args.extra_path] if args.extra_path else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(HERE.parent / "src")])}
    probe = subprocess.run(
        [sys.executable, "-c", "import httptools, uvloop"], env=env, capture_output=True
    )
    stack = "httptools+uvloop" if probe.returncode == 0 else "h11+asyncio"

    # The shortener.
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dustless",
            "shortener",
            "serve",
            "--db",
            f"sqlite:///{db}",
            "--port",
            str(port),
            "--workers",
            str(args.workers),
            "--rate-limit",
            "0",
            "--log-level",
            "warning",
            "--click-interval",
            str(args.click_interval),
        ],
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(port, "/healthz", proc)
        redirect_runs(results, "shortener", base, work, args, proc.pid)
        results["shortener_create"] = run_wrk(
            base, work / "create.lua", args.duration, args.connections
        )
    finally:
        stop(proc)

    # The peer.
    port = free_port()
    bare = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import uvicorn; uvicorn.run('shortener_load:bare_factory', factory=True,"
            f" host='127.0.0.1', port={port}, workers={args.workers}, log_level='warning',"
            f" access_log=False, app_dir={str(HERE)!r})",
        ],
        env={**env, "BARE_CODES": str(work / "bare_codes.tsv")},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(port, "/" + hot[0], bare)
        redirect_runs(results, "bare", base, work, args, bare.pid)
    finally:
        stop(bare)

    s_hot, s_cold = median_of(results, "shortener_hot"), median_of(results, "shortener_cold")
    b_hot, b_cold = median_of(results, "bare_hot"), median_of(results, "bare_cold")
    worst_cold_p99 = max(r["p99_ms"] for k, r in results.items() if k.startswith("shortener_cold"))
    create = results["shortener_create"]
    summary = {
        "links": args.links,
        "workers": args.workers,
        "cores": os.cpu_count(),
        "uvicorn_stack": stack,
        "load_average_after": os.getloadavg(),
        "results": results,
        "repeat": args.repeat,
        "medians": {
            "shortener_hot": s_hot,
            "shortener_cold": s_cold,
            "bare_hot": b_hot,
            "bare_cold": b_cold,
        },
        "worst_cold_p99_ms": worst_cold_p99,
        "ratio_hot_vs_bare": round(s_hot["rps"] / b_hot["rps"], 3),
        "ratio_cold_vs_bare": round(s_cold["rps"] / b_cold["rps"], 3),
        "targets": {
            "redirects_per_s>=11600_hot": s_hot["rps"] >= 11_600,
            "redirects_per_s>=11600_cold": s_cold["rps"] >= 11_600,
            "p99<10ms_hot": s_hot["p99_ms"] < 10,
            "p99<10ms_cold": s_cold["p99_ms"] < 10,
            "p99<10ms_cold_every_run": worst_cold_p99 < 10,
            "creates_per_s>=1160": create["rps"] >= 1_160,
        },
    }
    print(
        f"{'run':<18}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'bad':>6}{'load':>7}\n"
        + "\n".join(
            f"{name:<18}{r['rps']:>10.0f}{r['p50_ms']:>9.2f}{r['p99_ms']:>9.2f}"
            f"{int(r['non_2xx_3xx']):>6}{r['load1_before']:>7.2f}"
            for name, r in results.items()
        )
    )
    print(
        f"medians of {args.repeat} runs: shortener hot {s_hot['rps']:.0f}/s p99 "
        f"{s_hot['p99_ms']:.2f} ms, cold {s_cold['rps']:.0f}/s p99 {s_cold['p99_ms']:.2f} ms "
        f"(worst cold p99 {worst_cold_p99:.2f} ms); bare hot {b_hot['rps']:.0f}/s, "
        f"cold {b_cold['rps']:.0f}/s"
    )
    print(
        f"shortener workers' CPU in a cold run (median, {args.duration} s, click interval "
        f"{args.click_interval:g} s): event loops {s_cold['loop_cpu_s']:.2f} s, other threads "
        f"(click and create writers) {s_cold['other_threads_cpu_s']:.2f} s"
    )
    print(f"uvicorn stack: {stack}; load average {os.getloadavg()}")
    print(
        f"ratio to bare uvicorn+Starlette dict: hot {summary['ratio_hot_vs_bare']}, "
        f"cold {summary['ratio_cold_vs_bare']}"
    )
    print(json.dumps(summary, indent=2))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
