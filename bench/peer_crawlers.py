"""The crawlers bench/crawl_peers.py and bench/realdocs_peers.py time beside dustless.

Each peer is a command line for a whole process; ``command()`` gives it, or says why the
peer is missing and how to install it. What each peer does, and what it stores:

- ``lean``: bench/lean_loop.py, asyncio + aiohttp + lxml and a seen-set; stores nothing.
- ``wget2`` (Debian ``wget2``, C, ``--max-threads`` = the concurrency): recursive, obeys
  robots.txt, bodies to ``-O /dev/null`` (not ``--spider``: wget2's spider mode sends a HEAD
  and then a GET for every HTML page, twice the requests); stores nothing.
- ``wget`` (GNU wget 1.x, C, one connection): recursive, obeys robots.txt,
  ``--warc-file --warc-cdx``: stores WARC + CDX, and its mirror tree (a temp dir;
  ``--delete-after`` would make it fetch every page linked again, three times the requests).
- ``crawlee``: bench/crawlee_peer.py, Crawlee for Python's ParselCrawler, storage in memory.
- ``spider``: the Rust crate through its npm binding ``@spider-rs/spider-rs``, one
  ``Website`` per seed host run at once in one Node process; stores nothing.

The test web's hosts (``site1.test`` …) are names no resolver knows. dustless and Scrapy are
told in-process (``--resolve``, a patched ``getaddrinfo``); wget, wget2, spider and the
Python peers have no such option, so each runs in a mount namespace of its own where a
private /etc/hosts is bound over the real one (``unshare -m``, root only: this machine's and
CI's case). The machine's /etc/hosts is never touched.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PEERS", "Peer", "PeerMissing", "command", "hosts_file", "ok_codes"]

BENCH = Path(__file__).resolve().parent
PY = sys.executable
#: where `make bench` installs spider's npm binding (bench/out is ignored by git)
SPIDER_DIR = BENCH / "out" / "node"
#: 0.0.163, the newest, was published without its native linux-x64 package; 0.0.157 has it
SPIDER_VERSION = "0.0.157"
SPIDER_INSTALL = (
    f"npm install --prefix {SPIDER_DIR} @spider-rs/spider-rs@{SPIDER_VERSION} "
    f"@spider-rs/spider-rs-linux-x64-gnu@{SPIDER_VERSION}"
)

SPIDER_JS = """
const { Website } = require("@spider-rs/spider-rs");
const [seeds, depth] = JSON.parse(process.argv[2]);
(async () => {
  const sites = seeds.map((s) =>
    new Website(s).withRespectRobotsTxt(false).withDepth(depth)
      .withRequestTimeout(10000).build());
  await Promise.all(sites.map((w) => w.crawl()));
  let pages = 0;
  for (const w of sites) pages += w.size;
  console.log(JSON.stringify({ pages }));
})();
"""


class PeerMissing(Exception):
    """The peer cannot run here: the message says why and how to install it."""


@dataclass(frozen=True)
class Peer:
    name: str
    stores: str
    robots: bool


PEERS: dict[str, Peer] = {
    p.name: p
    for p in (
        Peer("lean", "nothing", False),
        Peer("wget2", "nothing (-O /dev/null)", True),
        Peer("wget", "WARC + CDX + file tree", True),
        Peer("crawlee", "nothing (in memory)", False),
        Peer("spider", "nothing", False),
    )
}


def ok_codes(name: str) -> tuple[int, ...]:
    """The exit codes of a finished crawl: wget and wget2 exit 8 when any response was an
    error (a 404 linked from a page), which a crawl of real pages meets."""
    return (0, 8) if name in ("wget", "wget2") else (0,)


def hosts_file(path: Path, hosts: dict[str, str]) -> Path:
    """An /etc/hosts giving each name its address, and localhost as the real one does."""
    lines = ["127.0.0.1 localhost", "::1 localhost"]
    lines += [f"{addr} {name}" for name, addr in sorted(hosts.items())]
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o644)
    return path


@functools.cache
def _namespaces_work() -> str | None:
    """None when ``unshare -m`` can bind a private /etc/hosts here, else why not."""
    if os.geteuid() != 0:
        return "needs root: it runs under unshare -m with a private /etc/hosts"
    if shutil.which("unshare") is None:
        return "unshare is missing (apt-get install util-linux)"
    with tempfile.TemporaryDirectory() as t:
        hosts = hosts_file(Path(t) / "hosts", {"probe.dustless.test": "127.0.0.1"})
        probe = subprocess.run(
            [*_in_namespace(hosts), "getent", "hosts", "probe.dustless.test"],
            capture_output=True,
            timeout=30,
        )
    if probe.returncode != 0:
        return f"unshare -m with a private /etc/hosts failed: {probe.stderr.decode()[-200:]}"
    return None


def _in_namespace(hosts: Path) -> list[str]:
    # exec: the crawler replaces the shell, so its rusage is the whole process's (os.wait4).
    script = 'mount --bind "$0" /etc/hosts && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, str(hosts)]


def command(
    name: str, seeds: list[str], hosts: Path, names: list[str], work: Path, *, depth: int,
    concurrency: int,
) -> list[str]:  # fmt: skip
    """The command line of peer ``name`` crawling from ``seeds`` over the hosts ``names``
    (resolved by the file ``hosts``), writing what it stores under ``work``."""
    why = _namespaces_work()
    if why is not None:
        raise PeerMissing(why)
    run = _in_namespace(hosts)
    if name == "lean":
        _require_modules(("aiohttp", "lxml"), "pip install -e '.[dev]' (make install)")
        hosts_args = [a for h in names for a in ("--host", h)]
        return [
            *run, PY, str(BENCH / "lean_loop.py"), *seeds, "--max-depth", str(depth),
            "--concurrency", str(concurrency), *hosts_args,
        ]  # fmt: skip
    if name == "wget2":
        _require_binary("wget2", "apt-get install wget2")
        return [
            *run, "wget2", "--quiet", "--recursive", f"--level={depth}", "--span-hosts",
            f"--domains={','.join(names)}", f"--max-threads={concurrency}", "--tries=1",
            "--timeout=30", "--output-document=/dev/null", "--no-host-directories",
            f"--directory-prefix={work / 'wget2'}", *seeds,
        ]  # fmt: skip
    if name == "wget":
        _require_binary("wget", "apt-get install wget")
        return [
            *run, "wget", "--quiet", "--recursive", f"--level={depth}", "--span-hosts",
            f"--domains={','.join(names)}", "--tries=1", "--timeout=30",
            f"--directory-prefix={work / 'wget-tree'}", f"--warc-file={work / 'wget'}",
            "--warc-cdx", *seeds,
        ]  # fmt: skip
    if name == "crawlee":
        _require_modules(("crawlee", "parsel"), "pip install -e '.[bench]' (make bench)")
        return [
            *run, PY, str(BENCH / "crawlee_peer.py"), *seeds, "--max-depth", str(depth),
            "--concurrency", str(concurrency),
        ]  # fmt: skip
    if name == "spider":
        _require_binary("node", "apt-get install nodejs npm")
        if not (SPIDER_DIR / "node_modules" / "@spider-rs" / "spider-rs").is_dir():
            raise PeerMissing(f"not installed: make bench ({SPIDER_INSTALL})")
        probe = subprocess.run(
            ["node", "-e", 'require("@spider-rs/spider-rs")'],
            cwd=SPIDER_DIR,
            capture_output=True,
            timeout=60,
        )
        if probe.returncode != 0:
            last = probe.stderr.decode(errors="replace").strip().splitlines()[-1:]
            raise PeerMissing(f"its native module does not load on this Node: {last}")
        script = SPIDER_DIR / "spider_peer.js"
        script.write_text(SPIDER_JS)
        return [*run, "node", str(script), json.dumps([seeds, depth])]
    raise PeerMissing(f"no such peer: {name}")


def _require_binary(binary: str, hint: str) -> None:
    if shutil.which(binary) is None:
        raise PeerMissing(f"{binary} is not installed ({hint})")


def _require_modules(modules: tuple[str, ...], hint: str) -> None:
    for module in modules:
        if importlib.util.find_spec(module) is None:
            raise PeerMissing(f"{module} is not installed ({hint})")
