"""Truncated captures: a body cut by the size limit, a stall or a reset is recorded with
``WARC-Truncated`` (WARC 1.1 §5.13), replays in pywb as a message that ends early, and is
counted by ``dustless stats``."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from crawl.conftest import crawl
from dustless.store import INDEX_DIR, WARC_DIR, CdxjIndex
from export.archive_support import pywb

pytestmark = pytest.mark.slow

# The hostile site's cut bodies (testweb/_hostile.py) and the reason each must carry. The
# stall limit is a second: the test web's stall lasts far longer, so it is met under load.
CUT = {
    "/big/huge.html": "length",  # Content-Length over the 2 MiB limit: nothing read
    "/big/chunked.html": "length",  # chunked, cut at the limit
    "/bomb.html": "length",  # the decompression guard
    "/slow/stall.html": "time",
    "/reset/mid.html": "disconnect",
}
_OPTS = {
    "delay": 0.05,
    "delay_factor": 0.0,
    "backoff": 0.05,
    "max_crawl_delay": 0.05,
    "stall_timeout": 1.0,
    "total_timeout": 20.0,
}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory, _testweb_pool):
    from testweb_fixture import start_testweb

    web = start_testweb(
        tmp_path_factory.mktemp("web"), profile="hostile", sites=1, pages_per_site=8
    )
    _testweb_pool[("profile", "hostile-truncated")] = web
    out = tmp_path_factory.mktemp("crawl") / "c"
    assert crawl(web, out, **_OPTS).finished
    return out


def _responses(out: Path) -> dict[str, tuple[str | None, str | None, int]]:
    """path -> (WARC-Truncated, HTTP Content-Length, payload bytes) of every response."""
    got = {}
    for f in sorted((out / WARC_DIR).iterdir()):
        with open(f, "rb") as fh:
            for rec in ArchiveIterator(fh, check_digests="raise"):
                payload = rec.content_stream().read()
                if rec.rec_type == "response":
                    path = urlsplit(rec.rec_headers.get_header("WARC-Target-URI")).path
                    got[path] = (
                        rec.rec_headers.get_header("WARC-Truncated"),
                        rec.http_headers.get_header("Content-Length"),
                        len(payload),
                    )
    return got


def test_cut_bodies_carry_warc_truncated_and_whole_ones_do_not(crawled) -> None:
    got = _responses(crawled)
    for path, reason in CUT.items():
        assert got[path][0] == reason, (path, got[path])
    whole = {p: v for p, v in got.items() if p not in CUT}
    assert "/landing.html" in whole
    assert all(v[0] is None for v in whole.values()), whole
    # The huge page announced 3 MiB and none of it was read: the record says so.
    _reason, length, size = got["/big/huge.html"]
    assert int(length or 0) > 2 * 1024 * 1024
    assert size == 0


def _replay(port: int, ts: str, url: str) -> tuple[int, int | None, int, bool]:
    """pywb's id_ replay: (status, announced length, bytes read, whether the body ended
    early). ``Connection: close``: pywb's server keeps an idle connection open after a
    short body, so only a closing connection shows the end (a browser's idle timeout)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", f"/crawl/{ts}id_/{url}", headers={"Connection": "close"})
        resp = conn.getresponse()
        announced = resp.getheader("Content-Length")
        try:
            body, early = resp.read(), False
        except http.client.IncompleteRead as exc:
            body, early = exc.partial, True
        return resp.status, int(announced) if announced else None, len(body), early
    finally:
        conn.close()


def test_pywb_replays_a_truncated_capture_as_cut_short(crawled, tmp_path) -> None:
    index = CdxjIndex(crawled / INDEX_DIR, crawled / WARC_DIR)
    stamps = {}
    for line in index.lines():
        _key, ts, data = line.split(" ", 2)
        url = json.loads(data)["url"]
        stamps[urlsplit(url).path] = (ts, url)
    with pywb(tmp_path / "pywb", crawled / WARC_DIR, crawled / INDEX_DIR) as port:
        for path in ("/big/huge.html", "/reset/mid.html", "/slow/stall.html"):
            status, announced, read, early = _replay(port, *stamps[path])
            assert status == 200, path
            assert early, f"{path}: replayed whole ({read} of {announced} bytes)"
            assert announced is not None, path
            assert read < announced, path
        status, announced, read, early = _replay(port, *stamps["/landing.html"])
        assert (status, early, read) == (200, False, announced)


def test_stats_count_truncated_captures_by_reason(crawled) -> None:
    want = {"length": 3, "time": 1, "disconnect": 1, "unspecified": 0}
    done = subprocess.run(
        [sys.executable, "-m", "dustless", "stats", str(crawled), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    got = {t["reason"]: t["count"] for t in json.loads(done.stdout)["truncated"]}
    assert got == want
    text = subprocess.run(
        [sys.executable, "-m", "dustless", "stats", str(crawled)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "Truncated captures (WARC-Truncated): 5 (length 3, time 1, disconnect 1" in text
