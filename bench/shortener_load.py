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

The features of a real deployment are measured against the plain service in the same run
(goal: at least 0.9x):

* keys on   — the server requires API keys (no ``--public``); redirects need none, creates
  send one (``Authorization: Bearer``);
* bots      — hot redirects whose User-Agents alternate between link-preview bots and
  browsers (each click classified and counted apart);
* baseline  — with ``--baseline-src DIR`` (a checkout of an earlier commit's tree, e.g.
  ``git archive 7f8833d src | tar -x -C DIR``), that code's hot/cold redirects too;
* PostgreSQL — with ``--pg auto`` (a throwaway server, initdb + pg_ctl) or ``--pg DSN``:
  ``--pg-links`` links, hot and cold redirects with one instance (1 worker) and with two
  instances (1 worker each, one ``wrk`` per instance, run at once: their sums and worst p99).

Each redirect run is repeated ``--repeat`` times (hot and cold alternating), because one
10-second run on a shared 2-core machine says little about a p99: the summary gives the
median and the worst run, and the load average before each run.

    .venv/bin/python bench/shortener_load.py [--links 1000000] [--duration 10] [--repeat 3]
                                             [--keep DIR] [--baseline-src DIR] [--pg auto|DSN]
"""

from __future__ import annotations

import argparse
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


_COLUMNS = "id, code, long_url, url_key, redirect, created_at, expires_at, is_alias, shared"


def codec_of(db: str, src: Path) -> object:
    """Create the schema with the code of ``src`` (so an older tree gets its own schema) and
    return its code key's codec (computed here with this tree's Codec: the same function)."""
    code = (
        "import asyncio, sys; sys.path.insert(0, sys.argv[1]);"
        "from dustless.shortener import open_store\n"
        "async def main():\n"
        "    store = await open_store(sys.argv[2]); await store.close()\n"
        "asyncio.run(main())"
    )
    subprocess.run([sys.executable, "-c", code, str(src), db], check=True)
    sys.path.insert(0, str(HERE.parent / "src"))
    from dustless.shortener._codes import Codec

    if db.startswith("sqlite:///"):
        conn = sqlite3.connect(db[len("sqlite:///") :])
        (key,) = conn.execute("SELECT value FROM meta WHERE name = 'code_key'").fetchone()
        conn.close()
    else:
        import psycopg

        with psycopg.connect(db) as pg:
            row = pg.execute("SELECT value FROM meta WHERE name = 'code_key'").fetchone()
            assert row is not None
            key = row[0]
    return Codec(bytes.fromhex(key))


def fill(db_path: Path, n: int, src: Path = HERE.parent / "src") -> list[str]:
    """Create the schema (with ``src``'s code), then bulk-insert ``n`` links; the codes."""
    codec = codec_of(f"sqlite:///{db_path}", src)
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
            conn.executemany(f"INSERT INTO links ({_COLUMNS}) VALUES ({'?, ' * 8}?)", batch)
            batch.clear()
    conn.executemany(f"INSERT INTO links ({_COLUMNS}) VALUES ({'?, ' * 8}?)", batch)
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
local agents = {%s}
function setup(thread) thread:set("offset", math.random(0, n - 1)) end
request = function()
  i = i + 1
  local k = ((i + offset) %% n) * width
  if #agents == 0 then return wrk.format("GET", blob:sub(k + 1, k + width)) end
  return wrk.format("GET", blob:sub(k + 1, k + width), {["User-Agent"] = agents[i %% #agents + 1]})
end
"""
# Half link-preview bots, half browsers: every click is classified (bot detection on).
AGENTS = (
    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 "
    "Safari/537.36",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
)

LUA_CREATE = """
local auth = "%s"
local i = 0
local tag = ""
local counter = 0
function setup(thread) counter = counter + 1; thread:set("tag", tostring(counter)) end
request = function()
  i = i + 1
  local body = '{"longUrl": "https://example.org/new/' .. tag .. '/' .. i .. '/page?x=1"}'
  local headers = {["Content-Type"] = "application/json"}
  if auth ~= "" then headers["Authorization"] = auth end
  return wrk.format("POST", "/api/v1/data/shorten", headers, body)
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
    names: tuple[str, ...] = ("hot", "cold"),
) -> None:
    """``--repeat`` rounds of hot then cold (one ``wrk`` run each) as ``{server}_{name}_{k}``,
    each with the CPU seconds the workers' event loops and their other threads (the click and
    create writers) used during the run."""
    for k in range(1, args.repeat + 1):
        for name in names:
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


def start_shortener(
    db: str, args: argparse.Namespace, env: dict[str, str], *extra: str, workers: int | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """``dustless shortener serve`` on a free port (rate limits off); (process, base URL)."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dustless",
            "shortener",
            "serve",
            "--db",
            db,
            "--port",
            str(port),
            "--workers",
            str(workers or args.workers),
            "--rate-limit",
            "0",
            "--log-level",
            "warning",
            "--click-interval",
            str(args.click_interval),
            *extra,
        ],
        env=env,
    )
    wait_ready(port, "/healthz", proc)
    return proc, f"http://127.0.0.1:{port}"


def start_postgres(work: Path) -> tuple[str, list[str], Path]:
    """A throwaway PostgreSQL server (as the tests start one); (DSN, pg_ctl prefix, datadir)."""
    import pwd

    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if not initdb or not pg_ctl:
        raise SystemExit("--pg auto needs PostgreSQL's initdb and pg_ctl on PATH")
    del work  # the work directory is private to root: the server's user could not enter it
    root = Path(tempfile.mkdtemp(prefix="shortener-bench-pg-"))
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if prefix:
        entry = pwd.getpwnam("postgres")
        os.chown(root, entry.pw_uid, entry.pw_gid)
    data = root / "data"
    subprocess.run(
        [*prefix, initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync"],
        check=True,
        capture_output=True,
        cwd=root,
    )
    port = free_port()
    options = f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={root}"
    subprocess.run(
        [*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"],
        check=True,
        capture_output=True,
        cwd=root,
    )
    return f"postgresql://postgres@127.0.0.1:{port}/postgres", [*prefix, pg_ctl], data


def fill_postgres(dsn: str, n: int) -> list[str]:
    import psycopg

    codec = codec_of(dsn, HERE.parent / "src")
    codes = []
    now = time.time()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE links, clicks")
        with conn.cursor() as cur, cur.copy(f"COPY links ({_COLUMNS}) FROM STDIN") as copy:
            for i in range(1, n + 1):
                code = codec.encode(i)  # type: ignore[attr-defined]
                codes.append(code)
                url = f"https://example.com/articles/{i}/a-fairly-typical-long-path?ref=bench"
                copy.write_row((i, code, url, url, 302, now, None, False, True))
        conn.execute("SELECT setval('shortener_link_ids', %s)", (n,))
        conn.execute("VACUUM ANALYZE links")
    return codes


def paired_runs(
    results: dict[str, dict[str, float]],
    prefix: str,
    bases: list[str],
    work: Path,
    args: argparse.Namespace,
) -> None:
    """One ``wrk`` per instance at once (the connections split between them), hot then cold:
    the sum of their rates and the worst of their p99s, as ``{prefix}_{name}_{k}``."""
    import concurrent.futures

    per = max(1, args.connections // len(bases))
    for k in range(1, args.repeat + 1):
        for name in ("hot", "cold"):
            script = work / f"{name}.lua"
            with concurrent.futures.ThreadPoolExecutor(len(bases)) as pool:
                futures = [pool.submit(run_wrk, base, script, args.duration, per) for base in bases]
                runs = [f.result() for f in futures]
            merged = dict(runs[0])
            merged["rps"] = sum(r["rps"] for r in runs)
            merged["p99_ms"] = max(r["p99_ms"] for r in runs)
            merged["p50_ms"] = max(r["p50_ms"] for r in runs)
            merged["non_2xx_3xx"] = sum(r["non_2xx_3xx"] for r in runs)
            results[f"{prefix}_{name}_{k}"] = merged


def write_scripts(work: Path, tag: str, codes: list[str]) -> None:
    """``{tag}hot.lua``/``{tag}cold.lua``: 100 hot codes, every code in random order."""
    rng = random.Random(7)
    hot = rng.sample(codes, 100)
    cold = codes[:]
    rng.shuffle(cold)
    width = 1 + len(hot[0])
    if any(len(c) + 1 != width for c in cold):
        raise SystemExit("codes of different lengths: the wrk script needs fixed-width paths")
    (work / f"{tag}hot.paths").write_text("".join(f"/{c}" for c in hot))
    (work / f"{tag}cold.paths").write_text("".join(f"/{c}" for c in cold))
    (work / f"{tag}hot.lua").write_text(LUA_PATHS % (work / f"{tag}hot.paths", width, ""))
    (work / f"{tag}cold.lua").write_text(LUA_PATHS % (work / f"{tag}cold.paths", width, ""))
    agents = ", ".join(json.dumps(a) for a in AGENTS)
    (work / f"{tag}bots.lua").write_text(LUA_PATHS % (work / f"{tag}hot.paths", width, agents))


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
    parser.add_argument(
        "--baseline-src",
        help="an earlier tree's src/ directory: its shortener is measured in the same run",
    )
    parser.add_argument("--pg", help="'auto' (a throwaway server) or a DSN: the PostgreSQL runs")
    parser.add_argument("--pg-links", type=int, default=200_000)
    parser.add_argument("--skip-bare", action="store_true", help="leave out the bare dict app")
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
    write_scripts(work, "", codes)
    (work / "bare_codes.tsv").write_text(
        "".join(
            f"{c}\thttps://example.com/articles/{i}/a-fairly-typical-long-path?ref=bench\n"
            for i, c in enumerate(codes, start=1)
        )
    )
    hot = codes[:1]
    del codes

    results: dict[str, dict[str, float]] = {}
    paths = [args.extra_path] if args.extra_path else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(HERE.parent / "src")])}
    probe = subprocess.run(
        [sys.executable, "-c", "import httptools, uvloop"], env=env, capture_output=True
    )
    stack = "httptools+uvloop" if probe.returncode == 0 else "h11+asyncio"

    # The plain service (anyone may create, as before keys existed).
    proc, base = start_shortener(f"sqlite:///{db}", args, env, "--public")
    try:
        redirect_runs(results, "shortener", base, work, args, proc.pid)
        (work / "create.lua").write_text(LUA_CREATE % "")
        results["shortener_create"] = run_wrk(
            base, work / "create.lua", args.duration, args.connections
        )
    finally:
        stop(proc)

    # Keys on: the same database, creation needs a key (redirects never do).
    key = (
        subprocess.run(
            [
                sys.executable,
                "-m",
                "dustless",
                "shortener",
                "key",
                "create",
                "bench",
                "--db",
                f"sqlite:///{db}",
            ],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        or "dls_unknown"
    )  # a second run on a --keep database: the name exists
    proc, base = start_shortener(f"sqlite:///{db}", args, env)
    try:
        redirect_runs(results, "keys", base, work, args, proc.pid, ("hot", "cold", "bots"))
        (work / "create_key.lua").write_text(LUA_CREATE % f"Bearer {key}")
        results["keys_create"] = run_wrk(
            base, work / "create_key.lua", args.duration, args.connections
        )
    finally:
        stop(proc)

    if args.baseline_src:
        base_db = work / "baseline.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{base_db}{suffix}").unlink(missing_ok=True)
        base_codes = fill(base_db, args.links, Path(args.baseline_src))
        write_scripts(work, "base_", base_codes)
        del base_codes
        base_env = {**env, "PYTHONPATH": os.pathsep.join([*paths, args.baseline_src])}
        proc, base = start_shortener(f"sqlite:///{base_db}", args, base_env)
        try:
            for k in range(1, args.repeat + 1):
                for name in ("hot", "cold"):
                    results[f"baseline_{name}_{k}"] = run_wrk(
                        base, work / f"base_{name}.lua", args.duration, args.connections
                    )
        finally:
            stop(proc)

    if not args.skip_bare:
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
        try:
            wait_ready(port, "/" + hot[0], bare)
            redirect_runs(results, "bare", f"http://127.0.0.1:{port}", work, args, bare.pid)
        finally:
            stop(bare)

    pg_stop: list[str] = []
    if args.pg:
        if args.pg == "auto":
            dsn, ctl, data = start_postgres(work)
            pg_stop = [*ctl, "-D", str(data), "-m", "immediate", "-w", "stop"]
            pg_root = data.parent
        else:
            dsn = args.pg
        try:
            pg_codes = fill_postgres(dsn, args.pg_links)
            write_scripts(work, "pg_", pg_codes)
            for name in ("hot", "cold"):
                (work / f"{name}.lua").rename(work / f"sqlite_{name}.lua")
                (work / f"pg_{name}.lua").rename(work / f"{name}.lua")
            proc, base = start_shortener(dsn, args, env, "--public", workers=1)
            try:
                redirect_runs(results, "pg1", base, work, args, proc.pid)
            finally:
                stop(proc)
            first, base1 = start_shortener(dsn, args, env, "--public", workers=1)
            second, base2 = start_shortener(dsn, args, env, "--public", workers=1)
            try:
                paired_runs(results, "pg2", [base1, base2], work, args)
            finally:
                stop(first)
                stop(second)
        finally:
            if pg_stop:
                subprocess.run(pg_stop, capture_output=True, check=False)
                shutil.rmtree(pg_root, ignore_errors=True)

    medians = {
        prefix: median_of(results, prefix)
        for prefix in sorted({k.rsplit("_", 1)[0] for k in results if k[-1].isdigit()})
    }
    plain_hot, plain_cold = medians["shortener_hot"], medians["shortener_cold"]

    def ratio(a: str, b: str) -> float | None:
        if a in medians and b in medians:
            return round(medians[a]["rps"] / medians[b]["rps"], 3)
        return None

    summary = {
        "links": args.links,
        "workers": args.workers,
        "cores": os.cpu_count(),
        "uvicorn_stack": stack,
        "load_average_after": os.getloadavg(),
        "repeat": args.repeat,
        "results": results,
        "medians": medians,
        "ratios": {
            "keys_on_hot_vs_plain": ratio("keys_hot", "shortener_hot"),
            "keys_on_cold_vs_plain": ratio("keys_cold", "shortener_cold"),
            "bots_hot_vs_plain_hot": ratio("keys_bots", "shortener_hot"),
            "plain_hot_vs_baseline": ratio("shortener_hot", "baseline_hot"),
            "plain_cold_vs_baseline": ratio("shortener_cold", "baseline_cold"),
            "keys_hot_vs_baseline": ratio("keys_hot", "baseline_hot"),
            "keys_cold_vs_baseline": ratio("keys_cold", "baseline_cold"),
            "bots_vs_baseline_hot": ratio("keys_bots", "baseline_hot"),
            "hot_vs_bare": ratio("shortener_hot", "bare_hot"),
            "cold_vs_bare": ratio("shortener_cold", "bare_cold"),
            "pg_two_vs_one_hot": ratio("pg2_hot", "pg1_hot"),
            "pg_two_vs_one_cold": ratio("pg2_cold", "pg1_cold"),
            "keyed_creates_vs_plain": round(
                results["keys_create"]["rps"] / results["shortener_create"]["rps"], 3
            ),
        },
        "targets": {
            "redirects_per_s>=11600_hot": plain_hot["rps"] >= 11_600,
            "redirects_per_s>=11600_cold": plain_cold["rps"] >= 11_600,
            "p99<10ms_hot": plain_hot["p99_ms"] < 10,
            "p99<10ms_cold": plain_cold["p99_ms"] < 10,
            "creates_per_s>=1160": results["shortener_create"]["rps"] >= 1_160,
        },
    }
    print(
        f"{'run':<20}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'bad':>7}{'load':>7}\n"
        + "\n".join(
            f"{name:<20}{r['rps']:>10.0f}{r['p50_ms']:>9.2f}{r['p99_ms']:>9.2f}"
            f"{int(r['non_2xx_3xx']):>7}{r['load1_before']:>7.2f}"
            for name, r in results.items()
        )
    )
    print(f"medians of {args.repeat} runs:")
    for prefix, m in medians.items():
        print(f"  {prefix:<16}{m['rps']:>10.0f}/s  p99 {m['p99_ms']:.2f} ms")
    print(f"uvicorn stack: {stack}; load average {os.getloadavg()}")
    print("ratios: " + ", ".join(f"{k} {v}" for k, v in summary["ratios"].items() if v))
    print(json.dumps(summary, indent=2))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
