"""``--warc-bodies as-sent|decoded``: a test web that gzips its pages (every other one also
chunked), crawled both ways. As sent, a record holds the gzip bytes the server sent under
its ``Content-Encoding``, its payload digest is theirs, ``warcio check`` passes and pywb's
``id_`` replay gives back what the server sent; decoded, records are what they always were;
export and evaluate read either to the same results."""

from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from crawl.conftest import crawl
from dustless.cli.main import main
from dustless.store import INDEX_DIR, WARC_DIR, CdxjIndex, SQLiteStore, sha1_digest
from export.archive_support import get, pywb

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def crawled(tmp_path_factory, _testweb_pool):
    from testweb_fixture import start_testweb

    web = start_testweb(
        tmp_path_factory.mktemp("web"),
        profile="dirty",
        sites=2,
        pages_per_site=10,
        extra_args=("--gzip",),
    )
    _testweb_pool[("profile", "dirty-gzip")] = web
    outs = {}
    for mode in ("as-sent", "decoded"):
        out = outs[mode] = tmp_path_factory.mktemp("crawl") / mode
        assert crawl(web, out, warc_bodies=mode, concurrency=8).finished
    return web, outs


def _served(web, url: str, encoding: str = "gzip"):
    """What the test web sends for ``url`` (its gzip bytes are the same every time)."""
    parts = urlsplit(url)
    path = parts.path + ("?" + parts.query if parts.query else "")
    return get(web.address, web.port, path, {"Host": parts.netloc, "Accept-Encoding": encoding})


def _records(out: Path):
    """Every response record: (WARC headers, HTTP headers, stored payload), digests
    checked by warcio as it reads."""
    got = []
    for f in sorted((out / WARC_DIR).iterdir()):
        with open(f, "rb") as fh:
            for rec in ArchiveIterator(fh, check_digests="raise"):
                payload = rec.raw_stream.read()
                if rec.rec_type == "response":
                    got.append((rec.rec_headers, rec.http_headers, payload))
    return got


def _pages(records):
    return [r for r in records if (r[1].get_header("Content-Type") or "").startswith("text/html")]


def test_as_sent_records_hold_the_gzip_bytes_and_head_the_server_sent(crawled) -> None:
    web, outs = crawled
    pages = _pages(_records(outs["as-sent"]))
    assert len(pages) >= 10
    kinds = set()
    coded = 0
    for warc, http, payload in pages:
        url = warc.get_header("WARC-Target-URI")
        _status, headers, sent = _served(web, url)
        assert payload == sent, url
        if headers.get("Content-Encoding") != "gzip":
            continue  # a redirect, a 404, a page the test web sends otherwise
        coded += 1
        assert payload[:2] == b"\x1f\x8b"
        assert http.get_header("Content-Encoding") == "gzip"
        digest = sha1_digest(hashlib.sha1(payload).digest())
        assert warc.get_header("WARC-Payload-Digest") == digest
        assert http.get_header("Content-Length") == str(len(payload))
        chunked = headers.get("Transfer-Encoding") == "chunked"
        kinds.add(chunked)
        if chunked:  # de-chunked: the framing is a length, the server's kept under a name
            assert http.get_header("Transfer-Encoding") is None
            assert http.get_header("X-Dustless-Orig-Transfer-Encoding") == "chunked"
        else:  # the head as received, field for field, in its order (Date: another day)
            assert [f for f in http.headers if f[0] != "Date"] == [
                f for f in headers.items() if f[0] != "Date"
            ]
        for name in ("Content-Type", "ETag", "Vary"):
            assert http.get_header(name) == headers[name], (url, name)
    assert coded >= 10
    assert kinds == {True, False}  # both framings were met
    # The DB's content identity is the stored payload's digest: revisits refer to equals.
    with SQLiteStore(outs["as-sent"]) as store:
        rows = [r for r in store.iter_fetches() if r.content_sha1 and r.revisit_of is None]
    by_url = {w.get_header("WARC-Target-URI"): p for w, _h, p in pages}
    checked = [r for r in rows if r.url in by_url]
    assert checked
    for row in checked:
        assert row.content_sha1 == hashlib.sha1(by_url[row.url]).hexdigest()


