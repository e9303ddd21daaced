"""Body limits: size, streaming, decompression and its bomb guard."""

import gzip
import zlib

import brotli
import pytest
from aiohttp import web

from dustless.fetch import FetchLimits, NetState

LIMITS = FetchLimits(max_bytes=64 * 1024, stall_timeout=0.5, connect_timeout=0.5, total_timeout=5)
PAGE = b"<html>" + b"".join(b"<p>line %d</p>\n" % i for i in range(1500)) + b"</html>"


def raw_response(body, encoding=None, extra=b"", length=True):
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
    if encoding:
        head += b"Content-Encoding: " + encoding + b"\r\n"
    if length:
        head += b"Content-Length: %d\r\n" % len(body)
    head += extra + b"\r\n"

    async def handler(reader, writer, release):
        writer.write(head + body)
        await writer.drain()

    return handler


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        (b"gzip", gzip.compress),
        (b"x-gzip", gzip.compress),
        (b"deflate", zlib.compress),
        (b"deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as IIS sent it
        (b"br", brotli.compress),
        (b"identity", lambda data: data),
    ],
)
async def test_decodes(raw_server, make_fetcher, encoding, encode):
    server = await raw_server(raw_response(encode(PAGE), encoding))
    result = await make_fetcher(LIMITS).fetch(server.url(host="h.test"))
    assert result.state is NetState.OK
    assert result.body == PAGE
    assert result.wire_bytes == len(encode(PAGE))
    # The response head keeps the encoding header for the WARC record.
    if encoding != b"identity":
        assert b"Content-Encoding: " + encoding in result.raw_response_head


async def test_announced_length_over_the_limit_is_not_read(raw_server, make_fetcher):
    body = b"x" * (LIMITS.max_bytes + 1)
    server = await raw_server(raw_response(body))
    result = await make_fetcher(LIMITS).fetch(server.url(host="h.test"))
    assert result.state is NetState.tooBig
    assert result.status == 200
    assert result.body == b""
    assert "Content-Length" in result.error


async def test_streamed_body_over_the_limit_is_cut(web_server, make_fetcher):
    async def endless(request):
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        try:
            for _ in range(1000):
                await response.write(b"y" * 8192)
        except ConnectionError:
            pass
        return response

    app = web.Application()
    app.router.add_get("/", endless)
    port = await web_server(app)
    result = await make_fetcher(LIMITS).fetch(f"http://h.test:{port}/")
    assert result.state is NetState.tooBig
    assert len(result.body) == LIMITS.max_bytes
    assert result.truncated


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [(b"gzip", gzip.compress), (b"br", lambda data: brotli.compress(data, quality=4))],
)
async def test_decompression_bomb_is_cut_at_the_limit(raw_server, make_fetcher, encoding, compress):
    bomb = compress(b"\0" * (20 * 1024 * 1024))  # 20 MiB of zeros in a few KiB
    server = await raw_server(raw_response(bomb, encoding))
    limits = FetchLimits(
        max_bytes=1024 * 1024, max_decompressed_ratio=1e9, stall_timeout=0.5, total_timeout=5
    )
    result = await make_fetcher(limits).fetch(server.url(host="h.test"))
    assert result.state is NetState.tooBig
    assert len(result.body) <= limits.max_bytes


async def test_decompression_ratio_guard(raw_server, make_fetcher):
    data = b"\0" * (512 * 1024)
    server = await raw_server(raw_response(gzip.compress(data), b"gzip"))
    limits = FetchLimits(max_bytes=4 * 1024 * 1024, max_decompressed_ratio=50, total_timeout=5)
    result = await make_fetcher(limits).fetch(server.url(host="h.test"))
    assert result.state is NetState.tooBig
    assert "ratio" in result.error
    # A normal page is far below the guard.
    server = await raw_server(raw_response(gzip.compress(PAGE), b"gzip"))
    assert (await make_fetcher(limits).fetch(server.url(host="h.test"))).state is NetState.OK


async def test_wire_bytes_are_capped_too(raw_server, make_fetcher):
    # A deflate stream that decodes to nothing (empty stored blocks, RFC 1951 §3.2.4) must
    # still end at the size limit.
    junk = b"\x00\x00\x00\xff\xff" * 20_000
    server = await raw_server(raw_response(junk, b"deflate", length=False))
    result = await make_fetcher(LIMITS).fetch(server.url(host="h.test"))
    assert result.state is NetState.tooBig
    assert result.wire_bytes > LIMITS.max_bytes


