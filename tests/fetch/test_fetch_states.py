"""Every network state is reachable against real servers on 127.0.0.1, and classified right."""

import asyncio
import socket
import struct

import pytest
from aiohttp import web

from dustless.fetch import AddressPolicy, FetchLimits, NetState, Resolver

FAST = FetchLimits(stall_timeout=0.3, connect_timeout=0.3, total_timeout=5.0)


def reply(data):
    async def handler(reader, writer, release):
        writer.write(data)
        await writer.drain()

    return handler


def then_stall(data):
    async def handler(reader, writer, release):
        writer.write(data)
        await writer.drain()
        await release.wait()

    return handler


async def reset(reader, writer, release):
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def test_ok_is_200_text_html(web_server, make_fetcher):
    async def page(request):
        return web.Response(text="<html>hi</html>", content_type="text/html", charset="utf-8")

    app = web.Application()
    app.router.add_get("/", page)
    port = await web_server(app)
    result = await make_fetcher(FAST).fetch(f"http://www.site.test:{port}/")
    assert result.state is NetState.OK
    assert result.status == 200
    assert result.mime == "text/html"
    assert result.body == b"<html>hi</html>"
    assert result.ip == "127.0.0.1"
    assert result.error is None
    assert result.elapsed >= 0
    assert result.started > 1_600_000_000


@pytest.mark.parametrize(
    ("status", "content_type", "body"),
    [(404, "text/html", b"missing"), (200, "image/png", b"\x89PNG"), (500, "text/plain", b"")],
)
async def test_code_is_everything_else(web_server, make_fetcher, status, content_type, body):
    async def page(request):
        return web.Response(status=status, body=body, content_type=content_type)

    app = web.Application()
    app.router.add_get("/x", page)
    port = await web_server(app)
    result = await make_fetcher(FAST).fetch(f"http://h.test:{port}/x")
    assert result.state is NetState.code
    assert result.status == status
    assert result.mime == content_type
    assert result.body == body


async def test_redirects_are_returned_not_followed(web_server, make_fetcher):
    hits = []

    async def moved(request):
        hits.append(request.path)
        raise web.HTTPMovedPermanently(location="../b/c?d=1")

    app = web.Application()
    app.router.add_get("/a/x/y", moved)
    port = await web_server(app)
    result = await make_fetcher(FAST).fetch(f"http://h.test:{port}/a/x/y")
    assert result.state is NetState.code
    assert result.status == 301
    assert result.location == f"http://h.test:{port}/a/b/c?d=1"
    assert hits == ["/a/x/y"]


