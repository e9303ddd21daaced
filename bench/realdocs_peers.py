"""dustless against wget2 on real documentation pages served by a real server (issue 28).

Debian's PostgreSQL 15 and git HTML manuals (``postgresql-doc-15``, ``git-doc``: pages of
20–50 KB, the packages the ``real`` test web reads; ``dustless.testweb``'s corpus loader
finds them installed, in its cache, or downloads them) are copied as they are into one
docroot, served by Debian's nginx on loopback (one worker, gzip on as Debian ships it, its
access log kept) under the name ``docs.test``, from a seed page linking to both manuals'
contents. In the same run, each pinned to the same core as a whole process:

- dustless, its full pipeline (robots.txt, WARC + CDXJ + SQLite), ``--policy standard``,
  no delay, scope the host, depth unlimited (``--max-depth 100``);
- dustless ``--store none``, where ``dustless crawl --help`` lists it;
- wget2, recursive on the host, depth unlimited, bodies to /dev/null (bench/peer_crawlers.py).

The server's access log counts what each crawler fetched: requests, and HTML pages answered
200. CPU per page is the crawler's rusage CPU over its HTML pages (the goal: dustless at most
2x wget2's), and per request beside it. The server runs on the other core.

Run: ``.venv/bin/python bench/realdocs_peers.py`` (``--packages git-doc`` for a quick look).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import peer_crawlers
from crawl_peers import CRAWLER_CPU, PY, SERVER_CPU, PeerFailed, pin, store_none, timed

HOST = "docs.test"
#: the contents page of each manual, linked from the seed
CONTENTS = {"postgresql-doc-15": "index.html", "git-doc": "git.html", "libxml2-doc": "index.html"}


def docroot(root: Path, packages: list[str]) -> Path:
    """The packages' HTML directories copied under ``root/www/NAME/``, and a seed page."""
    from dustless.testweb._corpus import PACKAGES, load_corpus

    wanted = tuple(p for p in PACKAGES if p.name in packages)
    corpus = load_corpus(wanted)
    if corpus.missing:
        raise SystemExit(
            f"documentation packages missing: {' '.join(corpus.missing)} (apt-get install them, "
            "or apt-get update so that dustless testweb can download them)"
        )
    www = root / "www"
    links = []
    for name, src in corpus.roots.items():
        shutil.copytree(src, www / name, symlinks=False)
        links.append(f'<li><a href="/{name}/{CONTENTS[name]}">{name}</a></li>')
    (www / "index.html").write_text(
        "<!DOCTYPE html><html><head><title>docs</title></head><body><ul>"
        + "".join(links)
        + "</ul></body></html>\n"
    )
    for path in (root, *www.rglob("*"), www):  # the workers run as nobody when root
        path.chmod(0o755 if path.is_dir() else 0o644)
    return www