@pytest.mark.parametrize(
    ("encoding", "payload"),
    [(b"gzip", b"\x1f\x8b\x08\x00garbage-not-gzip"), (b"br", b"\xff\xff\xff\xff"), (b"zzz", b"a")],
)
async def test_corrupt_or_unknown_encoding_is_derr(raw_server, make_fetcher, encoding, payload):
    server = await raw_server(raw_response(payload, encoding))
    result = await make_fetcher(LIMITS).fetch(server.url(host="h.test"))
    assert result.state is NetState.dErr
    assert result.status == 200


async def test_chunked_body(raw_server, make_fetcher):
    async def chunked(reader, writer, release):
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n5\r\n<html\r\n1\r\n>\r\n0\r\n\r\n"
        )
        await writer.drain()

    server = await raw_server(chunked)
    result = await make_fetcher(LIMITS).fetch(server.url(host="h.test"))
    assert result.state is NetState.OK
    assert result.body == b"<html>"
    assert result.mime == "text/html"
    assert result.header("content-type") == "text/html; charset=utf-8"


async def test_http10_body_until_close(raw_server, make_fetcher):
    async def http10(reader, writer, release):
        writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html>old</html>")
        await writer.drain()

    server = await raw_server(http10)
    result = await make_fetcher(LIMITS).fetch(server.url(host="h.test"))
    assert result.state is NetState.OK
    assert result.body == b"<html>old</html>"
    assert result.raw_response_head.startswith(b"HTTP/1.0 200 OK\r\n")


class Sink:
    """A ``BodySink`` that keeps what it is given and stops after ``stop_after`` bytes."""

    def __init__(self, statuses=(200,), stop_after=None):
        self.statuses = statuses
        self.stop_after = stop_after
        self.got = bytearray()

    def wants(self, status):
        return status in self.statuses

    def feed(self, chunk):
        self.got += chunk
        return self.stop_after is not None and len(self.got) >= self.stop_after


@pytest.mark.parametrize(("encoding", "encode"), [(b"gzip", gzip.compress), (None, bytes)])
async def test_a_sink_takes_the_decoded_body_and_the_result_keeps_none(
    raw_server, make_fetcher, encoding, encode
):
    server = await raw_server(raw_response(encode(PAGE), encoding))
    sink = Sink()
    result = await make_fetcher(LIMITS).fetch_with(
        server.url(host="h.test"), None, LIMITS, sink=sink
    )
    assert result.state is NetState.OK
    assert bytes(sink.got) == PAGE
    assert result.body == b""
    assert result.wire_bytes == len(encode(PAGE))


async def test_a_sink_stops_the_download_and_reads_past_an_announced_length(
    web_server, make_fetcher
):
    async def big(request):
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        response.content_length = 100 * LIMITS.max_bytes  # announced: far over the limit
        await response.prepare(request)
        try:
            for _ in range(100 * LIMITS.max_bytes // 8192):
                await response.write(b"z" * 8192)
        except ConnectionError:
            pass
        return response

    app = web.Application()
    app.router.add_get("/", big)
    port = await web_server(app)
    sink = Sink(stop_after=3 * 8192)
    fetcher = make_fetcher(LIMITS)
    result = await fetcher.fetch_with(
        f"http://h.test:{port}/", None, LIMITS, keep_prefix=True, sink=sink
    )
    assert result.state is NetState.code  # the answer as it was: the sink chose to stop
    assert 3 * 8192 <= len(sink.got) <= LIMITS.max_bytes
    assert result.wire_bytes < 10 * LIMITS.max_bytes  # a read or two of the 6.5 MB sent


async def test_a_sink_does_not_take_an_answer_it_does_not_want(raw_server, make_fetcher):
    server = await raw_server(raw_response(PAGE))
    sink = Sink(statuses=(204,))
    result = await make_fetcher(LIMITS).fetch_with(
        server.url(host="h.test"), None, LIMITS, sink=sink
    )
    assert result.body == PAGE  # held as usual: a redirect, a 404 …
    assert not sink.got
