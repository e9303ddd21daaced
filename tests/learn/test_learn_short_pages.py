"""A mobile host (``m.short.test``) serving the main host's pages, each little more than its
heading (a manual's chapter title pages), in another template: the desktop one lists the
section's pages in a side column before the heading and ends the content cell with "Print |
Mobile" after a rule; the mobile one names the site above the heading and ends with "Desktop
version". Their main content is the heading alike, so the alias is learned and stays in
force through its spot checks, two chapters are never one document, and none is lost (the
short pages were once fingerprinted with what each template adds: a chapter's copies apart,
a section's chapters alike by their side column; issue 25). The site is
served on 127.0.0.1 inside the test."""

from __future__ import annotations

import random
import sqlite3
import string
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from learn.test_learn_mobile import crawl_docs
from support import serving

SECTIONS, PAGES = 3, 15


def _title(k: int, j: int) -> str:
    rng = random.Random(f"title {k} {j}")
    words = (
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 9)))
        for _ in range(3)
    )
    return f"Chapter {k * PAGES + j}. " + " ".join(words).capitalize()


class _Handler(BaseHTTPRequestHandler):
    port = 0

    def do_GET(self) -> None:
        host = self.headers["Host"].partition(":")[0]
        mobile = host.startswith("m.")
        path = self.path.partition("?")[0]
        body = None
        if path == "/":
            items = "".join(
                f'<li><a href="/s{k}/p0.html">Part {k} of the manual, its chapters</a></li>'
                for k in range(SECTIONS)
            )
            body = self._page(mobile, "/", "<h1>The manual</h1><ul>" + items + "</ul>", 0)
        parts = path.strip("/").split("/")
        if len(parts) == 2 and parts[0][1:].isdigit() and parts[1][1:-5].isdigit():
            k, j = int(parts[0][1:]), int(parts[1][1:-5])
            if k < SECTIONS and j < PAGES:
                heading = _title(k, j)
                nexts = "".join(
                    f'<p><a href="/s{k}/p{j + d}.html">Next</a></p>'
                    for d in (1, 2)
                    if j + d < PAGES
                )
                body = self._page(mobile, path, f"<h1>{heading}</h1><h2>{heading}</h2>{nexts}", k)
        self.send_response(404 if body is None else 200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def _page(self, mobile: bool, path: str, content: str, k: int) -> bytes:
        if mobile:
            body = (
                f'<div class="m-top">The Manual Site</div>{content}'
                f'<div><a href="http://short.test:{self.port}{path}">Desktop version</a></div>'
            )
        else:
            side = "".join(
                f'<li><a href="/s{k}/p{j}.html">{_title(k, j)}</a></li>' for j in range(PAGES)
            )
            body = (
                '<table><tr><td colspan="2" class="banner">The Manual Site</td></tr><tr>'
                f"<td><h4>In this part</h4><ul>{side}</ul></td><td>{content}<hr>"
                f'<a href="{path}?print=1">Print</a> | '
                f'<a href="http://m.short.test:{self.port}{path}">Mobile</a></td></tr></table>'
            )
        return f"<html><head><title>Manual</title></head><body>{body}</body></html>".encode()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def short_site() -> Iterator[int]:
    yield from serving(_Handler)


def test_short_pages_in_two_templates_keep_the_mobile_alias(short_site, tmp_path):
    port = short_site
    docs, mobile = crawl_docs(port, tmp_path / "learn", "short.test", learn=True)
    with sqlite3.connect(tmp_path / "learn" / "crawl.db") as db:
        rules = db.execute("SELECT host, spec, reason FROM learned_rules").fetchall()
    alias = (f"m.short.test:{port}", '{"element":"hostRedirect","to":"short.test"}', None)
    assert alias in rules, rules  # learned, and never retracted (reason: why it was)
    # Two chapters are two documents: their pages' shared side column made them one, and
    # ``/p13.html → /p0.html`` was learned, before the column was left out of short pages.
    assert not [spec for _, spec, _ in rules if '"substitute"' in spec]
    every = {(k, j) for k in range(SECTIONS) for j in range(PAGES)}
    assert set(docs) == every  # nothing lost
    # A standard crawl fetches all 45 mobile copies; the alias merges most of them (a few are
    # fetched anyway: the pages before it was learned, its spot checks).
    assert mobile <= 0.7 * len(every)
