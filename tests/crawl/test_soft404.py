"""Soft 404s (issue 25, ``crawl/soft404.py``): a 200 page that says the URL is missing is
recorded as ``soft404``, never as a document.

A server of our own answers every missing path with 200 and its site template — a page that
does not even say "not found", so only the probe (a random missing path per host, compared
by main-content fingerprint) can tell it — and under ``/legacy/`` with a short "Error 404"
page, which the status-like text tells. Its real documentation page talks about 404 at
length and must stay a document.
"""

from __future__ import annotations

import http.server
import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dustless.crawl.soft404 import Soft404Hosts, probe_url, says_not_found, section_of

_TEMPLATE = """<!doctype html><html><head><title>{title} | Acme Widgets</title></head><body>
<header class="masthead"><a href="/">Acme Widgets</a></header>
<nav><a href="/">Home</a> <a href="/docs/http.html">HTTP guide</a> <a href="/about.html">About</a>
 <a href="/docs/gone.html">Old guide</a></nav>
<main>{main}</main>
<footer>Copyright 2026 Acme Widgets. All rights reserved.</footer></body></html>"""

_HOME = _TEMPLATE.format(
    title="Home",
    main="<h1>Welcome to Acme Widgets</h1><p>We make sturdy widgets for workshops and "
    "kitchens alike, tested for years of daily use. Read our guides, or see the "
    '<a href="/old/catalogue.html">old catalogue</a> and the '
    '<a href="/legacy/prices.html">legacy prices</a>.</p>',
)
_ABOUT = _TEMPLATE.format(
    title="About us",
    main="<h1>About us</h1><p>Acme Widgets was founded by two engineers who wanted a "
    "widget that would not break on the second day. Today twelve people design, build and "
    "ship every widget from our small workshop by the river.</p>",
)
# A real documentation page that mentions 404 (and "not found") many times: a document.
_HTTP_GUIDE = _TEMPLATE.format(
    title="HTTP status codes: 404 and friends",
    main="<h1>HTTP status codes</h1><p>When a client asks for a URL that the server does "
    "not have, the server answers 404 Not Found. A 404 says nothing about whether the page "
    "will come back; 410 Gone says it will not. Some servers answer a missing page with 200 "
    "and a page that says not found, which search engines call a soft 404, and which "
    "confuses crawlers and link checkers.</p><p>To find broken links on your own site, "
    "request every link your pages hold and list those that answer 404. Redirect old URLs "
    "with 301 to their new place instead of letting them fail. Our widgets' firmware uses "
    "the same codes in its small web interface, so the advice here applies to it too.</p>",
)
# What every missing path answers: the template, and no word of "not found".
_MISSING = _TEMPLATE.format(
    title="Acme Widgets",
    main="<h1>Browse our widgets</h1><p>Our catalogue keeps growing and pages move around "
    "as it does. Use the menu above to reach the guides, or start again from the home page "
    "to see what is new this season.</p>",
)
# Missing under /legacy/: an old application's short status page.
_LEGACY = (
    "<html><head><title>Error 404 - Acme legacy shop</title></head><body>"
    "<h1>Error 404</h1><p>The page you requested does not exist.</p>"
    '<p><a href="/">Home</a></p></body></html>'
)
_PAGES = {"/": _HOME, "/about.html": _ABOUT, "/docs/http.html": _HTTP_GUIDE}


class _Site(http.server.ThreadingHTTPServer):
    requested: list[str]


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Site

    def do_GET(self) -> None:
        self.server.requested.append(self.path)
        status = 200
        if self.path == "/robots.txt":
            status, body = 404, "no robots.txt here"
        elif self.path in _PAGES:
            body = _PAGES[self.path]
        elif self.path.startswith("/legacy/"):
            body = _LEGACY
        else:
            body = _MISSING
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[_Site]:
    server = _Site(("127.0.0.1", 0), _Handler)
    server.requested = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _states(out: Path) -> dict[str, str]:
    with sqlite3.connect(out / "crawl.db") as db:
        rows = db.execute(
            "SELECT u.url, f.state FROM fetches f JOIN urls u ON u.id = f.url_id "
            "WHERE f.id IN (SELECT max(id) FROM fetches GROUP BY url_id)"
        ).fetchall()
    return {url.split("/", 3)[3]: state for url, state in rows}


