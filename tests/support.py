"""Helpers shared by the tests (importable as ``support``; see pytest ``pythonpath``)."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import socket
import string
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# The public conformance data lives beside the repository, never inside it.
TESTDATA = Path(os.environ.get("DUSTLESS_TESTDATA", REPO.parent / "shared" / "testdata"))


def require(condition: object, reason: str) -> None:
    """Skip the calling test when ``condition`` is false — or fail it under CI.

    CI sets ``DUSTLESS_REQUIRE_ALL=1``: there a missing service, browser or data file is a
    failure, so a skipped test can never pass for a green one.
    """
    if condition:
        return
    if os.environ.get("DUSTLESS_REQUIRE_ALL") == "1":
        pytest.fail(f"required but missing: {reason}", pytrace=False)
    pytest.skip(reason)


def testdata(*parts: str) -> Path:
    """Path to a file of ``../shared/testdata``; skips (or fails under CI) when absent."""
    path = TESTDATA.joinpath(*parts)
    require(path.exists(), f"test data not found: {path}")
    return path


# -- loopback ports (the suite runs in two processes: ``make test`` is ``pytest -n 2``) -----

#: how many ports a server that cannot bind port 0 itself is started on before giving up
PORT_TRIES = 5


def free_port() -> int:
    """A loopback port free when asked, for a server that cannot bind port 0 itself
    (PostgreSQL, nginx, pywb …). Another process — the other test worker — may take it
    before the server binds it: callers start the server again on a new port when its output
    says :func:`address_in_use` (at most ``PORT_TRIES`` times)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def address_in_use(output: str) -> bool:
    """Whether a server's output says its port was taken (nginx, Apache, lighttpd,
    PostgreSQL and Python servers all say errno 98's words, in either case)."""
    return "address already in use" in output.lower()


def listens(pid: int, port: int) -> bool:
    """Whether process ``pid`` itself holds a socket listening on loopback ``port``.

    A server started on a picked port is ready when *it* listens there: a connection that
    succeeds may reach whoever took the port first (the other test worker), while our server
    is still failing to bind it. Linux's ``/proc/net/tcp`` lists listening sockets (state
    0A) by inode, and ``/proc/PID/fd`` links to the sockets a process holds."""
    inodes = set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return False
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                if os.readlink(fd) in inodes:
                    return True
    return False


@contextlib.contextmanager
def refused_port() -> Iterator[int]:
    """A loopback port that refuses connections for the ``with`` block: bound, never
    listening (Linux answers a SYN there with RST). Holding it bound keeps any other
    process — the other test worker — from listening there, which a port bound and closed
    again cannot promise."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


# Debian's Chromium, headless, kept off the network: without the background-networking flags
# it keeps trying to reach Google's hosts, which this machine's closed network refuses.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium() -> str:
    """The path of Debian's ``chromium`` (never a browser downloaded by a test tool)."""
    path = shutil.which("chromium")
    require(path, "Debian's chromium is not installed (apt-get install chromium)")
    assert path is not None
    return path


def serving(cls: type[BaseHTTPRequestHandler]) -> Iterator[int]:
    """Serve the handler class ``cls`` on a free loopback port (told to it as ``cls.port``)
    until the generator is closed: a test's own small site, for a fixture to ``yield from``."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), cls)
    cls.port = httpd.server_address[1]  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield cls.port  # type: ignore[attr-defined]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def words(tag: str, n: int = 120) -> str:
    """Text of its own for each ``tag``, the same every run: ``n`` words of letters (the
    fingerprint reads words), for a test site's pages."""
    rng = random.Random(tag)
    return " ".join(
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))
        for _ in range(n)
    )


def send_html(handler: BaseHTTPRequestHandler, body: bytes | None) -> None:
    """A test site's answer: the page, or a 404 without one."""
    handler.send_response(404 if body is None else 200)
    handler.send_header("Content-Type", "text/html; charset=utf-8")
    handler.send_header("Content-Length", str(len(body or b"")))
    handler.end_headers()
    handler.wfile.write(body or b"")