class Nginx:
    """Debian's nginx serving ``www`` on a free loopback port, its access log in ``root``."""

    def __init__(self, root: Path, www: Path) -> None:
        if shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists():
            raise SystemExit("nginx is not installed (apt-get install nginx)")
        self.log = root / "access.log"
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        user = "user nobody nogroup;" if os.geteuid() == 0 else ""
        conf = root / "nginx.conf"
        temps = "".join(f"{k}_temp_path {root}/tmp-{k};\n" for k in (
            "client_body", "proxy", "fastcgi", "uwsgi", "scgi"))  # fmt: skip
        conf.write_text(f"""
{user}
daemon off;
worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 256; }}
http {{
    include /etc/nginx/mime.types;
    log_format bench '$status $sent_http_content_encoding $sent_http_content_type $request_uri';
    access_log {self.log} bench;
    {temps}
    gzip on;
    server {{ listen 127.0.0.1:{self.port}; root {www}; }}
}}
""")
        path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
        self.proc = subprocess.Popen(
            ["nginx", "-p", str(root), "-c", str(conf)],
            env={**os.environ, "PATH": path},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while True:  # an external process: no event to await, look until it answers
            if self.proc.poll() is not None:
                err = (root / "error.log").read_text() if (root / "error.log").exists() else ""
                raise SystemExit(f"nginx exited {self.proc.returncode}: {err[-500:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("nginx did not listen within 30 s") from None
                time.sleep(0.05)
        # nginx's master and worker: on the server's core, away from the crawlers'
        for pid in [self.proc.pid, *_children(self.proc.pid)]:
            pin(pid, SERVER_CPU)

    def mark(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0

    def served(self, since: int) -> dict:
        with self.log.open("rb") as f:
            f.seek(since)
            lines = f.read().decode(errors="replace").splitlines()
        fields = [ln.split(" ", 3) for ln in lines]
        html = {
            uri for status, _, ctype, uri in fields
            if status == "200" and ctype.startswith("text/html")
        }  # fmt: skip
        gzipped = sum(1 for _, encoding, _, _ in fields if encoding == "gzip")
        return {"requests": len(lines), "pages": len(html), "gzip": gzipped}

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=15)


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children = task / "children"
        if children.exists():
            out += [int(c) for c in children.read_text().split()]
    return out


def crawl_options() -> list[str]:
    """dustless crawl's options here: the docs host, no delay, depth unlimited."""
    return [
        "--resolve", f"{HOST}:127.0.0.1", "--delay", "0", "--delay-factor", "0",
        "--max-depth", "100", "--policy", "standard", "--quiet",
    ]  # fmt: skip


def run(nginx: Nginx, cmd: list[str], ok: tuple[int, ...] = (0,)) -> dict:
    mark = nginx.mark()
    m = timed(cmd, check=False, ok=ok)
    time.sleep(0.2)  # nginx writes its access log line after the response: let it land
    m.update(nginx.served(mark))
    return m


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--packages",
        default="postgresql-doc-15,git-doc",
        help="Debian documentation packages served (comma-separated)",
    )
    args = ap.parse_args()
    packages = [p for p in args.packages.split(",") if p]
    unknown = sorted(set(packages) - set(CONTENTS))
    if unknown:
        print(f"unknown package {unknown[0]}: one of {', '.join(CONTENTS)}")
        return 2
    with tempfile.TemporaryDirectory(prefix="realdocs-peers-") as t:
        tmp = Path(t)
        tmp.chmod(0o755)
        (tmp / "srv").mkdir()
        www = docroot(tmp / "srv", packages)
        nginx = Nginx(tmp / "srv", www)
        seed = f"http://{HOST}:{nginx.port}/"
        rows: list[tuple[str, dict | str]] = []
        try:
            common = crawl_options()
            # The seed page alone: what start-up (imports, opening the crawl directory,
            # robots.txt) costs, so the per-page figure can be given without it too.
            for name, extra in (
                ("dustless", []),
                ("dustless none", ["--store", "none"]),
                ("start-up", ["--max-depth", "0"]),
            ):
                if "--store" in extra and not store_none():
                    rows.append((name, "this dustless has no crawl --store none: missing"))
                    continue
                out = tmp / name.replace(" ", "-")
                cmd = [PY, "-m", "dustless", "crawl", seed, "--out", str(out), *common, *extra]
                try:
                    rows.append((name, run(nginx, cmd)))
                except PeerFailed as exc:
                    rows.append((name, str(exc)))
            hosts = peer_crawlers.hosts_file(tmp / "hosts", {HOST: "127.0.0.1"})
            try:
                cmd = peer_crawlers.command(
                    "wget2", [seed], hosts, [HOST], tmp, depth=0, concurrency=8
                )
                rows.append(("wget2", run(nginx, cmd, peer_crawlers.ok_codes("wget2"))))
            except (peer_crawlers.PeerMissing, PeerFailed) as exc:
                rows.append(("wget2", str(exc)))
        finally:
            nginx.stop()
    print(
        f"realdocs_peers: {', '.join(packages)} from one nginx on CPU {SERVER_CPU} (gzip on), "
        f"crawlers on CPU {CRAWLER_CPU}, whole processes (rusage)"
    )
    print(
        f"  {'crawler':14} {'html pages':>10} {'requests':>8} {'wall s':>7} {'CPU s':>6} "
        f"{'CPU ms/page':>11} {'ms/request':>10} {'RSS MiB':>7} {'gzip':>6}"
    )
    for name, m in rows:
        if isinstance(m, str):
            print(f"  {name:14} missing: {m}")
            continue
        if name == "start-up":
            print(f"  {name:14} {'the seed page alone':>28} {m['wall']:7.1f} {m['cpu']:6.2f}")
            continue
        print(
            f"  {name:14} {m['pages']:10,} {m['requests']:8,} {m['wall']:7.1f} {m['cpu']:6.2f} "
            f"{1000 * m['cpu'] / max(m['pages'], 1):11.2f} "
            f"{1000 * m['cpu'] / max(m['requests'], 1):10.2f} {m['rss'] / 2**20:7.0f} "
            f"{m['gzip']:6,}"
        )
    got = {name: m for name, m in rows if not isinstance(m, str)}
    if "wget2" in got:
        w = got["wget2"]["cpu"] / max(got["wget2"]["pages"], 1)
        start = got["start-up"]["cpu"] if "start-up" in got else 0.0
        for name in ("dustless", "dustless none"):
            if name in got:
                m = got[name]
                ratio = m["cpu"] / max(m["pages"], 1) / w
                marginal = (m["cpu"] - start) / max(m["pages"] - 1, 1) / w
                print(
                    f"  ratio: {name} {ratio:.1f}x wget2's CPU per HTML page (goal <= 2x); "
                    f"{marginal:.1f}x without its start-up ({start:.2f} s: the seed page alone)"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