def test_warcio_check_passes_on_every_file(crawled) -> None:
    _web, outs = crawled
    for mode in ("as-sent", "decoded"):
        files = [str(f) for f in sorted((outs[mode] / WARC_DIR).iterdir())]
        done = subprocess.run(
            [str(Path(sys.executable).parent / "warcio"), "check", "-v", *files],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "digest pass" in done.stdout


def test_decoded_records_are_todays(crawled) -> None:
    web, outs = crawled
    pages = _pages(_records(outs["decoded"]))
    assert len(pages) >= 10
    coded = 0
    for warc, http, payload in pages:
        url = warc.get_header("WARC-Target-URI")
        _status, headers, sent = _served(web, url)
        if headers.get("Content-Encoding") != "gzip":
            continue
        coded += 1
        assert payload == gzip.decompress(sent)
        assert http.get_header("Content-Encoding") is None
        assert http.get_header("X-Dustless-Orig-Content-Encoding") == "gzip"
        assert http.headers[-1] == ("Content-Length", str(len(payload)))
        digest = sha1_digest(hashlib.sha1(payload).digest())
        assert warc.get_header("WARC-Payload-Digest") == digest
    assert coded >= 10


def test_pywb_id_replay_gives_back_what_the_server_sent(crawled, tmp_path) -> None:
    web, outs = crawled
    out = outs["as-sent"]
    stamps = []
    for line in CdxjIndex(out / INDEX_DIR, out / WARC_DIR).lines():
        _key, ts, data = line.split(" ", 2)
        fields = json.loads(data)
        if fields["mime"] == "text/html" and fields["status"] == "200":
            stamps.append((ts, fields["url"]))
    assert len(stamps) >= 4
    with pywb(tmp_path / "pywb", out / WARC_DIR, out / INDEX_DIR) as port:
        replayed = 0
        for ts, url in stamps:
            _s, sent_headers, sent = _served(web, url)
            if sent_headers.get("Content-Encoding") != "gzip" or replayed == 4:
                continue
            replayed += 1
            status, headers, body = get(
                "127.0.0.1", port, f"/crawl/{ts}id_/{url}", {"Accept-Encoding": "gzip"}
            )
            assert status == 200
            assert body == sent, url
            assert headers.get("Content-Encoding") == "gzip"
            assert headers.get("Content-Type") == sent_headers["Content-Type"]
            # A client that takes no gzip gets the page decoded by pywb.
            status, headers, body = get(
                "127.0.0.1", port, f"/crawl/{ts}id_/{url}", {"Accept-Encoding": "identity"}
            )
            assert status == 200
            assert body == gzip.decompress(sent)
        assert replayed == 4


def _exported(out: Path, dst: Path) -> list[tuple[str, bytes]]:
    assert main(["export", str(out), "--format", "files", "-o", str(dst), "--quiet"]) == 0
    docs = []
    for xml in sorted(dst.rglob("*.xml")):
        if xml.name == "crawl-info.xml":
            continue
        text = xml.read_text(encoding="utf-8")
        url = text.split("<url>", 1)[1].split("</url>", 1)[0] if "<url>" in text else text
        doc = next(p for p in xml.parent.iterdir() if p.stem.startswith(xml.stem + "."))
        docs.append((url, gzip.decompress(doc.read_bytes())))
    return sorted(docs)


def test_export_and_evaluate_read_both_to_the_same_results(crawled, tmp_path, capsys) -> None:
    _web, outs = crawled
    exported = {m: _exported(outs[m], tmp_path / m) for m in outs}
    assert len(exported["as-sent"]) >= 10
    assert all(body.lstrip().lower().startswith(b"<!doctype") for _u, body in exported["as-sent"])
    assert exported["as-sent"] == exported["decoded"]
    for content in ("near", "exact"):
        results = {}
        for mode, out in outs.items():
            assert main(["evaluate", str(out), "--json", "--content", content]) == 0
            results[mode] = json.loads(capsys.readouterr().out)["rows"]
        assert results["as-sent"] == results["decoded"]
        assert any(r["redundancy_rate"] > 0 for r in results["as-sent"])
