"""``dustless testweb``: serve the synthetic test web on loopback until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from dustless.errors import InvalidOption

if TYPE_CHECKING:  # the server (and aiohttp) is imported only when the command runs
    from dustless.testweb import TestWebServer

HELP = "serve the synthetic test web on loopback"

_EPILOG = """output (one per line, flushed before serving):
  serving 127.0.0.1:PORT      then  host NAME  for every host,  seed URL  for every seed

examples:
  dustless testweb --seed 7 --profile dirty --port 8080 --truth truth.tsv
  dustless testweb --port 0 --profile clean --sites 100 --pages-per-site 100
  dustless testweb --profile real --seed 4 --sites 6 --pages-per-site 500 --truth truth.tsv
  curl --resolve 'site1.test:8080:127.0.0.1' http://site1.test:8080/
  curl http://127.0.0.1:8080/__testweb/stats

A crawler reaches the hosts with --resolve '*.test:127.0.0.1' and, for the pattern-script
site of seed 002, --resolve 'www.web.com:127.0.0.1'. See docs/testweb.md."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG
    parser.add_argument("--seed", type=int, default=1, help="generation seed (default 1)")
    parser.add_argument("--sites", type=int, default=12, help="generated sites (default 12)")
    parser.add_argument(
        "--pages-per-site", type=int, default=30, metavar="N", help="pages per site (default 30)"
    )
    parser.add_argument(
        "--profile",
        choices=("clean", "dirty", "hostile", "mixed", "field", "sitemaps", "canonical", "real"),
        default="mixed",
        help="clean: no aliases or traps; dirty: aliasing personalities; "
        "hostile: traps and misbehaviour; mixed: all (default); field: dirty's plus www "
        "twins linking to their own host, dynamic pages and a templated site; "
        "sitemaps: sitemaps and feeds, good and hostile; canonical: dirty's sites declaring "
        "their canonical URLs, and sites whose declarations are wrong; real: sites of Debian's "
        "documentation whose server behaviours are drawn from the seed (/__testweb/info)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8080, help="port; 0 picks a free one")
    parser.add_argument(
        "--addresses",
        type=int,
        default=1,
        metavar="N",
        help="spread hosts over N loopback addresses from --host (127.0.0.1 … 127.0.0.N)",
    )
    parser.add_argument("--truth", type=Path, metavar="FILE", help="write the truth TSV here")
    parser.add_argument("--day", type=int, default=0, help="simulated day to start at")
    parser.add_argument(
        "--crawl-delay",
        type=float,
        metavar="S",
        help="crawl-delay announced by hostile robots.txt (default 0.5–2 s per site)",
    )
    parser.add_argument(
        "--loop",
        choices=("auto", "asyncio", "uvloop"),
        default="auto",
        help="event loop: uvloop when installed (auto, the default), or asyncio",
    )
    parser.add_argument(
        "--slow", type=float, default=3.0, metavar="S", help="slow first byte wait (default 3)"
    )
    parser.add_argument(
        "--stall", type=float, default=8.0, metavar="S", help="mid-body stall (default 8)"
    )
    parser.add_argument(
        "--latency",
        type=float,
        default=0.0,
        metavar="S",
        help="every answer waits S seconds first, as from a server far away (default 0)",
    )
    parser.add_argument(
        "--gzip",
        action="store_true",
        help="send pages gzip'd to clients that accept it, every other one chunked",
    )


def _addresses(host: str, count: int) -> tuple[str, ...]:
    try:
        first = ipaddress.IPv4Address(host)
    except ValueError as exc:
        raise InvalidOption(f"--host must be an IPv4 address, not {host!r}") from exc
    if count < 1 or count > 250:
        raise InvalidOption("--addresses must be between 1 and 250")
    if count > 1 and not first.is_loopback:
        raise InvalidOption("--addresses > 1 needs a loopback --host")
    return tuple(str(first + i) for i in range(count))


def run(args: argparse.Namespace) -> int:
    from dustless.testweb import Profile, TestWebServer, WebConfig

    if args.sites < 1 or args.pages_per_site < 3:
        raise InvalidOption("--sites must be ≥ 1 and --pages-per-site ≥ 3")
    if args.day < 0:
        raise InvalidOption("--day must be ≥ 0")
    if not 0 <= args.port <= 65535:
        raise InvalidOption(f"invalid port {args.port}")
    if args.truth is not None:
        _check_truth_path(args.truth)
    cfg = WebConfig(
        seed=args.seed,
        sites=args.sites,
        pages_per_site=args.pages_per_site,
        profile=Profile(args.profile),
        port=args.port,
        addresses=_addresses(args.host, args.addresses),
        crawl_delay=args.crawl_delay,
        slow_seconds=args.slow,
        stall_seconds=args.stall,
        latency=max(0.0, args.latency),
        gzip=args.gzip,
    )
    server = TestWebServer(cfg, truth=args.truth, day=args.day)
    try:
        with asyncio.Runner(loop_factory=_loop_factory(args.loop)) as runner:
            runner.run(_serve(server))
    except OSError as exc:
        raise InvalidOption(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from exc
    return 0


def _check_truth_path(path: Path) -> None:
    """Where the truth goes, checked before the server starts: the same ``error:`` line
    (exit 2) as any other bad argument, not the system's words after a start."""
    if path.is_dir():
        raise InvalidOption(f"--truth {path}: is a directory; give a file name (truth.tsv)")
    parent = path.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "no such directory"
        raise InvalidOption(f"--truth {path}: {parent}: {what}")


def _loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise InvalidOption("--loop uvloop: uvloop is not installed") from None
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


async def _serve(server: TestWebServer) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await server.start()
        assert server.web is not None
        out = [f"serving {server.cfg.addresses[0]}:{server.port}"]
        out += [f"host {h}" for h in server.web.hosts]
        out += [f"seed {s}" for s in server.web.seeds]
        sys.stdout.write("\n".join(out) + "\n")
        sys.stdout.flush()
        await stop.wait()
    finally:
        await server.stop()