def _crawl(ch, site: _Site, out: Path, *extra: str) -> tuple[dict[str, str], dict[str, Any]]:
    port = site.server_address[1]
    proc = ch.run_cli(
        "crawl", str(out), f"http://acme.test:{port}/", "--resolve", "acme.test:127.0.0.1",
        "--allow-private", "--delay", "0", "--delay-factor", "0", "--quiet", "--json", *extra,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return _states(out), json.loads(proc.stdout)


def test_missing_pages_in_the_site_template_are_soft_404s(ch, site, tmp_path):
    got, summary = _crawl(ch, site, tmp_path / "c")
    # The documents, the HTTP guide that talks about 404 included.
    assert got[""] == got["about.html"] == got["docs/http.html"] == "OK", got
    # The template's "browse our widgets" page, told by the probe; the second one is a
    # revisit of the first (the same bytes), judged as the first was.
    assert got["docs/gone.html"] == got["old/catalogue.html"] == "soft404", got
    # The legacy application's short "Error 404" page, told by its text.
    assert got["legacy/prices.html"] == "soft404", got
    probes = [p for p in site.requested if "/dustless-" in p]
    # The first 200 page (the root) probes the root; a 200 under /docs/ probes there too.
    assert 1 <= len(probes) <= 2, site.requested
    assert probes[0].startswith("/dustless-")
    assert probes[0].endswith(".html")
    assert summary["soft404_probes"] == len(probes)
    assert summary["soft404_signatures"] == len(probes)  # each answered the template
    # stats and evaluate leave them out of the documents, and name them on a line.
    stats = ch.run_cli("stats", str(tmp_path / "c"))
    assert stats.returncode == 0, stats.stderr
    assert "3 complete 2xx downloads" in stats.stdout
    assert "soft 404s 3 " in stats.stdout


def test_without_the_probe_only_the_status_text_tells(ch, site, tmp_path):
    got, summary = _crawl(ch, site, tmp_path / "c", "--no-soft404-probe")
    assert summary["soft404_probes"] == 0
    assert not [p for p in site.requested if "/dustless-" in p], site.requested
    assert got["legacy/prices.html"] == "soft404", got
    assert got["docs/gone.html"] == got["old/catalogue.html"] == "OK", got
    assert got["docs/http.html"] == "OK", got


# -- the pure decision ---------------------------------------------------------------------


def test_probe_urls_go_under_the_pages_first_segment():
    assert section_of("http://h.test/wiki/a/b.html?x=1") == "wiki"
    assert section_of("http://h.test/index.html") == ""
    assert probe_url("http://h.test:81/wiki/a.html", "wiki", "0123456789abcdef") == (
        "http://h.test:81/wiki/dustless-0123456789abcdef.html"
    )
    assert probe_url("http://h.test/", "", "00ff00ff00ff00ff") == (
        "http://h.test/dustless-00ff00ff00ff00ff.html"
    )


def test_at_most_two_probes_a_host_and_a_second_only_after_a_200():
    hosts = Soft404Hosts()
    assert hosts.wants_probe("a.test", "http://a.test/") == ""
    assert hosts.wants_probe("a.test", "http://a.test/docs/x.html") is None  # first was no 200
    hosts = Soft404Hosts()
    assert hosts.wants_probe("b.test", "http://b.test/x/1.html") == "x"
    hosts.probed("b.test", b"\x02" + bytes(128), first=True)
    assert hosts.wants_probe("b.test", "http://b.test/x/2.html") is None  # that section: done
    assert hosts.wants_probe("b.test", "http://b.test/y/1.html") == "y"
    assert hosts.wants_probe("b.test", "http://b.test/z/1.html") is None  # two: no more
    assert Soft404Hosts(probe=False).wants_probe("c.test", "http://c.test/") is None


@pytest.mark.parametrize(
    ("title", "text"),
    [
        ("Page not found | Example", "Page not found Sorry, we could not find it."),
        ("404 - Not Found", "Go back home."),
        ("Example", "Error 404. The page you requested does not exist."),
        ("Oops", "The page you are looking for could not be found."),
    ],
)
def test_status_pages_say_not_found(title, text):
    body = f"<html><head><title>{title}</title></head><body>x</body></html>".encode()
    assert says_not_found(body, text)


@pytest.mark.parametrize(
    ("title", "text"),
    [
        # A short page about 404s: its title is no status line, nor any of its sentences.
        ("Handling 404 errors", "A 404 answer means the server has no such URL. Log it."),
        ("HTTP 404", "Servers answer 404 when a page is not found on them."),
        # A status title, but a long page: a real document about the error.
        ("404 Not Found", " ".join(["word"] * 200)),
        ("Not found", ""),  # no main text at all: nothing to judge
    ],
)
def test_pages_about_404_are_no_status_pages(title, text):
    body = f"<html><head><title>{title}</title></head><body>x</body></html>".encode()
    assert not says_not_found(body, text)
