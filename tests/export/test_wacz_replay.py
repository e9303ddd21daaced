"""Replayable archives: a crawl of the test web replays in pywb, exports as a WACZ that
py-wacz and our own check accept, and every WARC digest verifies with warcio."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from crawl.conftest import crawl
from dustless.export import check_wacz, export_wacz
from dustless.store import INDEX_DIR, WARC_DIR, CdxjIndex, SQLiteStore
from export.archive_support import get, pywb, replay_tool

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def crawled(tmp_path_factory, _testweb_pool):
    from testweb_fixture import start_testweb

    # sitemaps.test has a copy of a page (a revisit record) and a redirect to another page
    # (pywb replays a redirect to the same SURT key, such as www.x/a → x/a, as the target's
    # capture, so the redirect must change the key).
    web = start_testweb(tmp_path_factory.mktemp("web"), profile="sitemaps")
    _testweb_pool[("profile", "sitemaps")] = web
    out = tmp_path_factory.mktemp("crawl") / "c"
    result = crawl(web, out, seeds=(web.base_url("sitemaps.test") + "/",))
    assert result.finished
    return web, out


def _served(web, url: str) -> tuple[int, dict[str, str], bytes]:
    """What the test web answers for ``url`` (asked again: its pages are deterministic)."""
    parts = urlsplit(url)
    path = parts.path + ("?" + parts.query if parts.query else "")
    host = parts.netloc
    return get(web.address, web.port, path, {"Host": host, "Accept-Encoding": "identity"})


def _index_lines(out: Path) -> dict[tuple[str, int], tuple[str, dict[str, str]]]:
    """(file, offset) -> (timestamp, JSON fields) of every index line."""
    index = CdxjIndex(out / INDEX_DIR, out / WARC_DIR)
    lines = {}
    for line in index.lines():
        _key, ts, data = line.split(" ", 2)
        rec = json.loads(data)
        lines[(rec["filename"], int(rec["offset"]))] = (ts, rec)
    return lines


def _pick(out: Path):
    with SQLiteStore(out) as store:
        rows = list(store.iter_fetches())
    pages = [
        r
        for r in rows
        if r.status == 200 and r.mime == "text/html" and r.revisit_of is None and r.warc
    ]
    redirects = [r for r in rows if r.status in (301, 302) and r.location and r.warc]
    revisits = [r for r in rows if r.revisit_of is not None and r.status == 200 and r.warc]
    assert len(pages) >= 3
    assert redirects
    assert revisits
    return pages[:3], redirects[0], revisits[0]


def test_index_covers_every_response_and_revisit_record(crawled) -> None:
    _web, out = crawled
    lines = _index_lines(out)
    seen = 0
    for f in sorted((out / WARC_DIR).iterdir()):
        with open(f, "rb") as fh:
            it = ArchiveIterator(fh, check_digests="raise")  # warcio's digest check
            for rec in it:
                rec.content_stream().read()
                if rec.rec_type in ("response", "revisit"):
                    ts, fields = lines[(f.name, it.get_record_offset())]
                    assert fields["url"] == rec.rec_headers.get_header("WARC-Target-URI")
                    date = rec.rec_headers.get_header("WARC-Date")
                    assert ts == "".join(c for c in date if c.isdigit())[:14]
                    assert int(fields["length"]) == it.get_record_length()
                    seen += 1
    assert seen == len(lines)
    with SQLiteStore(out) as store:
        pointed = {(r.warc.file, r.warc.offset) for r in store.iter_fetches() if r.warc}
    assert pointed <= set(lines)  # nothing the DB points at is missing from the index


def test_the_crawls_index_equals_one_read_back_from_its_warc_files(crawled, tmp_path) -> None:
    # The crawl indexes each record from what the fetcher parsed (status, media type), not
    # by reading the record back: a scan of the same files must give the very same lines.
    _web, out = crawled
    scanned = CdxjIndex(tmp_path / "scanned", out / WARC_DIR)
    scanned.sync()
    crawl_lines = list(CdxjIndex(out / INDEX_DIR, out / WARC_DIR).lines())
    assert crawl_lines == list(scanned.lines())
    assert {json.loads(line.split(" ", 2)[2])["mime"] for line in crawl_lines} >= {
        "text/html",
        "warc/revisit",
    }


def test_pywb_replays_pages_a_redirect_and_a_revisit(crawled, tmp_path) -> None:
    web, out = crawled
    pages, redirect, revisit = _pick(out)
    with pywb(tmp_path / "pywb", out / WARC_DIR, out / INDEX_DIR) as port:

        def replay(row):
            ts = "".join(c for c in _ts_of(out, row) if c.isdigit())
            return get("127.0.0.1", port, f"/crawl/{ts}id_/{row.url}")

        for row in pages:
            status, _headers, body = replay(row)
            served = _served(web, row.url)
            assert status == 200
            assert body == served[2]
        status, headers, _ = replay(redirect)
        assert status == redirect.status
        location = headers.get("Location") or headers.get("location") or ""
        assert location.endswith(urlsplit(redirect.location).path), location
        status, _headers, body = replay(revisit)
        assert status == 200
        assert body == _served(web, revisit.url)[2]
        assert body  # the payload came from the record the revisit refers to


def _ts_of(out: Path, row) -> str:
    ts, fields = _index_lines(out)[(row.warc.file, row.warc.offset)]
    assert fields["url"] == row.url
    return ts


def test_wacz_export_validates(crawled, tmp_path) -> None:
    _web, out = crawled
    wacz = tmp_path / "crawl.wacz"
    summary = export_wacz(out, wacz)
    assert summary.pages > 0
    assert summary.index_lines > 0
    assert check_wacz(wacz) == []
    tool = replay_tool("wacz")
    done = subprocess.run(
        [str(tool), "validate", "-f", str(wacz)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation succeeded" in done.stdout


@pytest.mark.parametrize("block", [None, 4], ids=["index.cdx", "index.cdx.gz+idx"])
def test_wacz_loads_in_pywb_wb_manager_and_replays_pages(crawled, tmp_path, block) -> None:
    # pywb's wb-manager add --unpack-wacz takes only indexes/*.cdx(.gz): a WACZ whose index
    # has another name is added with 0 index lines and replays nothing.
    web, out = crawled
    wacz = tmp_path / "crawl.wacz"
    options = {} if block is None else {"index_block_lines": block}
    summary = export_wacz(out, wacz, **options)
    assert check_wacz(wacz) == []
    with zipfile.ZipFile(wacz) as z:
        names = {n for n in z.namelist() if n.startswith("indexes/")}
    if block is None:
        assert names == {"indexes/index.cdx"}
    else:
        assert names == {"indexes/index.cdx.gz", "indexes/index.idx"}
        assert summary.index_lines > 2 * block  # several blocks
    done = subprocess.run(
        [str(replay_tool("wacz")), "validate", "-f", str(wacz)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    root = tmp_path / "pywb"
    root.mkdir()
    manager = str(replay_tool("wb-manager"))
    for args in (["init", "crawl"], ["add", "--unpack-wacz", "crawl", str(wacz)]):
        done = subprocess.run(
            [manager, *args], cwd=root, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr
    indexed = (root / "collections" / "crawl" / "indexes" / "index.cdxj").read_text().splitlines()
    assert len(indexed) == summary.index_lines
    pages, _redirect, _revisit = _pick(out)
    with pywb(root) as port:
        for row in pages:
            ts = "".join(c for c in _ts_of(out, row) if c.isdigit())
            status, _headers, body = get("127.0.0.1", port, f"/crawl/{ts}id_/{row.url}")
            assert status == 200
            assert body == _served(web, row.url)[2]


def test_export_wacz_cli_refuses_an_existing_file(crawled, tmp_path) -> None:
    _web, out = crawled
    target = tmp_path / "x.wacz"
    target.write_bytes(b"")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dustless",
            "export",
            str(out),
            "--format",
            "wacz",
            "-o",
            str(target),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert "exists" in done.stderr
    assert "Traceback" not in done.stderr
