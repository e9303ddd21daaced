"""A mobile host (``m.docs.test``) serving the main host's documents in another template: the
alias is learned from the pages' equal main content and the mobile pages' canonical links,
one section's wrong canonicals (every mobile page there names the home page) merge nothing,
no document is lost, and the ``learned-rules.xml`` written is applied by ``crawl --rules``.
The site is served on 127.0.0.1 inside the test."""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from dustless.crawl import CrawlConfig, run_crawl
from dustless.rules import load_script
from support import words

SECTIONS, PAGES, WRONG = 3, 15, 2


class _Handler(BaseHTTPRequestHandler):
    port = 0

    def do_GET(self) -> None:
        host = self.headers["Host"].partition(":")[0]
        mobile = host.startswith("m.")
        main = f"http://docs.test:{self.port}"
        path = self.path.partition("?")[0]
        body = None
        if path == "/":
            links = "".join(f'<a href="/s{k}/p0.html">s{k}</a>' for k in range(SECTIONS))
            body = self._page(mobile, "home", links, main + "/")
        parts = path.strip("/").split("/")
        if len(parts) == 2 and parts[0][1:].isdigit() and parts[1][1:-5].isdigit():
            k, j = int(parts[0][1:]), int(parts[1][1:-5])
            if k < SECTIONS and j < PAGES:
                links = "".join(
                    f'<a href="/s{k}/p{j + d}.html">n</a>' for d in (1, 2) if j + d < PAGES
                )
                if mobile:
                    links += f'<a href="{main}{path}">Desktop version</a>'
                else:
                    links += f'<a href="http://m.docs.test:{self.port}{path}">Mobile</a>'
                wrong = mobile and k == WRONG  # every mobile page there names the home page
                canonical = main + ("/" if wrong else path)
                body = self._page(mobile, f"doc{k}x{j}", links, canonical)
        self.send_response(404 if body is None else 200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    @staticmethod
    def _page(mobile: bool, tag: str, links: str, canonical: str) -> bytes:
        # Other boilerplate on each template; the main content is the document's own.
        chrome = words("mobile chrome" if mobile else "desktop chrome", 40)
        return (
            f'<html><head><link rel="canonical" href="{canonical}"></head><body>'
            f"<nav>{chrome}</nav><main><h1>{tag}</h1><p>{words(tag)}</p>{links}</main>"
            f"<footer>{'Mobile site' if mobile else 'Full site'} {chrome}</footer>"
            "</body></html>"
        ).encode()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def mobile_site() -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    _Handler.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield _Handler.port
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def crawl_docs(
    port: int, out: Path, host: str = "docs.test", **options: object
) -> tuple[Counter[tuple[int, int]], int]:
    """Crawl ``host``'s site of documents ``/s<k>/p<j>.html``: (fetches of each document
    (k, j) with a 200, pages of its ``m.`` host fetched)."""
    config = CrawlConfig(
        seeds=(f"http://{host}:{port}/",), resolve=("*.test:127.0.0.1",), policy="standard",
        delay=0, delay_factor=0, progress=False, max_depth=100, **options,
    )  # fmt: skip
    assert run_crawl(config, out).finished
    with sqlite3.connect(out / "crawl.db") as db:
        urls = [u for (u,) in db.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.status = 200"
        )]  # fmt: skip
    docs: Counter[tuple[int, int]] = Counter()
    for url in urls:
        path = url.partition("://")[2].partition("/")[2].partition("?")[0]
        if path.count("/") == 1:
            k, j = (int(x[1:].removesuffix(".html")) for x in path.split("/"))
            docs[(k, j)] += 1
    return docs, sum(1 for u in urls if f"//m.{host}" in u)


def test_a_mobile_host_is_learned_an_alias_and_the_rules_file_applies_it(mobile_site, tmp_path):
    port = mobile_site
    docs, mobile = crawl_docs(port, tmp_path / "learn", learn=True)
    with sqlite3.connect(tmp_path / "learn" / "crawl.db") as db:
        rules = db.execute(
            "SELECT host, spec FROM learned_rules WHERE retracted_at IS NULL"
        ).fetchall()
    assert (f"m.docs.test:{port}", '{"element":"hostRedirect","to":"docs.test"}') in rules
    every = {(k, j) for k in range(SECTIONS) for j in range(PAGES)}
    assert set(docs) == every  # nothing lost
    # A standard crawl fetches all 45 mobile twins; the alias merges most of the rest (a few
    # are fetched anyway: the pages before it was learned, its spot checks).
    assert mobile <= 0.7 * len(every)
    # The rules file, reused: the alias applies from the first page, without learning.
    path = tmp_path / "learn" / "learned-rules.xml"
    hosts = {h for s in load_script(path).rules.sites for h in s.identities}
    assert f"m.docs.test:{port}" in hosts
    again, mobile = crawl_docs(port, tmp_path / "again", rules=(str(path),))
    assert set(again) == every
    assert sum(again.values()) == len(every)  # each document fetched once
    assert mobile < len(every) // 2
