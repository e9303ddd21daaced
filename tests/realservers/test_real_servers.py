"""Real nginx, Apache (mod_deflate) and lighttpd, each with a 1 s keep-alive timeout, crawled
with a politeness rest equal to it (``servers.py`` starts them).

The rest meets the server's closing of the idle connection: a request goes out on a kept-alive
connection just as the server closes it, and no byte comes back. RFC 9112 §9.3.1 lets the
client send it again on a new connection; before that, such a page was lost (hSht/hErr, the
host backed off, the URL never fetched again): a third of the pages against Apache.

Then a recrawl of the unchanged servers must get its 304s: Apache's mod_deflate (and
lighttpd's) hands out ``"…-gzip"`` ETags it does not match in If-None-Match, and other documents
(not HTML) must be asked conditionally too.

All three servers are crawled in one crawl (one host name each, so their politeness clocks
run side by side), and recrawled once: the module's time is that of one server's pages.
"""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dustless.cli.main import main
from realservers.servers import KEEP_ALIVE, Docroot, make_docroot, running

pytestmark = pytest.mark.slow  # half a minute: first under xdist (conftest)

NAMES = ("nginx", "apache", "lighttpd")
PAGES, OTHERS = 14, 2  # real HTML pages and other documents: few, each one costs a 1 s rest


def _fetches(out: Path, batch: int) -> dict[str, tuple[str, int | None]]:
    with sqlite3.connect(out / "crawl.db") as db:
        rows = db.execute(
            "SELECT u.url, f.state, f.status FROM fetches f JOIN urls u ON u.id = f.url_id "
            "WHERE f.batch = ? ORDER BY f.id",
            (batch,),
        ).fetchall()
    return {url: (state, status) for url, state, status in rows}


@pytest.fixture(scope="module")
def crawled() -> Iterator[tuple[Docroot, dict[str, str], Path]]:
    """One crawl and one recrawl of the three servers; the docroot, each server's base URL
    and the crawl directory."""
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dustless-rs-")))
        docroot = make_docroot(tmp, PAGES, OTHERS)
        bases = {}
        for name in NAMES:
            server = stack.enter_context(running(name, docroot.path))
            bases[name] = f"http://{name}.test:{server.port}"
        seeds = [base + path for base in bases.values() for path in docroot.pages + docroot.others]
        out = tmp / "crawl"
        rest = ["--delay", str(KEEP_ALIVE), "--delay-factor", "0"]
        common = ["--resolve", "*.test:127.0.0.1", *rest, "--quiet"]
        assert main(["crawl", str(out), *seeds, "--max-depth", "0", *common]) == 0
        assert main(["recrawl", str(out), *common]) == 0
        yield docroot, bases, out


@pytest.mark.parametrize("name", NAMES)
def test_a_crawl_loses_no_page_to_the_keep_alive_timeout(crawled, name):
    docroot, bases, out = crawled
    got = _fetches(out, 1)
    wanted = [bases[name] + path for path in docroot.pages + docroot.others]
    lost = {url: got.get(url) for url in wanted if (got.get(url) or ("", 0))[1] != 200}
    assert not lost, f"{len(lost)} of {len(wanted)} documents not fetched: {lost}"
    html = [got[bases[name] + path][0] for path in docroot.pages]
    assert html == ["OK"] * PAGES


@pytest.mark.parametrize("name", NAMES)
def test_a_recrawl_of_the_unchanged_server_gets_its_304s(crawled, name):
    docroot, bases, out = crawled
    got = _fetches(out, 2)
    wanted = [bases[name] + path for path in docroot.pages + docroot.others]
    statuses = [(got.get(url) or ("", None))[1] for url in wanted]
    not_modified = statuses.count(304)
    assert not_modified >= 0.95 * len(wanted), f"{name}: {dict(zip(wanted, statuses, strict=True))}"
