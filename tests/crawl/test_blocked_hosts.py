"""A crawl always ends: every URL of a blocked host ends recorded, whenever it was queued.

The test web is a chain of pages on 127.0.0.1; each page links to the next one and to a
page on 127.0.0.2–5. Those hosts are blocked (refused by the address policy, or given up
after ``--max-failures`` refused connections) when their first URL is tried — while later
pages of the chain keep linking to them. Links admitted after the block used to stay queued
forever: the crawl showed "N queued, 0 in flight" and never ended.
"""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from crawl.conftest import run_cli
from crawl.test_engine_fakes import ROBOTS_ALL, FakeFetcher, Page, crawl, links, states
from dustless.crawl import CrawlConfig, CrawlSetup, build_parts
from dustless.crawl.engine import Crawler
from dustless.crawl.hosts import HostTable
from dustless.errors import InternalError
from dustless.states import NetState
from dustless.store import SQLiteStore, WarcWriter

_PAGES = 30
_OTHERS = ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5")


@pytest.fixture
def chain():
    """``/p/N`` links to ``/p/N+1`` and to two pages on another loopback address, on a
    port where nothing listens (a refused connection when the address policy allows it)."""
    port_box: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if not self.path.startswith("/p/"):
                self.send_error(404)
                return
            n = int(self.path[3:])
            dead = port_box[0]
            links = "".join(
                f'<a href="http://{_OTHERS[(n + k) % len(_OTHERS)]}:{dead}/x{n}-{k}">x</a>'
                for k in range(2)
            )
            if n + 1 < _PAGES:
                links += f'<a href="/p/{n + 1}">next</a>'
            body = f"<html><body>{links}</body></html>".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # The port of the server on 127.0.0.1 is free on 127.0.0.2-5: connections are refused.
    port_box.append(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/p/0"
    server.shutdown()
    server.server_close()


def _states(out) -> tuple[dict[str, int], dict[str, str]]:
    with sqlite3.connect(out / "crawl.db") as db:
        by_state = dict(db.execute("SELECT state, count(*) FROM urls GROUP BY state"))
        # The last fetch row of each URL on the blocked hosts.
        last = dict(
            db.execute(
                "SELECT u.url, f.state FROM urls u JOIN fetches f ON f.url_id = u.id "
                "WHERE u.url NOT LIKE 'http://127.0.0.1:%' ORDER BY f.id"
            )
        )
    return by_state, last


def _others(out) -> list[str]:
    with sqlite3.connect(out / "crawl.db") as db:
        return [
            url
            for (url,) in db.execute(
                "SELECT url FROM urls WHERE url NOT LIKE 'http://127.0.0.1:%' AND kind != 'r'"
            )
        ]


@pytest.mark.parametrize(
    ("extra", "blocked_state"),
    [
        ((), "filtered"),  # 127.0.0.2-5 are loopback: refused without --allow-private
        # Allowed, but the connection is refused: the robots.txt is unreachable, and the
        # host given up at once; its URLs end as "robots" (RFC 9309 §2.3.1.4).
        (("--allow-private", "--max-failures", "1", "--backoff", "0"), "robots"),
    ],
    ids=["address-policy", "max-failures"],
)
def test_links_to_a_blocked_host_after_its_block_end_recorded(
    tmp_path, chain, extra, blocked_state
):
    out = tmp_path / "c"
    done = run_cli(
        "crawl", str(out), chain, "--quiet", "--delay", "0.1", "--delay-factor", "0",
        "--max-depth", "40", *extra, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    by_state, last = _states(out)
    assert set(by_state) <= {"done", "skipped"}, by_state  # nothing left queued or claimed
    others = _others(out)
    assert len(others) >= _PAGES  # the links came in all along the chain
    assert set(others) <= set(last)  # every one of them ends with a fetch row
    assert {last[u] for u in others} == {blocked_state}


def test_a_blocked_hosts_later_links_end_recorded_on_both_stores(tmp_path, open_store):
    # b.test is refused by the address policy when its robots.txt is asked; every page of
    # the chain on a.test links to it again, after its block. On PostgreSQL the crawl is one
    # worker of a shared crawl: the lease rounds give b.test back and take it again. The
    # chain's pages are slow, so that it goes on long after the block.
    chain = [f"http://a.test/{i}" for i in range(8)]
    web: dict = {
        "http://a.test/robots.txt": ROBOTS_ALL,
        "http://b.test/robots.txt": NetState.filtered,
        **{
            u: Page(body=links(nxt, f"http://b.test/{i}"))
            for i, (u, nxt) in enumerate(itertools.pairwise(chain))
        },
        chain[-1]: Page(body=b"end"),
    }
    slow = dict.fromkeys(chain, 0.3)  # past a lease round (1 s): b.test leased early
    store = open_store()
    done: list = []
    thread = threading.Thread(
        target=lambda: done.append(
            crawl(tmp_path, web, chain[0], store=store, max_depth=20, slow=slow)
        ),
        daemon=True,
    )
    thread.start()
    thread.join(timeout=60)
    assert done, "the crawl did not end"
    _store, fetcher, result = done[0]
    assert result.finished
    got = states(store)
    assert {got[f"http://b.test/{i}"] for i in range(len(chain) - 1)} == {"filtered"}
    # Blocked once for the whole run: never asked again, whatever came later.
    assert [u for u in fetcher.asked if u.startswith("http://b.test/")] == [
        "http://b.test/robots.txt"
    ]
    assert store.work_left(time.time()).queued_hosts == 0


def test_a_stuck_crawl_ends_with_an_error_instead_of_waiting_forever(tmp_path, monkeypatch):
    # The safety net: a bug that leaves URLs queued with nothing in flight and nothing due
    # (here, the host table never claims a URL) stops the crawl with one clear error.
    monkeypatch.setattr(HostTable, "refill", lambda self, force=False: False)
    web = {"http://a.test/robots.txt": ROBOTS_ALL, "http://a.test/": Page(body=b"x")}
    store = SQLiteStore(":memory:")
    config = CrawlConfig(seeds=("http://a.test/",), delay=0.0, progress=False)
    batch = store.start_batch(config.to_json(), time.time())
    warc = WarcWriter(tmp_path / "warc")
    crawler = Crawler(
        build_parts(CrawlSetup(config, store, FakeFetcher(web), warc, batch, strict=True))
    )
    errors: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(crawler.run())
        except BaseException as exc:
            errors.append(exc)
        finally:
            warc.close()
            store.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert errors, "the crawl waited forever"
    assert isinstance(errors[0], InternalError)
    assert "the crawl is stuck" in str(errors[0])
