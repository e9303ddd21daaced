"""The progress line's errors say what went wrong with each failed fetch — pages,
robots.txt and sitemaps alike: ``reset``, ``refused``, ``certificate``, ``DNS``,
``timeout`` … instead of a special case for a robots.txt's certificate.

The crawl test talks to real servers on 127.0.0.1: one that resets the connection of its
page and of its sitemap, and a port where nothing listens."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import support
from dustless.crawl import CrawlConfig, run_crawl
from dustless.crawl.net import failure_kind
from dustless.crawl.progress import RunCounters, progress_lines
from dustless.states import NetState


@pytest.mark.parametrize(
    ("state", "error", "kind"),
    [
        (NetState.cErr, "ConnectionRefusedError: [Errno 111] Connect call failed", "refused"),
        (
            NetState.cErr,
            "SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify "
            "failed: self-signed certificate",
            "certificate",
        ),
        (NetState.cErr, "OSError: [Errno 101] Network is unreachable", "unreachable"),
        (NetState.hErr, "ConnectionResetError: [Errno 104] Connection reset by peer", "reset"),
        (NetState.noIP, "no address for x.test", "DNS"),
        (NetState.cTim, "no connection within 10 s", "timeout"),
        (NetState.hTim, "no response head within 5 s", "timeout"),
        (NetState.dTim, "no data for 5 s", "timeout"),
        (NetState.hNpr, "HttpParserInvalidStatusError: Expected HTTP/", "not HTTP"),
        (NetState.iErr, "internal: TypeError()", "internal"),
        (NetState.hSht, "the server closed before a complete head", "hSht"),
        (NetState.tooBig, "body exceeds the limit of 10 bytes", "tooBig"),
    ],
)
def test_failure_kinds(state: NetState, error: str, kind: str) -> None:
    assert failure_kind(state, error) == kind


def test_errors_name_kinds_and_keep_states_counted_without_one() -> None:
    s = RunCounters()
    s.count_state("cErr", kind="refused")
    s.count_state("cErr", kind="refused")
    s.count_state("cErr")  # a caller that knows no kind: the state's name
    s.count_state("hTim", kind="timeout")
    s.count_state("dTim", kind="timeout")
    s.count_state("code", 404, kind="code")  # an answer: its status, never a kind
    s.count_state("robots", kind="robots")  # a gate: skipped, not an error
    s.count_state("cErr", kind="certificate", what="sitemap")
    s.count_failure("robots.txt", "certificate")
    assert s.errors == {
        "404": 1,
        "cErr": 1,
        "refused": 2,
        "timeout": 2,
        "robots.txt certificate": 1,
        "sitemap certificate": 1,
    }


_ROBOTS = "User-agent: *\nAllow: /\nSitemap: http://127.0.0.1:{port}/sitemap.xml\n"


@contextlib.contextmanager
def _resetting_server() -> Iterator[int]:
    """robots.txt answers; every other request is read, then the connection reset."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                if data.startswith(b"GET /robots.txt "):
                    body = _ROBOTS.format(port=port).encode()
                    head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                    conn.sendall(head.encode() + body)
                else:
                    # SO_LINGER 0: close with a RST, not a FIN (a reset connection).
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        stop.set()
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() (close alone does not)
        listener.close()
        thread.join(timeout=30)


def test_each_failed_fetch_counts_by_its_kind(tmp_path: Path) -> None:
    with support.refused_port() as dead, _resetting_server() as port:
        config = CrawlConfig(
            seeds=(f"http://127.0.0.1:{port}/", f"http://127.0.0.1:{dead}/"),
            delay=0.0,
            delay_factor=0.0,
            backoff=0.001,
            max_failures=3,
            sitemaps=True,
            progress=False,
        )
        result = run_crawl(config, tmp_path / "out", strict=True)
    assert result.finished
    errors = result.stats.errors
    assert errors["reset"] == 1, errors  # the page
    assert errors["sitemap reset"] == 1, errors
    assert errors["robots.txt refused"] == 3, errors  # --max-failures tries (RFC 9309 §2.3.1.4)
    assert not {"cErr", "hErr", "dErr", "hSht"} & errors.keys(), errors
    text = "\n".join(progress_lines(result.stats, 10.0, 1.0, 80))
    assert "errors: reset 1" in text, text