async def test_host_header_names_the_host_and_conditional_headers_pass(web_server, make_fetcher):
    seen = {}

    async def page(request):
        seen.update(request.headers)
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304)
        return web.Response(text="x", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p", page)
    port = await web_server(app)
    fetcher = make_fetcher(FAST)
    result = await fetcher.fetch(
        f"http://site.test:{port}/p",
        {"If-None-Match": '"v1"', "If-Modified-Since": "Sat, 01 Jan 2000 00:00:00 GMT"},
    )
    assert result.status == 304
    assert result.state is NetState.code
    assert seen["Host"] == f"site.test:{port}"
    assert seen["If-Modified-Since"] == "Sat, 01 Jan 2000 00:00:00 GMT"
    assert seen["User-Agent"].startswith("dustless/")
    assert "gzip" in seen["Accept-Encoding"]
    # The raw request kept for the WARC record is what was sent.
    raw = result.raw_request.decode()
    assert raw.startswith("GET /p HTTP/1.1\r\n")
    assert f"Host: site.test:{port}\r\n" in raw
    assert 'If-None-Match: "v1"\r\n' in raw
    assert raw.endswith("\r\n\r\n")
    head = result.raw_response_head.decode()
    assert head.startswith("HTTP/1.1 304 Not Modified\r\n")
    assert head.endswith("\r\n\r\n")


async def test_url_spelling_is_sent_exactly(raw_server, make_fetcher):
    server = await raw_server(reply(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
    path = "/a%7Eb/%E3%83%84?q=%2F&x=a+b"
    result = await make_fetcher(FAST).fetch(server.url(path, host="h.test"))
    assert result.status == 200
    assert server.requests[0].startswith(f"GET {path} HTTP/1.1\r\n".encode())


async def test_cerr_connection_refused(make_fetcher, refused_port):
    result = await make_fetcher(FAST).fetch(f"http://h.test:{refused_port}/")
    assert result.state is NetState.cErr
    assert result.status is None
    assert "refused" in result.error.lower() or "connect" in result.error.lower()


async def test_ctim_connect_timeout(make_fetcher, blackhole_port):
    result = await make_fetcher(FAST).fetch(f"http://h.test:{blackhole_port}/")
    assert result.state is NetState.cTim
    assert result.elapsed < 3


async def test_noip(make_fetcher):
    async def nothing(host):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    fetcher = make_fetcher(FAST, resolver=Resolver(lookup=nothing))
    result = await fetcher.fetch("http://no-such-host.example/")
    assert result.state is NetState.noIP
    assert "no-such-host.example" in result.error


async def test_filtered_private_address_is_never_contacted(raw_server, make_fetcher):
    server = await raw_server(reply(b"HTTP/1.1 200 OK\r\n\r\n"))
    fetcher = make_fetcher(FAST, resolver=Resolver())  # no --resolve: loopback is not vouched for
    for url in (server.url("/"), "http://169.254.169.254/latest/meta-data/", "http://[::1]/"):
        result = await fetcher.fetch(url)
        assert result.state is NetState.filtered, url
        assert "private" in result.error
    assert server.requests == []
    # A name resolving to a private address is refused as well (DNS rebinding, intranet names).

    async def to_loopback(host):
        return ["127.0.0.1"]

    sneaky = make_fetcher(FAST, resolver=Resolver(lookup=to_loopback))
    result = await sneaky.fetch(server.url("/", host="public.example"))
    assert result.state is NetState.filtered
    assert result.ip == "127.0.0.1"
    assert server.requests == []


async def test_filtered_by_deny_and_scheme(make_fetcher):
    fetcher = make_fetcher(FAST, policy=AddressPolicy(deny=["127.0.0.0/8"]))
    assert (await fetcher.fetch("http://a.test:1/")).state is NetState.filtered
    for url in ("ftp://a.test/", "mailto:x@y", "http:///nohost", "not a url"):
        assert (await fetcher.fetch(url)).state is NetState.filtered


async def test_hsht_nothing_before_close(raw_server, make_fetcher):
    server = await raw_server(reply(b""))
    result = await make_fetcher(FAST).fetch(server.url(host="h.test"))
    assert result.state is NetState.hSht


async def test_hsht_head_cut_short(raw_server, make_fetcher):
    server = await raw_server(reply(b"HTTP/1.1 200 OK\r\nContent-Ty"))
    result = await make_fetcher(FAST).fetch(server.url(host="h.test"))
    assert result.state is NetState.hSht


@pytest.mark.parametrize(
    "data", [b"SSH-2.0-OpenSSH_8.9\r\n", b"<html>no status line</html>\r\n\r\n"]
)
async def test_hnpr_not_http(raw_server, make_fetcher, data):
    server = await raw_server(reply(data))
    result = await make_fetcher(FAST).fetch(server.url(host="h.test"))
    assert result.state is NetState.hNpr


async def test_htim_no_header(raw_server, make_fetcher):
    server = await raw_server(then_stall(b""))
    result = await make_fetcher(FAST).fetch(server.url(host="h.test"))
    assert result.state is NetState.hTim
    assert result.elapsed < 3


@pytest.mark.parametrize(
    "data",
    [
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nBad Header Line\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX: " + b"a" * 100_000 + b"\r\n\r\n",
    ],
)
async def test_herr_malformed_head(raw_server, make_fetcher, data):
    server = await raw_server(reply(data))
    result = await make_fetcher(FAST).fetch(server.url(host="h.test"))
    assert result.state is NetState.hErr


async def test_herr_reset_before_head(raw_server, make_fetcher):
    server = await raw_server(reset)
    result = await make_fetcher(FAST).fetch(server.url(host="h.test"))
    assert result.state is NetState.hErr


async def test_dtim_body_stalls(raw_server, make_fetcher):
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000\r\n\r\n"
    server = await raw_server(then_stall(head + b"<html>partial"))
    result = await make_fetcher(FAST).fetch(server.url(host="h.test"))
    assert result.state is NetState.dTim
    assert result.status == 200
    assert result.body == b"<html>partial"
    assert result.truncated


async def test_derr_body_shorter_than_announced(raw_server, make_fetcher):
    server = await raw_server(reply(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"))
    result = await make_fetcher(FAST).fetch(server.url(host="h.test"))
    assert result.state is NetState.dErr
    assert result.status == 200


async def test_derr_reset_during_body(raw_server, make_fetcher):
    async def handler(reader, writer, release):
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 9999\r\n\r\nabc"
        )
        await writer.drain()
        await reset(reader, writer, release)

    server = await raw_server(handler)
    result = await make_fetcher(FAST).fetch(server.url(host="h.test"))
    assert result.state is NetState.dErr


async def test_total_timeout_on_a_trickling_body(raw_server, make_fetcher):
    async def trickle(reader, writer, release):
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n"
        )
        while not release.is_set():
            writer.write(b"x")
            await writer.drain()
            await asyncio.sleep(0.05)  # the server's behaviour, not a wait in the test

    server = await raw_server(trickle)
    limits = FetchLimits(stall_timeout=0.3, connect_timeout=0.3, total_timeout=0.6)
    result = await make_fetcher(limits).fetch(server.url(host="h.test"))
    assert result.state is NetState.dTim
    assert "0.6" in result.error
    assert 0 < len(result.body) < 100


async def test_total_timeout_on_a_trickling_head(raw_server, make_fetcher):
    async def trickle(reader, writer, release):
        writer.write(b"HTTP/1.1 200 OK\r\n")
        while not release.is_set():
            writer.write(b"X-A: b\r\n")
            await writer.drain()
            await asyncio.sleep(0.05)

    server = await raw_server(trickle)
    limits = FetchLimits(stall_timeout=0.3, connect_timeout=0.3, total_timeout=0.6)
    result = await make_fetcher(limits).fetch(server.url(host="h.test"))
    assert result.state is NetState.hTim


async def test_one_lookup_per_host_through_the_fetcher(web_server, make_fetcher):
    async def page(request):
        return web.Response(text="ok", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{n}", page)
    port = await web_server(app)
    calls = []

    async def lookup(host):
        calls.append(host)
        return ["127.0.0.1"]

    fetcher = make_fetcher(
        # What is counted here is DNS lookups, not timing: limits a loaded CI machine meets.
        FetchLimits(stall_timeout=10.0, connect_timeout=10.0, total_timeout=20.0),
        resolver=Resolver(lookup=lookup),
        policy=AddressPolicy(trusted_hosts=["*.example"]),
    )
    results = await asyncio.gather(
        *(fetcher.fetch(f"http://a.example:{port}/{n}") for n in range(6)),
        *(fetcher.fetch(f"http://b.example:{port}/{n}") for n in range(3)),
    )
    assert all(r.state is NetState.OK for r in results)
    assert sorted(calls) == ["a.example", "b.example"]


async def test_localhost_through_real_getaddrinfo(web_server, make_fetcher):
    async def page(request):
        return web.Response(text="ok", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    port = await web_server(app)
    resolver = Resolver()
    fetcher = make_fetcher(
        FAST, resolver=resolver, policy=AddressPolicy(trusted_hosts=["localhost"])
    )
    for _ in range(3):
        result = await fetcher.fetch(f"http://localhost:{port}/")
        assert result.state is NetState.OK
    assert resolver.lookups == 1


@pytest.mark.parametrize(
    "url",
    [
        "http://h.test:99999/",
        "http://[::1/",
        "http://h.test:abc/",
        "http://h.test:0/",
        "http://h.test:1/\r\nX-Injected: y",
        "http://.test/",
        "http://" + "a" * 300 + ".test/",
        "",
        "//h.test/",
    ],
)
async def test_bad_urls_never_raise(make_fetcher, url):
    result = await make_fetcher(FAST).fetch(url)
    assert result.state in (NetState.filtered, NetState.noIP, NetState.cErr)
    assert result.error


async def test_raw_request_is_what_the_server_received(raw_server, make_fetcher):
    # The WARC request record is built once, from the headers aiohttp reports it sent: it
    # must be the request on the wire, byte for byte, with and without the caller's headers.
    server = await raw_server(
        reply(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    )
    fetcher = make_fetcher(FAST)
    plain = await fetcher.fetch(server.url("/a%7Eb?q=1", host="h.test"))
    conditional = await fetcher.fetch(
        server.url("/c", host="h.test"), {"If-None-Match": '"v1"', "accept": "text/plain"}
    )
    assert plain.status == conditional.status == 200
    assert [plain.raw_request, conditional.raw_request] == server.requests
    assert b"text/html" not in conditional.raw_request  # ours replaced, not added


async def test_raw_request_without_a_response_is_what_was_sent(raw_server, make_fetcher):
    # No response head: the record comes from the parts handed to aiohttp (Progress.result).
    server = await raw_server(reset)
    result = await make_fetcher(FAST).fetch(server.url("/gone?x=1", host="h.test"))
    assert result.status is None
    assert [result.raw_request] == server.requests


async def test_raw_request_of_a_stalled_head_is_what_was_sent(raw_server, make_fetcher):
    async def stall(reader, writer, release):
        await release.wait()

    server = await raw_server(stall)
    result = await make_fetcher(FAST).fetch(server.url("/slow", host="h.test"))
    assert result.state is NetState.hTim
    assert [result.raw_request] == server.requests
