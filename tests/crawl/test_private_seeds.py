"""A hostile page's link to a private address must not be reached in the next crawl either.

The first crawl refuses the link (a discovered URL never vouches for its address); it lands in
``seeds.out.txt`` as a *discovered* seed. A second crawl started from that file (as
docs/crawling.md suggests) must refuse it too: only seeds typed on the command line exempt
their addresses from the address policy. Everything stays on 127.0.0.0/8: the "private"
target is a listener on 127.0.0.2 that counts the connections it gets.
"""

from __future__ import annotations

import socket
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from crawl.conftest import run_cli
from dustless.crawl._build import fetcher_of
from dustless.crawl.config import CrawlConfig


class _Counter:
    """A TCP listener on 127.0.0.2 that counts connections and closes them."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.2", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def target():
    counter = _Counter()
    yield counter
    counter.close()


@pytest.fixture
def hostile_page(target):
    """A page on 127.0.0.1 that links to the private target, and a redirect to it."""
    link = f"http://127.0.0.2:{target.port}/admin"

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/robots.txt":
                # RFC 9309 §2.3.1.2: followed, but the target is refused: "unavailable".
                self.send_response(302)
                self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
                self.end_headers()
                return
            if self.path == "/go":
                self.send_response(302)
                self.send_header("Location", f"http://127.0.0.2:{target.port}/meta")
                self.end_headers()
                return
            body = f'<a href="{link}">admin</a> <a href="/go">go</a>'.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _crawl(*args: str, status: int = 0) -> str:
    done = run_cli("crawl", *args, "--quiet", "--delay", "0", "--delay-factor", "0")
    assert done.returncode == status, done.stderr
    return done.stderr


def test_discovered_private_seed_is_refused_in_the_next_crawl(tmp_path, hostile_page, target):
    first, second = tmp_path / "c1", tmp_path / "c2"
    _crawl(hostile_page, "--out", str(first))
    assert target.connections == 0
    text = (first / "seeds.out.txt").read_text()
    given, _, discovered = text.partition("# discovered")
    assert hostile_page in given
    assert f"127.0.0.2:{target.port}" in discovered  # marked as discovered, not given

    # Every seed of the file is on a loopback address nobody vouched for: nothing can be
    # fetched, and the crawl says why (exit 1).
    said = _crawl("--seeds", str(first / "seeds.out.txt"), "--out", str(second), status=1)
    assert "address policy" in said
    assert target.connections == 0  # nothing ever reached the private address
    with sqlite3.connect(second / "crawl.db") as db:
        fetches = db.execute(
            "SELECT f.state, f.error FROM fetches f JOIN urls u ON u.id = f.url_id WHERE u.url = ?",
            (f"http://127.0.0.2:{target.port}/admin",),
        ).fetchall()
        started = db.execute("SELECT started_at FROM crawls").fetchone()[0]
        refused_at = db.execute(
            "SELECT max(fetched_at) FROM fetches WHERE state = 'filtered'"
        ).fetchone()[0]
        hosts = dict(db.execute("SELECT name, ip FROM hosts"))
    # Refused at once (no retries with back-off: the verdict never changes), with the reason.
    assert [state for state, _ in fetches] == ["filtered"]
    assert "address policy: 127.0.0.2 is loopback" in fetches[0][1]
    assert refused_at - started < 1.0
    # The robots.txt of the first host redirected to the metadata address: not followed, and
    # that address is not recorded as the host's.
    assert "169.254.169.254" not in hosts.values()


def test_robots_redirected_to_a_refused_address(tmp_path, hostile_page, target):
    out = tmp_path / "c"
    _crawl(hostile_page, "--out", str(out))
    with sqlite3.connect(out / "crawl.db") as db:
        host = db.execute("SELECT ip, robots_state FROM hosts WHERE ip = '127.0.0.1'").fetchone()
        pages = db.execute(
            "SELECT count(*) FROM fetches f JOIN urls u ON u.id = f.url_id "
            "WHERE u.url LIKE 'http://127.0.0.1:%' AND f.state != 'robots'"
        ).fetchone()[0]
    assert host == ("127.0.0.1", "unavailable")  # allow all, as when redirects run out
    assert pages >= 2  # the seed and /go were fetched


def test_file_seeds_do_not_vouch_for_their_addresses():
    seed = "http://127.0.0.2:9/"
    typed = fetcher_of(CrawlConfig(seeds=(seed,), trusted_seeds=(seed,)))
    listed = fetcher_of(CrawlConfig(seeds=(seed,), trusted_seeds=()))
    api = fetcher_of(CrawlConfig(seeds=(seed,)))  # the API: every seed given on purpose
    assert typed.address_policy.permits("127.0.0.2", "127.0.0.2")
    assert api.address_policy.permits("127.0.0.2", "127.0.0.2")
    assert not listed.address_policy.permits("127.0.0.2", "127.0.0.2")
    assert not typed.address_policy.permits("169.254.169.254", "169.254.169.254")


def test_trusted_seeds_survive_the_batch_row():
    config = CrawlConfig(seeds=("http://a/", "http://b/"), trusted_seeds=("http://a/",))
    assert CrawlConfig.from_json(config.to_json()).trusted() == ("http://a/",)
    assert CrawlConfig.from_json(CrawlConfig(seeds=("http://a/",)).to_json()).trusted() == (
        "http://a/",
    )
