"""WarcWriter: WARC 1.1 records (response, request, revisit, metadata), rolling, locking,
round-trips through read_record; recover_warc on torn files."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator

from dustless.errors import StoreCorrupt, StoreLocked
from dustless.store import (
    REVISIT_PROFILE,
    WarcWriter,
    iter_records,
    read_record,
    recover_warc,
    sha1_digest,
    truncation,
)

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nServer: t\r\n\r\n"
REQ = b"GET /p HTTP/1.1\r\nHost: a.test\r\nUser-Agent: dustless\r\n\r\n"


def test_file_starts_with_warcinfo_and_is_warc_1_1(tmp_path: Path) -> None:
    with WarcWriter(tmp_path, info={"software": "dustless-test", "robots": "obey"}) as w:
        name = w.current_file
    assert name == "dustless-00001.warc.gz"
    first = next(iter_records(tmp_path / name))
    assert first.type == "warcinfo"
    assert first.header("WARC-Filename") == name
    assert b"software: dustless-test\r\n" in first.payload
    assert gzip.decompress((tmp_path / name).read_bytes()).startswith(b"WARC/1.1\r\n")


def test_response_and_request_records(tmp_path: Path) -> None:
    body = "<html>웹</html>".encode()
    with WarcWriter(tmp_path) as w:
        refs = w.write_response(
            "http://a.test/p", HEAD, body, fetched_at=1_700_000_000.25, request=REQ, ip="127.0.0.1"
        )
    assert refs.payload_sha1 == hashlib.sha1(body).hexdigest()
    assert refs.payload_digest == sha1_digest(hashlib.sha1(body).digest())
    assert refs.request is not None
    assert refs.request.offset == refs.response.end  # request follows its response
    resp = read_record(tmp_path, refs.response)
    assert (resp.type, resp.http_status, resp.payload) == ("response", 200, body)
    assert resp.target_uri == "http://a.test/p"
    assert resp.date == "2023-11-14T22:13:20.250000Z"
    assert resp.header("WARC-Payload-Digest") == refs.payload_digest
    assert resp.header("WARC-IP-Address") == "127.0.0.1"
    assert resp.record_id == refs.response.record_id
    req = read_record(tmp_path, (refs.request.file, refs.request.offset))
    assert req.type == "request"
    assert req.header("WARC-Concurrent-To") == resp.record_id
    assert ("Host", "a.test") in req.http_headers


def test_decoded_body_gets_consistent_http_headers(tmp_path: Path) -> None:
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"
        b"Content-Length: 7\r\n\r\n"
    )
    with WarcWriter(tmp_path) as w:
        refs = w.write_response("http://a.test/", head, b"0123456789", fetched_at=1.0)
    headers = dict(read_record(tmp_path, refs.response).http_headers)
    assert headers["Content-Length"] == "10"
    assert headers["X-Dustless-Orig-Content-Encoding"] == "gzip"
    assert "Content-Encoding" not in headers
    assert "Transfer-Encoding" not in headers


def test_truncated_payload_carries_warc_truncated_and_the_announced_length(
    tmp_path: Path,
) -> None:
    # WARC 1.1 §5.13. A cut identity body keeps the length the server announced, so a
    # replay of the head as stored ends early as the capture did; a cut encoded body (the
    # announced length counts other bytes) gets its stored length.
    plain = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 3000000\r\n\r\n"
    encoded = plain.replace(b"Content-Type", b"Content-Encoding: gzip\r\nContent-Type")
    with WarcWriter(tmp_path) as w:
        cut = w.write_response(
            "http://a.test/a", plain, b"x" * 10, fetched_at=1.0, truncated="length"
        )
        enc = w.write_response(
            "http://a.test/b", encoded, b"y" * 9, fetched_at=1.0, truncated="time"
        )
        whole = w.write_response("http://a.test/c", HEAD, b"z", fetched_at=1.0)
        name = w.current_file
        with pytest.raises(ValueError, match="WARC-Truncated"):
            w.write_response("http://a.test/d", HEAD, b"", fetched_at=1.0, truncated="size")
    rec = read_record(tmp_path, cut.response)
    assert rec.header("WARC-Truncated") == "length"
    assert dict(rec.http_headers)["Content-Length"] == "3000000"
    assert rec.payload == b"x" * 10
    rec = read_record(tmp_path, enc.response)
    assert rec.header("WARC-Truncated") == "time"
    headers = dict(rec.http_headers)
    assert headers["Content-Length"] == "9"
    assert headers["X-Dustless-Orig-Content-Length"] == "3000000"
    assert read_record(tmp_path, whole.response).header("WARC-Truncated") is None
    with open(tmp_path / name, "rb") as f:  # warcio reads and verifies them all the same
        for r in ArchiveIterator(f, check_digests="raise"):
            r.content_stream().read()


def test_as_sent_body_keeps_the_head_as_received_but_chunked_framing(tmp_path: Path) -> None:
    # The coded bytes under the head received; a de-chunked body is framed by its length
    # (a head saying chunked over de-chunked bytes is read as chunks by warcio and pywb);
    # a 304's length of the representation is no framing of its empty body.
    coded = gzip.compress(b"<html>as sent</html>", mtime=0)
    sent = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\nX: 1\r\n\r\n"
    sent %= len(coded)
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n"
    not_modified = b"HTTP/1.1 304 Not Modified\r\nContent-Length: 812\r\n\r\n"
    with WarcWriter(tmp_path, bodies="as-sent") as w:
        assert w.bodies == "as-sent"
        a = w.write_response("http://a.test/a", sent, coded, fetched_at=1.0, as_sent=True)
        b = w.write_response("http://a.test/b", chunked, coded, fetched_at=1.0, as_sent=True)
        c = w.write_response("http://a.test/c", not_modified, b"", fetched_at=1.0, as_sent=True)
        v = w.write_revisit(
            "http://a.test/d",
            chunked,
            a.payload_sha1,
            fetched_at=2.0,
            refers_to_uri="http://a.test/a",
            refers_to_date=1.0,
            payload_len=len(coded),
            as_sent=True,
        )
        name = w.current_file
    assert a.payload_sha1 == hashlib.sha1(coded).hexdigest()  # the digest of the coded bytes
    rec = read_record(tmp_path, a.response)
    assert rec.payload == coded
    assert list(rec.http_headers) == [
        ("Content-Encoding", "gzip"),
        ("Content-Length", str(len(coded))),
        ("X", "1"),
    ]
    assert rec.content() == b"<html>as sent</html>"
    assert rec.content(max_bytes=6) == b"<html>"  # a reader's bound holds
    rec = read_record(tmp_path, b.response)
    assert list(rec.http_headers) == [
        ("X-Dustless-Orig-Transfer-Encoding", "chunked"),
        ("Content-Encoding", "gzip"),
        ("Content-Length", str(len(coded))),
    ]
    assert rec.content() == b"<html>as sent</html>"
    assert dict(read_record(tmp_path, c.response).http_headers) == {
        "X-Dustless-Orig-Content-Length": "812",
        "Content-Length": "0",
    }
    assert dict(read_record(tmp_path, v.response).http_headers)["Content-Length"] == str(len(coded))
    with open(tmp_path / name, "rb") as f:
        for r in ArchiveIterator(f, check_digests="raise"):
            r.content_stream().read()


def test_a_cut_as_sent_body_keeps_its_coding_and_the_announced_length(tmp_path: Path) -> None:
    # As sent, the stored bytes are the first ones of what the announced length counts,
    # coded or not; a reader decodes what they hold.
    coded = gzip.compress(b"<p>" * 5000, mtime=0)
    head = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
    head %= len(coded)
    with WarcWriter(tmp_path, bodies="as-sent") as w:
        refs = w.write_response(
            "http://a.test/", head, coded[:40], fetched_at=1.0, truncated="time", as_sent=True
        )
    rec = read_record(tmp_path, refs.response)
    assert rec.header("WARC-Truncated") == "time"
    assert dict(rec.http_headers) == {
        "Content-Encoding": "gzip",
        "Content-Length": str(len(coded)),
    }
    assert rec.payload == coded[:40]
    assert b"<p><p>".startswith(rec.content()[:6])


def test_writer_refuses_an_unknown_way_of_storing_bodies(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="as-sent"):
        WarcWriter(tmp_path, bodies="raw")


def test_truncation_reason_of_each_state() -> None:
    assert truncation("tooBig", "Content-Length 3 exceeds the limit of 2 bytes") == "length"
    assert truncation("dTim", "no data for 5 s") == "time"
    cut = "the body was cut short (ConnectionResetError: [Errno 104] Connection reset by peer)"
    assert truncation("dErr", cut) == "disconnect"
    assert truncation("dErr", "invalid gzip stream") == "unspecified"
    assert truncation("dErr", None) == "unspecified"
    assert truncation("OK", None) is None
    assert truncation("pBig", None) is None  # stored whole


def test_digests_verify_with_warcio(tmp_path: Path) -> None:
    with WarcWriter(tmp_path) as w:
        w.write_response("http://a.test/", HEAD, b"x" * 5000, fetched_at=1.0, request=REQ)
        name = w.current_file
    kinds = []
    with open(tmp_path / name, "rb") as f:
        for rec in ArchiveIterator(f, check_digests="raise"):
            rec.content_stream().read()
            kinds.append(rec.rec_type)
    # Every record was read (and its digests checked), not an empty iteration.
    assert sorted(kinds) == ["request", "response", "warcinfo"]


def test_revisit_record_identical_payload_digest(tmp_path: Path) -> None:
    body = b"same payload"
    with WarcWriter(tmp_path) as w:
        first = w.write_response("http://a.test/1", HEAD, body, fetched_at=100.0)
        rev = w.write_revisit(
            "http://a.test/2",
            HEAD,
            first.payload_sha1,
            fetched_at=200.0,
            refers_to_uri="http://a.test/1",
            refers_to_date=100.0,
            refers_to_id=first.response.record_id,
            request=REQ,
            payload_len=len(body),
        )
    r = read_record(tmp_path, rev.response)
    assert r.type == "revisit"
    assert r.http_status == 200
    assert r.payload == b""  # WARC 1.1 §6.7.2: no payload, the HTTP head only
    assert r.header("WARC-Profile") == REVISIT_PROFILE
    assert r.header("WARC-Refers-To") == first.response.record_id
    assert r.header("WARC-Refers-To-Target-URI") == "http://a.test/1"
    assert r.header("WARC-Refers-To-Date") == "1970-01-01T00:01:40.000000Z"
    assert r.header("WARC-Payload-Digest") == first.payload_digest
    assert rev.request is not None


def test_files_roll_at_max_size_and_keep_pairs_together(tmp_path: Path) -> None:
    refs = []
    with WarcWriter(tmp_path, max_size=4000, compress_level=0) as w:
        for i in range(10):
            refs.append(
                w.write_response(
                    f"http://a.test/{i}", HEAD, bytes(900), fetched_at=1.0, request=REQ
                )
            )
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) > 2
    for r in refs:
        assert r.request is not None
        assert r.request.file == r.response.file
        assert read_record(tmp_path, r.response).payload == bytes(900)
    for name in names:
        assert next(iter_records(tmp_path / name)).type == "warcinfo"


def test_reopen_appends_to_last_file(tmp_path: Path) -> None:
    with WarcWriter(tmp_path) as w:
        a = w.write_response("http://a.test/1", HEAD, b"1", fetched_at=1.0)
    with WarcWriter(tmp_path) as w:
        b = w.write_response("http://a.test/2", HEAD, b"2", fetched_at=2.0)
    assert a.response.file == b.response.file
    assert b.response.offset == a.response.end
    types = [r.type for r in iter_records(tmp_path / a.response.file)]
    assert types == ["warcinfo", "response", "response"]


def test_second_writer_is_locked_out_and_touches_nothing(tmp_path: Path) -> None:
    with WarcWriter(tmp_path) as first:
        first.write_response("http://a.test/", HEAD, b"x", fetched_at=1.0)
        first.flush_durable()
        path = tmp_path / first.current_file
        with open(path, "ab") as f:
            f.write(b"\x1f\x8b half a record being written")  # the first writer is mid-write
        size = path.stat().st_size
        with pytest.raises(StoreLocked):
            WarcWriter(tmp_path)
        assert path.stat().st_size == size  # no "recovery" of a file someone else writes
    WarcWriter(tmp_path).close()  # released on close (and the torn tail repaired)
    assert path.stat().st_size < size


def test_read_record_errors(tmp_path: Path) -> None:
    with WarcWriter(tmp_path) as w:
        w.write_response("http://a.test/", HEAD, b"x", fetched_at=1.0)
    with pytest.raises(StoreCorrupt, match="missing"):
        read_record(tmp_path, ("nope.warc.gz", 0))
    # An offset inside a record is no record, whatever bytes are there: warcio read one
    # from the tail of a gzip header now and then (its bytes depend on the random record
    # id), a "response" without id or date; hundreds of records make that certain.
    with WarcWriter(tmp_path / "many") as w:
        refs = [w.write_response("http://a.test/", HEAD, b"x", fetched_at=1.0) for _ in range(400)]
    for r in refs:
        with pytest.raises(StoreCorrupt):
            read_record(tmp_path / "many", (r.response.file, r.response.offset + 3))


# -- round trip (hypothesis) --------------------------------------------------------------------
_header_value = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30).map(
    str.strip
)
_heads = st.lists(
    st.tuples(st.sampled_from(["Content-Type", "X-A", "Set-Cookie", "ETag"]), _header_value),
    max_size=5,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    items=st.lists(
        st.tuples(
            st.integers(100, 599),
            _heads,
            st.binary(max_size=3000),
            st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=40),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_write_read_round_trip(tmp_path_factory: pytest.TempPathFactory, items: list) -> None:  # type: ignore[type-arg]
    d = tmp_path_factory.mktemp("rt")
    written = []
    with WarcWriter(d, max_size=6000) as w:
        for status, fields, body, path in items:
            head = (
                f"HTTP/1.1 {status} X\r\n".encode()
                + b"".join(f"{k}: {v}\r\n".encode() for k, v in fields)
                + b"\r\n"
            )
            url = "http://h.test/" + path
            written.append(
                (
                    url,
                    status,
                    fields,
                    body,
                    w.write_response(url, head, body, fetched_at=5.0, request=REQ),
                )
            )
    for url, status, fields, body, refs in written:
        rec = read_record(d, refs.response)
        assert (rec.target_uri, rec.http_status, rec.payload) == (url, status, body)
        for k, v in fields:
            assert (k, v) in rec.http_headers
        assert rec.header("WARC-Payload-Digest") == sha1_digest(hashlib.sha1(body).digest())


# -- torn records -----------------------------------------------------------------------------
def _write_some(d: Path, n: int) -> tuple[Path, list[int], list[int]]:
    """n response records; their start offsets and end offsets."""
    starts, ends = [], []
    with WarcWriter(d) as w:
        for i in range(n):
            body = bytes([i % 256]) * (50 + 37 * i)
            ref = w.write_response(f"http://a.test/{i}", HEAD, body, fetched_at=float(i)).response
            starts.append(ref.offset)
            ends.append(ref.end)
        path = d / w.current_file
    return path, starts, ends


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cut_fraction=st.floats(0.0, 1.0), garbage=st.binary(max_size=40))
def test_truncated_at_any_point_recovers_every_whole_record(
    tmp_path_factory: pytest.TempPathFactory, cut_fraction: float, garbage: bytes
) -> None:
    d = tmp_path_factory.mktemp("torn")
    path, starts, ends = _write_some(d, 8)
    cut = int(path.stat().st_size * cut_fraction)
    path.write_bytes(path.read_bytes()[:cut] + garbage)
    recover_warc(path)
    whole = [s for s, e in zip(starts, ends, strict=True) if e <= cut]
    if cut < starts[0]:  # even the warcinfo record was torn
        assert path.stat().st_size == 0
    else:
        records = list(iter_records(path))  # raises if anything torn is left
        assert [r.type for r in records] == ["warcinfo"] + ["response"] * len(whole)
        assert [r.ref.offset for r in records[1:]] == whole
    # a resume appends to a valid file
    with WarcWriter(d) as w:
        refs = w.write_response("http://a.test/after", HEAD, b"after", fetched_at=9.0)
    assert read_record(d, refs.response).payload == b"after"
    assert next(iter_records(d / refs.response.file)).type == "warcinfo"


def test_recover_counts_and_truncates_exactly(tmp_path: Path) -> None:
    path, _, ends = _write_some(tmp_path, 5)
    assert recover_warc(path).truncated == 0
    full = path.read_bytes()
    path.write_bytes(full[: ends[2] + 10])  # 10 bytes into the 4th record
    result = recover_warc(path)
    assert (result.valid_end, result.truncated) == (ends[2], 10)
    assert len(list(iter_records(path))) == 4  # warcinfo + 3
    assert recover_warc(path, start=ends[1]).records == 1  # scanning from a known boundary


def test_recover_refuses_a_file_shorter_than_the_db_says(tmp_path: Path) -> None:
    path, _, ends = _write_some(tmp_path, 2)
    with pytest.raises(StoreCorrupt):
        recover_warc(path, start=ends[-1] + 100)


def test_writer_recovers_on_open_from_committed_end(tmp_path: Path) -> None:
    path, _, ends = _write_some(tmp_path, 3)
    with open(path, "ab") as f:
        f.write(gzip.compress(b"WARC/1.1\r\nContent-Length: 100\r\n\r\nshort")[:-5])
    with WarcWriter(tmp_path, committed_ends={path.name: ends[1]}) as w:
        assert w.current_file == path.name
        refs = w.write_response("http://a.test/z", HEAD, b"z", fetched_at=1.0)
    assert refs.response.offset == ends[-1]
    assert len(list(iter_records(path))) == 5


# -- fast paths (each checked against the straightforward way it replaces) ----------------


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=64))
def test_sha1_digest_fast_base32_equals_base64(raw: bytes) -> None:
    import base64

    for value in (raw, hashlib.sha1(raw).digest()):
        expected = "sha1:" + base64.b32encode(value).decode("ascii")
        assert sha1_digest(value) == expected
        assert sha1_digest(value.hex()) == expected


def test_record_ids_are_uuid4_urns() -> None:
    import uuid

    from dustless.store._warc import _record_id

    ids = {_record_id() for _ in range(2000)}
    assert len(ids) == 2000
    for rid in ids:
        assert rid.startswith("<urn:uuid:")
        assert rid.endswith(">")
        u = uuid.UUID(rid[10:-1])
        assert u.version == 4
        assert u.variant == uuid.RFC_4122
        assert f"<urn:uuid:{u}>" == rid


@pytest.mark.parametrize("level", [-1, 0, 1, 2, 6, 9])
def test_member_is_a_gzip_member_as_zlib_writes_it(tmp_path: Path, level: int) -> None:
    # One deflate stream per writer, cut per record with a full flush: each member must be a
    # standalone gzip member (same header as zlib's wbits=31), decoding to its record alone.
    import zlib

    w = WarcWriter(tmp_path, compress_level=level)
    refs = [
        w.write_response(f"http://a.test/{i}", HEAD, b"<p>x</p>" * i, fetched_at=1.0, request=REQ)
        for i in range(5)
    ]
    w.close()
    data = (tmp_path / w.current_file).read_bytes()
    reference = zlib.compressobj(level, zlib.DEFLATED, 31)
    header = (reference.compress(b"x") + reference.flush())[:10]
    for ref in refs:
        for r in (ref.response, ref.request):
            assert r is not None
            member = data[r.offset : r.offset + r.length]
            assert member[:10] == header
            d = zlib.decompressobj(31)
            record = d.decompress(member)
            assert d.eof
            assert not d.unused_data
            assert record.startswith(b"WARC/1.1\r\n")
            assert record.endswith(b"\r\n\r\n")
            assert read_record(tmp_path, r).payload is not None


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.binary(max_size=3000), min_size=1, max_size=8))
def test_members_decode_alone_whatever_came_before(tmp_path: Path, payloads: list[bytes]) -> None:
    # Full flush resets the compressor: a member never refers to an earlier record's bytes,
    # so every (offset, length) decodes with gzip alone, in any order of payloads.
    import uuid

    d = tmp_path / uuid.uuid4().hex
    w = WarcWriter(d)
    refs = [
        w.write_response("http://a.test/", HEAD, p, fetched_at=2.0, request=REQ) for p in payloads
    ]
    w.close()
    data = (d / w.current_file).read_bytes()
    for p, ref in zip(payloads, refs, strict=True):
        member = data[ref.response.offset : ref.response.offset + ref.response.length]
        assert gzip.decompress(member).endswith(p + b"\r\n\r\n")
    assert len(list(iter_records(d / w.current_file))) == 1 + 2 * len(payloads)
    assert recover_warc(d / w.current_file).truncated == 0


@settings(max_examples=500, deadline=None)
@given(
    st.floats(min_value=0, max_value=4e9, allow_nan=False)
    | st.integers(0, 4_000_000_000).map(lambda s: s + 0.9999996)
)
def test_warc_date_equals_the_strftime_form(ts: float) -> None:
    import datetime as dt

    from dustless.store import warc_date

    d = dt.datetime.fromtimestamp(ts, dt.UTC)
    assert warc_date(ts) == d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond:06d}Z"


def test_a_writers_record_ids_are_distinct_uuid4_urns(tmp_path: Path) -> None:
    # The writer makes its ids from the hex digits of one random draw; ids of two draws
    # (more than _IDS_PER_DRAW) must still be uuid4 URNs, none repeated.
    import uuid

    with WarcWriter(tmp_path) as w:
        ids = [w._next_id() for _ in range(3 * 256 + 5)]
    assert len(set(ids)) == len(ids)
    for rid in ids:
        u = uuid.UUID(rid[10:-1])
        assert (u.version, u.variant) == (4, uuid.RFC_4122)
        assert f"<urn:uuid:{u}>" == rid


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 4_000_000_000), st.lists(st.integers(0, 999_999), min_size=1, max_size=20))
def test_warc_dates_within_one_second_equal_the_strftime_form(
    second: int, micros: list[int]
) -> None:
    # Dates of one second share its text (made once); each must still be datetime's.
    import datetime as dt

    from dustless.store import warc_date

    for ts in [second + m / 1e6 for m in micros] + [second + 0.9999996, float(second)]:
        d = dt.datetime.fromtimestamp(ts, dt.UTC)
        assert warc_date(ts) == d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond:06d}Z"


_HEAD_NAMES = st.sampled_from(
    ["Content-Type", "content-length", "Content-Length", "Transfer-Encoding", "Server", "X-A",
     "Content-Encoding", "Bad Name", "Bad:", ""]
)  # fmt: skip
_HEAD_VALUES = st.sampled_from(
    ["5", "05", "7", "x", "chunked", "", " 5", "5 ", "a  b", "\xe9", "\t"]
)


@settings(max_examples=1000, deadline=None)
@given(
    st.sampled_from(
        ["HTTP/1.1 200 OK", "HTTP/1.0 404", "HTTP/1.1 200 ", " HTTP/1.1 200 OK", "200"]
    ),
    st.lists(st.tuples(_HEAD_NAMES, st.sampled_from([": ", ":", ":  "]), _HEAD_VALUES), max_size=6),
    st.sampled_from(["\r\n", "\n"]),
    st.integers(0, 8),
    st.booleans(),
)
def test_sent_head_kept_as_received_only_where_rebuilding_it_gives_it_back(
    first: str, fields: list[tuple[str, str, str]], eol: str, length: int, truncated: bool
) -> None:
    # A canonical head is stored byte for byte without being parsed again; whatever the
    # head, the stored one is what the long way (parse, rename, rebuild) makes of it.
    from dustless.store._warc import _rebuilt_sent_head, _sent_head

    head = (eol.join([first, *(n + s + v for n, s, v in fields)]) + eol + eol).encode("latin-1")
    assert _sent_head(head, length, truncated=truncated) == _rebuilt_sent_head(
        head, length, truncated
    )


def test_a_canonical_head_is_stored_byte_for_byte(tmp_path: Path) -> None:
    from dustless.store._warc import _sent_head

    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 3\r\nX-A: a  b\r\n\r\n"
    assert _sent_head(head, 3) is head  # as received: not parsed and joined again
    with WarcWriter(tmp_path, bodies="as-sent") as w:
        ref = w.write_response("http://a.test/", head, b"abc", fetched_at=1.0, as_sent=True)
    record = gzip.decompress((tmp_path / w.current_file).read_bytes()[ref.response.offset :])
    assert head + b"abc\r\n\r\n" in record
