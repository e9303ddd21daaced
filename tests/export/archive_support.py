"""Helpers for the archive tests: the replay tools' venv, pywb as a server, raw HTTP gets.

pywb and py-wacz live in ``.venv-replay`` (``make install`` builds it; constraints-replay.txt
says why they cannot share ``.venv``). pywb runs as what it is, a server on 127.0.0.1.
"""

from __future__ import annotations

import http.client
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from support import require

ROOT = Path(__file__).resolve().parents[2]
REPLAY_BIN = ROOT / ".venv-replay" / "bin"


def replay_tool(name: str) -> Path:
    path = REPLAY_BIN / name
    require(path.exists(), f"{path} missing: run `make install` (it builds .venv-replay)")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def pywb(root: Path, warc_dir: Path | None = None, index_dir: Path | None = None) -> Iterator[int]:
    """Serve one collection ``crawl`` (the crawl's WARC and index directories) with pywb's
    ``wayback``; yields its port once pywb says it listens. Without directories: the
    collections ``wb-manager`` made in ``root/collections``."""
    wayback = replay_tool("wayback")
    root.mkdir(parents=True, exist_ok=True)
    named = (
        f"collections:\n  crawl:\n    archive_paths: {warc_dir}/\n    index_paths: {index_dir}/\n"
        if warc_dir is not None and index_dir is not None
        else ""
    )
    (root / "config.yaml").write_text(named + "framed_replay: false\n", encoding="utf-8")
    port = _free_port()
    proc = subprocess.Popen(
        [str(wayback), "-p", str(port), "-b", "127.0.0.1", "-t", "2"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    ready = threading.Event()
    output: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            output.append(line)
            if "Starting" in line and str(port) in line:
                ready.set()
        ready.set()  # exited: the wait below sees the process is gone

    threading.Thread(target=read, daemon=True).start()
    try:
        assert ready.wait(60), "pywb did not start in 60 s"
        assert proc.poll() is None, "pywb did not start:\n" + "".join(output)
        _until_listening(proc, port, output)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)
        assert proc.stdout is not None
        proc.stdout.close()


def _until_listening(proc: subprocess.Popen[str], port: int, output: list[str]) -> None:
    """pywb's server says "Starting" before its socket listens: on a loaded machine the first
    request came too early (connection refused). Ask until it answers a connect."""
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert proc.poll() is None, "pywb exited:\n" + "".join(output)
            assert time.monotonic() < deadline, "pywb did not listen in 30 s"
            time.sleep(0.05)


def get(host: str, port: int, path: str, headers: dict[str, str] | None = None):
    """One GET, no redirect following, no decoding: (status, headers, body)."""
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()
