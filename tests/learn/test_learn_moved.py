"""A site whose old paths redirect to the new (``/doc/x`` 301 to ``/sec/x``, the ``real`` web's
"moved" behaviour): the learner rightly makes both one identity (``substitute``), but the
redirects fetched before the rule had their targets queued as links under their own
identity; re-keyed to the redirect's identity they must stay queued, not be merged into a
fetch that holds no document (seed 3 of ``bench/learn_realweb.py`` lost 3 pages so). The
site is served on 127.0.0.1 inside the test."""

from __future__ import annotations

import random
import sqlite3
import string
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from dustless.crawl import CrawlConfig, run_crawl

DOCS = 40


def _words(tag: str) -> str:
    rng = random.Random(tag)
    return " ".join(
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))
        for _ in range(120)
    )


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path = self.path.partition("?")[0]
        status, body, location = 404, b"", None
        if path == "/":
            links = "".join(f'<a href="/doc/p{j}.html">d</a>' for j in range(DOCS))
            status, body = 200, f"<html><body><p>{_words('home')}</p>{links}</body></html>"
        elif path.startswith("/doc/p"):
            status, location = 301, f"http://moved.test:{self.server.server_address[1]}/sec/"
            location += path.removeprefix("/doc/")
        elif path.startswith("/sec/p") and path[6:-5].isdigit() and int(path[6:-5]) < DOCS:
            status, body = 200, f"<html><body><p>{_words(path)}</p></body></html>"
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        if location:
            self.send_header("Location", location)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def moved_site() -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_redirect_targets_queued_before_the_rule_are_not_merged_away(moved_site, tmp_path):
    port = moved_site
    out = tmp_path / "c"
    config = CrawlConfig(
        seeds=(f"http://moved.test:{port}/",), resolve=("*.test:127.0.0.1",), policy="standard",
        learn=True, delay=0, delay_factor=0, progress=False,
    )  # fmt: skip
    assert run_crawl(config, out).finished
    with sqlite3.connect(out / "crawl.db") as db:
        rules = [s for (s,) in db.execute("SELECT spec FROM learned_rules")]
        fetched = {u for (u,) in db.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.status = 200"
        )}  # fmt: skip
    assert any("substitute" in s for s in rules), rules  # /sec/ and /doc/ are one
    got = {int(u.rpartition("/p")[2][:-5]) for u in fetched if "/sec/p" in u}
    assert sorted(set(range(DOCS)) - got) == []
