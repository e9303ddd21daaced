"""How many pages per second ``dustless testweb --profile clean`` serves on one core.

The test web must serve ≥ 5,000 pages/s so the test web is never a crawl benchmark's bottleneck.
The server is one process (so one core); the load comes from ``wrk`` (with a Lua script
that cycles through every page of the truth file, each with its own Host header) or, when
``wrk`` is not installed, from an aiohttp client in another process. The peer measured in
the same run is a bare aiohttp low-level server answering one fixed 2 KB body: the ratio
says how much of aiohttp's own ceiling the test web keeps.

    .venv/bin/python bench/testweb_bench.py [--seconds 5] [--connections 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

PEER = r"""
import asyncio, sys
from aiohttp import web
if sys.argv[1:] == ["uvloop"]:
    import uvloop
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
BODY = b"<html><body>" + b"x" * 2000 + b"</body></html>"
async def handler(request):
    return web.Response(body=BODY, headers={"Content-Type": "text/html; charset=utf-8"})
async def main():
    runner = web.ServerRunner(web.Server(handler, access_log=None), handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print("serving 127.0.0.1:%d" % site._server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""

LUA = """
local reqs = {}
local i = 0
function init(args)
  for line in io.lines("%s") do
    local host, path = line:match("([^\\t]+)\\t(.*)")
    reqs[#reqs + 1] = wrk.format("GET", path, {["Host"] = host})
  end
end
function request()
  i = i %% #reqs + 1
  return reqs[i]
end
"""


PIN = False  # --pin: server on CPU 0, load generator on CPU 1 (taskset)


def pin(cpu: int) -> list[str]:
    return ["taskset", "-c", str(cpu)] if PIN and shutil.which("taskset") else []


def start(cmd: list[str]) -> tuple[subprocess.Popen[bytes], int]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if not line.startswith("serving "):
        proc.kill()
        raise SystemExit(f"server did not start: {cmd}")
    return proc, int(line.rsplit(":", 1)[1])


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()


def run_wrk(port: int, targets: Path, seconds: int, connections: int) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(LUA % targets)
        script = f.name
    try:
        out = subprocess.run(
            [*pin(1), "wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "-s", script,
             f"http://127.0.0.1:{port}/"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    finally:
        os.unlink(script)
    if "Non-2xx" in out:
        print(out, file=sys.stderr)
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    assert m, out
    return float(m.group(1))


async def _client(port: int, targets: list[tuple[str, str]], seconds: float, conc: int) -> float:
    import aiohttp

    done = 0
    deadline = time.monotonic() + seconds
    conn = aiohttp.TCPConnector(limit=conc)
    async with aiohttp.ClientSession(connector=conn) as session:

        async def worker(k: int) -> None:
            nonlocal done
            i = k
            while time.monotonic() < deadline:
                host, path = targets[i % len(targets)]
                i += conc
                async with session.get(
                    f"http://127.0.0.1:{port}{path}", headers={"Host": host}
                ) as resp:
                    await resp.read()
                done += 1

        start_t = time.monotonic()
        await asyncio.gather(*(worker(k) for k in range(conc)))
        return done / (time.monotonic() - start_t)


def measure(port: int, targets: list[tuple[str, str]], seconds: int, conc: int) -> float:
    if shutil.which("wrk"):
        with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
            f.writelines(f"{h}\t{p}\n" for h, p in targets)
            path = Path(f.name)
        try:
            return run_wrk(port, path, seconds, conc)
        finally:
            path.unlink()
    return asyncio.run(_client(port, targets, seconds, conc))


def bench_testweb(args: argparse.Namespace, loop: str) -> tuple[float, float | None, int, int]:
    """(pages/s, pages per server CPU-second, distinct pages, requests counted) on ``loop``.

    Pages per CPU-second is the figure for "one core" that a busy machine cannot spoil: the
    server is one thread, so its CPU time is time on one core.
    """
    with tempfile.TemporaryDirectory() as tmp:
        truth = Path(tmp) / "truth.tsv"
        cmd = [*pin(0), sys.executable, "-m", "dustless", "testweb", "--profile", "clean",
               "--port", "0", "--truth", str(truth), "--sites", str(args.sites),
               "--pages-per-site", str(args.pages_per_site), "--loop", loop]  # fmt: skip
        proc, port = start(cmd)
        try:
            targets = []
            for line in truth.read_text().splitlines():
                url, status, _rid = line.split("\t")
                if status == "200":
                    parts = urlsplit(url)
                    path = parts.path + ("?" + parts.query if parts.query else "")
                    targets.append((parts.hostname or "", path))
            measure(port, targets, 2, args.connections)  # warm the body cache
            with OPENER.open(f"http://127.0.0.1:{port}/__testweb/reset") as resp:
                resp.read()
            cpu0 = cpu_seconds(proc.pid)
            pages = measure(port, targets, args.seconds, args.connections)
            cpu1 = cpu_seconds(proc.pid)
            with OPENER.open(f"http://127.0.0.1:{port}/__testweb/stats") as resp:
                stats = json.loads(resp.read())
        finally:
            stop(proc)
    counted = int(stats["requests"])
    per_cpu = counted / (cpu1 - cpu0) if cpu0 is not None and cpu1 is not None else None
    return pages, per_cpu, len(targets), counted


def bench_peer(args: argparse.Namespace, loop: str) -> float:
    proc, port = start([*pin(0), sys.executable, "-c", PEER, loop])
    try:
        return measure(port, [("peer", "/")], args.seconds, args.connections)
    finally:
        stop(proc)


def main() -> None:
    global PIN
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--sites", type=int, default=50)
    ap.add_argument("--pages-per-site", type=int, default=100)
    ap.add_argument("--pin", action="store_true", help="pin server and load to CPUs 0 and 1")
    args = ap.parse_args()
    PIN = args.pin
    try:
        import uvloop  # noqa: F401

        loops = ["asyncio", "uvloop"]
    except ImportError:
        loops = ["asyncio"]
    tool = "wrk" if shutil.which("wrk") else "aiohttp client"
    print(f"load generator: {tool}, {args.connections} connections, {args.seconds} s")
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    best = 0.0
    for loop in loops:
        pages, per_cpu, distinct, counted = bench_testweb(args, loop)
        peer = bench_peer(args, loop)
        one_core = per_cpu if per_cpu is not None else pages
        best = max(best, one_core)
        print(
            f"{loop:8} testweb clean: {pages:7,.0f} pages/s wall, "
            f"{one_core:7,.0f} pages per server CPU-second "
            f"({distinct} distinct pages, {counted:,} requests) | "
            f"bare aiohttp, one fixed body: {peer:7,.0f}/s wall | wall ratio {pages / peer:.2f}"
        )
    print("target ≥ 5,000 pages/s on one core:", "met" if best >= 5000 else "NOT met")


if __name__ == "__main__":
    main()
