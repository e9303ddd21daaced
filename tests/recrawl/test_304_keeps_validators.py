"""A 304 that repeats no validator keeps those of the copy held (RFC 9110 §15.4.5).

A real server on 127.0.0.1 whose 304 omits the ETag (one page repeats Last-Modified, one
repeats nothing): the second recrawl must send If-None-Match again, or a server comparing
entity tags answers 200 and the page is downloaded again."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from dustless.cli.main import main
from dustless.store import open_crawl

_ETAG = '"v1"'
_DATE = "Mon, 02 Nov 2026 10:00:00 GMT"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[tuple[str, dict[str, str]]] = []  # path, conditional headers
        self.lock = threading.Lock()


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        asked = {
            k: v
            for k, v in self.headers.items()
            if k.lower() in ("if-none-match", "if-modified-since")
        }
        with self.server.lock:
            self.server.seen.append((self.path, asked))
        if self.path == "/robots.txt":
            self._send(200, b"User-agent: *\nAllow: /\n", "text/plain")
        elif self.path == "/":
            self._send(200, b'<a href="/lm">lm</a> <a href="/bare">bare</a>', "text/html")
        elif self.path in ("/lm", "/bare"):
            if asked:
                # Unchanged; the ETag left out (and for /bare, Last-Modified too).
                self.send_response(304)
                if self.path == "/lm":
                    self.send_header("Last-Modified", _DATE)
                self.end_headers()
                return
            self._send(200, b"<p>same as ever</p>", "text/html", validators=True)
        else:
            self._send(404, b"no", "text/plain")

    def _send(self, status: int, body: bytes, mime: str, *, validators: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", mime)
        self.send_header("Content-Length", str(len(body)))
        if validators:
            self.send_header("ETag", _ETAG)
            self.send_header("Last-Modified", _DATE)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=30)


def _when(out: Path, day: int) -> str:
    with open_crawl(out) as db:
        t0 = db.batches[0].batch_time
    return dt.datetime.fromtimestamp(t0 + day * 86_400, dt.UTC).isoformat()


def test_a_304_without_validators_keeps_the_held_ones(server: _Server, tmp_path: Path) -> None:
    base = f"http://127.0.0.1:{server.server_address[1]}"
    out = tmp_path / "c"
    args = ["crawl", f"{base}/", "--out", str(out), "--delay", "0", "--delay-factor", "0"]
    assert main([*args, "--quiet"]) == 0
    for day in (1, 2):
        assert main(["recrawl", str(out), "--batch-time", _when(out, day), "--quiet"]) == 0
    for path in ("/lm", "/bare"):
        asked = [headers for p, headers in server.seen if p == path]
        assert len(asked) == 3, (path, server.seen)
        assert asked[0] == {}  # the first crawl: a download, ETag "v1"
        assert asked[1] == {"If-None-Match": _ETAG, "If-Modified-Since": _DATE}
        # The second recrawl still holds what the first download gave.
        assert asked[2] == {"If-None-Match": _ETAG, "If-Modified-Since": _DATE}, path
