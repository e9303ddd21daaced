"""The CDXJ index beside the WARC files: SURT keys as pywb computes them, lines that match
the records, a torn tail never indexed, crash leftovers cleaned, compaction, and kill -9."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.store import (
    CdxjIndex,
    SQLiteStore,
    WarcWriter,
    iter_records,
    read_record,
    surt_key,
)
from export.archive_support import replay_tool

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
URLS = [
    "http://www.Example.com:8080/A/b/?q=2&p=1#x",
    "https://example.com/",
    "http://site1.test:41234/news/item-4.html",
    "http://www2.site.test/a/../b/./c//d/",
    "http://site.test/path%7Efoo/%41B?x=%20y&a",
    "http://user:pw@Site.TEST:80/",
    "http://site.test/list.aspx?cate_id=467&page=1",
    "http://site.test/x.jsp;jsessionid=ABCDEF012345?b=2&a=1",
    "http://site.test/?PHPSESSID=0123456789abcdef0123456789abcdef&id=3",
    "http://127.0.0.1:8000/a",
    "http://site.test/caf%C3%A9/ü?ü=1",
    "http://site.test/a?",
    "http://site.test",
    "http://xn--bcher-kva.test/b",
    "http://site.test/a%2Fb/c%25d",
    "http://www.web.com/detail.aspx?per_id=1003",
    # Printable ASCII without "%" or a space takes the key's fast path: its cases too.
    "http://Site.test/A/./B/../C/?Z=1&a=2&sid=0123456789abcdef0123456789abcdef",
    "http://1.2.3.4/x",
    "http://3232235777/x",
    "http://site..test./a//b",
    "https://www3.site.test:443/(S(abcdefghijklmnopqrstuvwx))/page.aspx?x=1",
    "http://site.test/a;b=c/d?e=f;g&h",
    "http://site.test/~user/{x}|[y]^`z`",
    "http://site.test/a?b&a&c=",
    # Each session pattern of the query, found by its mark before the patterns run.
    "http://site.test/p?ASPSESSIONIDQQGGQGPA=ABCDEFGHIJKLMNOPQRSTUVWX&z=1",
    "http://site.test/p?CFID=123&CFTOKEN=456&a=1",
    "http://site.test/p?JSESSIONID=0123456789ABCDEF0123456789ABCDEF&x=2",
]


def test_surt_keys_equal_the_surt_package() -> None:
    python = replay_tool("python")
    code = "import sys, surt\nfor u in sys.stdin.read().split('\\n'): print(surt.surt(u))"
    done = subprocess.run(
        [str(python), "-c", code], input="\n".join(URLS), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert [surt_key(u) for u in URLS] == done.stdout.splitlines()


def _write(d: Path, n: int, start: int = 0) -> list:
    refs = []
    with WarcWriter(d / "warc", max_size=4_000) as w:
        for i in range(start, start + n):
            url = f"http://a.test/p{i}"
            r = w.write_response(url, HEAD, b"<p>%d</p>" % (i % 3), fetched_at=1e9 + i,
                                 request=b"GET / HTTP/1.1\r\n\r\n")  # fmt: skip
            refs.append((url, r.response))
            if i % 3 == 2:
                rv = w.write_revisit(url + "?again", HEAD, r.payload_sha1, fetched_at=1e9 + i,
                                     refers_to_uri=url, refers_to_date=1e9 + i)  # fmt: skip
                refs.append((url + "?again", rv.response))
    return refs


def _lines(index: CdxjIndex) -> list[tuple[str, str, dict]]:
    out = []
    for line in index.lines():
        key, ts, data = line.rstrip("\n").split(" ", 2)
        out.append((key, ts, json.loads(data)))
    return out


def test_every_response_and_revisit_record_once_sorted_and_exact(tmp_path: Path) -> None:
    refs = _write(tmp_path, 20)
    index = CdxjIndex.beside(tmp_path / "warc")
    assert index.sync() == len(refs)
    assert index.sync() == 0  # nothing new
    lines = _lines(index)
    assert [ln[:2] for ln in lines] == sorted(ln[:2] for ln in lines)
    got = {(d["filename"], int(d["offset"]), int(d["length"])): d for _, _, d in lines}
    for url, ref in refs:
        d = got[(ref.file, ref.offset, ref.length)]
        assert d["url"] == url
        assert d["mime"] == ("warc/revisit" if "again" in url else "text/html")
        assert d["status"] == "200"
        assert d["digest"].startswith("sha1:")
    assert len({ref.file for _, ref in refs}) > 1  # across rolled files
    # more records later: only they are added
    more = _write(tmp_path, 5, start=20)
    assert index.sync() == len(more)
    assert len(_lines(index)) == len(refs) + len(more)
    assert index.rebuild() == len(refs) + len(more)


def test_a_torn_tail_is_not_indexed_until_whole(tmp_path: Path) -> None:
    _write(tmp_path, 3)
    last = sorted((tmp_path / "warc").iterdir())[-1]
    whole = last.read_bytes()
    index = CdxjIndex.beside(tmp_path / "warc")
    n = index.sync()
    with open(last, "ab") as f:  # a record cut short by a crash
        f.write(whole[-300:-10])
    assert index.sync() == 0
    with SQLiteStore(tmp_path) as store:  # the resume step truncates it
        WarcWriter(tmp_path / "warc", committed_ends=store.warc_ends()).close()
    assert last.read_bytes() == whole
    refs = _write(tmp_path, 2, start=3)
    assert index.sync() == len(refs)
    assert len(_lines(index)) == n + len(refs)


def test_crash_leftovers_are_cleaned_when_opened(tmp_path: Path) -> None:
    _write(tmp_path, 6)
    index = CdxjIndex.beside(tmp_path / "warc")
    index.sync()
    before = _lines(index)
    d = index.directory
    (d / "seg-00000099-L0.cdxj").write_text("junk 1 {}\n")  # written, never listed
    (d / "index.json.tmp").write_text("{")
    live = index.segment_paths()[0]
    os.replace(live, live.with_name(live.name + ".tmp"))  # listed, not yet renamed
    again = CdxjIndex.beside(tmp_path / "warc")
    assert _lines(again) == before
    assert sorted(p.name for p in d.iterdir()) == sorted(
        [p.name for p in again.segment_paths()] + ["index.json", ".lock"]
    )


def test_segments_merge_as_an_lsm_tree(tmp_path: Path) -> None:
    index = CdxjIndex(tmp_path / "indexes", tmp_path / "warc", fanout=2)
    total = 0
    for i in range(9):
        total += len(_write(tmp_path, 2, start=2 * i))
        index.sync()
    assert len(index.segment_paths()) <= 4  # 9 syncs: log2(9) levels
    lines = _lines(index)
    assert len(lines) == total
    assert [ln[:2] for ln in lines] == sorted(ln[:2] for ln in lines)


WORKER = Path(__file__).with_name("cdxj_worker.py")


@pytest.mark.slow
def test_kill_9_never_leaves_a_line_without_its_record(tmp_path: Path) -> None:
    rng = random.Random(7)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    for _ in range(4):
        with subprocess.Popen(
            [sys.executable, str(WORKER), str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env
        ) as proc:
            assert proc.stdout is not None
            for _ in range(3 + rng.randrange(6)):
                assert proc.stdout.readline().startswith("committed ")
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        # Before any repair: every line points at a whole record of its URL.
        index = CdxjIndex.beside(tmp_path / "warc")
        for _key, _ts, d in _lines(index):
            rec = read_record(tmp_path / "warc", (d["filename"], int(d["offset"])))
            assert rec.target_uri == d["url"]
        # After the catch-up sync: nothing the DB points at is missing.
        index.sync()
        indexed = {(d["filename"], int(d["offset"])) for _, _, d in _lines(index)}
        with SQLiteStore(tmp_path) as store:
            pointed = {(r.warc.file, r.warc.offset) for r in store.iter_fetches() if r.warc}
        assert pointed <= indexed
    # After a resume (the writer repairs the torn tail), the index is exactly the records.
    with SQLiteStore(tmp_path) as store:
        WarcWriter(tmp_path / "warc", committed_ends=store.warc_ends()).close()
    index = CdxjIndex.beside(tmp_path / "warc")
    index.sync()
    on_disk = {
        (f.name, r.ref.offset)
        for f in sorted((tmp_path / "warc").glob("*.warc.gz"))
        for r in iter_records(f)
        if r.type == "response"
    }
    assert {(d["filename"], int(d["offset"])) for _, _, d in _lines(index)} == on_disk


def test_the_writers_own_lines_equal_the_lines_read_back(tmp_path: Path) -> None:
    # The crawl hands the index what the writer wrote (no reading back); a second index
    # built by scanning the same files must hold exactly the same lines.
    with WarcWriter(tmp_path / "warc", max_size=4_000) as w:
        fast = CdxjIndex(tmp_path / "fast", tmp_path / "warc")
        for i in range(30):
            url = URLS[i % len(URLS)]
            r = w.write_response(url, HEAD, b"<p>%d</p>" % (i % 4), fetched_at=1e9 + i)
            if i % 4 == 3:
                w.write_revisit(url, HEAD, r.payload_sha1, fetched_at=1e9 + i,
                                refers_to_uri=url, refers_to_date=1e9)  # fmt: skip
            if i % 7 == 6:
                w.flush_durable()
                assert fast.sync(known=w.take_index()) > 0
        w.flush_durable()
        fast.sync(known=w.take_index())
    scanned = CdxjIndex(tmp_path / "scanned", tmp_path / "warc")
    scanned.sync()
    assert list(fast.lines()) == list(scanned.lines())
    assert fast.ends == scanned.ends


@settings(max_examples=300, deadline=None)
@given(
    url=st.text(min_size=1, max_size=40),
    mime=st.text(max_size=12),
    digest=st.text(max_size=12),
    name=st.text(min_size=1, max_size=12),
)
def test_a_lines_json_is_what_json_dumps_writes(
    url: str, mime: str, digest: str, name: str
) -> None:
    # The line is written by hand where nothing needs escaping: it must be byte for byte
    # what json.dumps (ensure_ascii=False) gives, quotes, backslashes and controls included.
    from dustless.store._cdxj import CdxjEntry

    line = CdxjEntry("http://a.test/" + url, "20260101000000", mime, "200", digest, 7, 9, name)
    data = {"url": "http://a.test/" + url, "mime": mime, "status": "200"}
    if digest:
        data["digest"] = digest
    data.update(length="7", offset="9", filename=name)
    key = surt_key("http://a.test/" + url)
    assert line.line() == f"{key} 20260101000000 {json.dumps(data, ensure_ascii=False)}"
