"""HTTP/1.1 on the wire, as the fetcher speaks it today (RFC 9112), against servers on 127.0.0.1.

A safety net for replacing the HTTP client: message framing (length, chunked, close), interim
responses, connection reuse, the request bytes, and what each fault costs. Where today's
behaviour departs from RFC 9112 the test says so beside the assertion; a new client that
fixes it changes that assertion on purpose, never by accident.

``serve`` below answers every request on a connection in turn and keeps the connection open
(the ``raw_server`` fixture alone answers once), so reuse is counted on the server: one
accepted connection is one entry of ``server.writers``.
"""

import asyncio
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from dustless.fetch import ACCEPT_ENCODING, DEFAULT_USER_AGENT, FetchLimits, HttpPool, NetState

FAST = FetchLimits(stall_timeout=0.5, connect_timeout=0.5, total_timeout=5.0)
SECOND = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 8\r\n\r\n<p>2</p>"


@dataclass(frozen=True)
class Answer:
    """What the server does with one request: write ``data``, then keep the connection open
    for the next request, close it (``close``), or reset it without writing (``reset``)."""

    data: bytes = b""
    close: bool = False
    reset: bool = False


RESET = Answer(reset=True)
HANG_UP = Answer(close=True)  # close (FIN) after reading the request, without a byte back


def in_turn(*answers: bytes | Answer) -> Callable[[bytes], bytes | Answer]:
    """Answer the requests with ``answers`` in the order they arrive, on any connection."""
    queue = list(answers)
    return lambda head: queue.pop(0)


async def serve(raw_server, answer):
    """A raw server answering each request with ``answer(request_head)``.

    Returns the server and its log of ``(connection number, request head)``: the connection
    number is the order the connection was accepted in, so reuse shows in the log."""
    log: list[tuple[int, bytes]] = []
    holder = {}

    async def handler(reader, writer, release):
        server = holder["server"]
        connection = server.writers.index(writer)
        head = server.requests[-1]  # read by the fixture just before it called us
        while True:
            log.append((connection, head))
            action = answer(head)
            if isinstance(action, bytes):
                action = Answer(action)
            if action.reset:
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
                return
            writer.write(action.data)
            await writer.drain()
            if action.close:
                return  # the fixture closes the connection
            head = await reader.readuntil(b"\r\n\r\n")
            server.requests.append(head)

    server = holder["server"] = await raw_server(handler)
    return server, log


def reply(*parts, pause=0.0):
    """A one-shot handler: write ``parts`` one write each, ``pause`` s apart, then close."""

    async def handler(reader, writer, release):
        for part in parts:
            writer.write(part)
            await writer.drain()
            if pause:
                await asyncio.sleep(pause)  # the server's pacing, not a wait in the test

    return handler


def target(head: bytes) -> bytes:
    """The request target of a request head: ``GET /x HTTP/1.1`` → ``/x``."""
    return head.split(b"\r\n", 1)[0].split(b" ")[1]


# 1. Close-delimited bodies (RFC 9112 §6.3 item 8) ------------------------------------------


@pytest.mark.parametrize("version", [b"HTTP/1.1", b"HTTP/1.0"])
async def test_a_body_without_length_or_chunking_ends_at_close(raw_server, make_fetcher, version):
    head = version + b" 200 OK\r\nContent-Type: text/html\r\n\r\n"
    server, log = await serve(
        raw_server,
        lambda got: Answer(SECOND if target(got) == b"/next" else head + b"<html>one", close=True),
    )
    fetcher = make_fetcher(FAST)
    result = await fetcher.fetch(server.url("/", host="h.test"))
    assert result.state is NetState.OK
    assert result.status == 200
    assert result.body == b"<html>one"
    assert result.wire_bytes == 9
    assert result.raw_response_head == head
    # That connection is gone: the next fetch opens another.
    after = await fetcher.fetch(server.url("/next", host="h.test"))
    assert after.body == b"<p>2</p>"
    assert [(n, target(h)) for n, h in log] == [(0, b"/"), (1, b"/next")]


async def test_a_close_delimited_body_in_many_writes_is_read_whole(raw_server, make_fetcher):
    pieces = [b"<html>", b"a" * 3000, b"b" * 70_000, b"</html>"]
    server = await raw_server(
        reply(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n", *pieces, pause=0.005)
    )
    result = await make_fetcher(FAST).fetch(server.url("/", host="h.test"))
    assert result.state is NetState.OK
    assert result.body == b"".join(pieces)
    assert result.wire_bytes == sum(map(len, pieces))
    assert result.header("Content-Length") is None


# 2. Chunked transfer coding (RFC 9112 §7.1) ---------------------------------------------------


async def test_chunked_with_extensions_and_trailers(raw_server, make_fetcher):
    answer = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"6;name=value\r\n<html>\r\n"
        b'4;a="b c";flag\r\nWiki\r\n'
        b"5 ;x=y\r\npedia\r\n"  # BWS before ";" (§7.1.1)
        b"00A\r\n in chunks\r\n"  # hex, upper case, leading zeros
        b"7\r\n</html>\r\n"
        b"0;last\r\nExpires: never\r\nX-Trailer: t\r\n\r\n"
    )
    server, log = await serve(raw_server, in_turn(answer, SECOND))
    fetcher = make_fetcher(FAST)
    result = await fetcher.fetch(server.url("/", host="h.test"))
    assert result.state is NetState.OK
    assert result.body == b"<html>Wikipedia in chunks</html>"
    assert result.wire_bytes == len(result.body)
    # Trailer fields are read and dropped: not among the headers, not in the head record.
    assert result.headers == (("Content-Type", "text/html"), ("Transfer-Encoding", "chunked"))
    assert result.raw_response_head == (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    # The trailer section was consumed to its end: the connection serves the next request.
    again = await fetcher.fetch(server.url("/2", host="h.test"))
    assert again.body == b"<p>2</p>"
    assert [(n, target(h)) for n, h in log] == [(0, b"/"), (0, b"/2")]


async def test_chunked_framing_split_across_writes(raw_server, make_fetcher):
    server = await raw_server(
        reply(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"1",
            b"0\r",
            b"\n0123456789abcdef",
            b"\r\n",
            b"0\r\n",
            b"\r\n",
            pause=0.005,
        )
    )
    result = await make_fetcher(FAST).fetch(server.url("/", host="h.test"))
    assert result.state is NetState.OK
    assert result.body == b"0123456789abcdef"


# 3. Interim responses (RFC 9110 §15.2) --------------------------------------------------------


@pytest.mark.parametrize(
    "parts",
    [
        [b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"],
        [
            b"HTTP/1.1 100 Continue\r\n\r\n",
            b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n"
            b"Link: </f.js>; rel=preload\r\n\r\n",
        ],
    ],
    ids=["103", "100-then-103"],
)
async def test_interim_responses_are_skipped_for_the_final_one(raw_server, make_fetcher, parts):
    final = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 6\r\n\r\n<html>"
    server, log = await serve(raw_server, in_turn(b"".join(parts) + final, SECOND))
    fetcher = make_fetcher(FAST)
    result = await fetcher.fetch(server.url("/", host="h.test"))
    assert result.state is NetState.OK
    assert result.status == 200
    assert result.body == b"<html>"
    assert result.header("Link") is None  # the interim fields are not the response's
    assert result.raw_response_head == final.removesuffix(b"<html>")
    again = await fetcher.fetch(server.url("/2", host="h.test"))
    assert again.body == b"<p>2</p>"
    assert [(n, target(h)) for n, h in log] == [(0, b"/"), (0, b"/2")]


async def test_interim_response_in_its_own_write(raw_server, make_fetcher):
    server = await raw_server(
        reply(
            b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 4\r\n\r\nbody",
            pause=0.02,
        )
    )
    result = await make_fetcher(FAST).fetch(server.url("/", host="h.test"))
    assert result.state is NetState.OK
    assert result.body == b"body"
    assert result.headers == (("Content-Type", "text/html"), ("Content-Length", "4"))


# 4. Bodiless answers on a kept-alive connection (RFC 9112 §6.3 item 1) ------------------------


@pytest.mark.parametrize(
    ("first", "status"),
    [
        (b"HTTP/1.1 204 No Content\r\n\r\n", 204),
        (b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", 204),
        # A 304's Content-Length is the length the 200 would have had (RFC 9110 §8.6):
        # no body follows, so waiting for 5 bytes would stall and eat the next answer.
        (b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\nContent-Length: 5\r\n\r\n', 304),
    ],
    ids=["204", "204-length-0", "304-length-5"],
)
async def test_bodiless_answer_then_the_next_fetch_on_the_same_connection(
    raw_server, make_fetcher, first, status
):
    server, log = await serve(raw_server, in_turn(first, SECOND))
    fetcher = make_fetcher(FAST)
    result = await fetcher.fetch(server.url("/a", host="h.test"), {"If-None-Match": '"v1"'})
    assert result.state is NetState.code
    assert result.status == status
    assert result.body == b""
    assert result.wire_bytes == 0
    assert result.raw_response_head == first
    nxt = await fetcher.fetch(server.url("/b", host="h.test"))
    assert nxt.state is NetState.OK
    assert nxt.body == b"<p>2</p>"
    assert [(n, target(h)) for n, h in log] == [(0, b"/a"), (0, b"/b")]


@pytest.mark.parametrize(
    "first",
    [
        b"HTTP/1.1 204 No Content\r\n\r\nHELLO",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHELLO",
    ],
    ids=["204-with-a-body", "longer-than-content-length"],
)
async def test_bytes_after_a_complete_response_are_never_a_response(
    raw_server, make_fetcher, first
):
    server, log = await serve(raw_server, in_turn(first, SECOND))
    fetcher = make_fetcher(FAST)
    result = await fetcher.fetch(server.url("/a", host="h.test"))
    # RFC 9112 §6.3: the complete response is kept and the surplus discarded (a client must
    # not take it as a separate response). aiohttp's client failed the fetch as hNpr.
    assert result.state is NetState.code
    assert result.status == int(first.split()[1])
    assert result.body == first.partition(b"\r\n\r\n")[2][: 2 if b"Length" in first else 0]
    # What matters either way: the surplus is not taken as the answer to the next request,
    # and the connection that carried it is not reused.
    nxt = await fetcher.fetch(server.url("/b", host="h.test"))
    assert nxt.state is NetState.OK
    assert nxt.body == b"<p>2</p>"
    assert [(n, target(h)) for n, h in log] == [(0, b"/a"), (1, b"/b")]


# 5. Keep-alive and Connection: close (RFC 9112 §9.3, §9.6) ------------------------------------


@pytest.mark.parametrize(
    ("first", "connections"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 1),
        (b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", 1),
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", 2),
        (b"HTTP/1.1 200 OK\r\nconnection: CLOSE\r\nContent-Length: 2\r\n\r\nok", 2),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 2),  # 1.0: close by default
    ],
    ids=["1.1", "1.0-keep-alive", "close", "close-odd-case", "1.0"],
)
async def test_connection_reuse(raw_server, make_fetcher, first, connections):
    # The server keeps every connection open (it only reads on): whether the second fetch
    # comes on the same one is the client's decision from the first response's head.
    server, log = await serve(raw_server, in_turn(first, SECOND))
    fetcher = make_fetcher(FAST)
    one = await fetcher.fetch(server.url("/1", host="h.test"))
    two = await fetcher.fetch(server.url("/2", host="h.test"))
    assert one.status == 200
    assert one.body == b"ok"
    assert two.body == b"<p>2</p>"
    assert len(server.writers) == connections
    assert [(n, target(h)) for n, h in log] == [(0, b"/1"), (connections - 1, b"/2")]
    # Each request went whole, and no Connection header is sent: HTTP/1.1 is persistent.
    assert [head for _, head in log] == [one.raw_request, two.raw_request]
    assert b"connection:" not in two.raw_request.lower()


async def test_three_sequential_fetches_ride_one_connection(raw_server, make_fetcher):
    server, log = await serve(
        raw_server,
        lambda head: (
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(target(head)), target(head))
        ),
    )
    fetcher = make_fetcher(FAST)
    bodies = [(await fetcher.fetch(server.url(f"/{n}", host="h.test"))).body for n in range(3)]
    assert bodies == [b"/0", b"/1", b"/2"]
    assert [n for n, _ in log] == [0, 0, 0]


# 6. A body cut short by the server closing -----------------------------------------------


@pytest.mark.parametrize(
    ("data", "partial"),
    [
        (b"Content-Length: 100\r\n\r\nabc", b"abc"),
        (b"Transfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n10\r\nxyz", b"abcdexyz"),
        (b"Transfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n", b"abcde"),  # no last-chunk
    ],
    ids=["content-length", "mid-chunk", "no-last-chunk"],
)
async def test_a_body_cut_short_by_close_is_derr_with_what_came(
    raw_server, make_fetcher, data, partial
):
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + data.split(b"\r\n\r\n")[0]
    server = await raw_server(reply(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + data))
    result = await make_fetcher(FAST).fetch(server.url("/", host="h.test"))
    assert result.state is NetState.dErr
    assert result.status == 200
    assert result.body == partial
    assert result.wire_bytes == len(partial)
    assert result.truncated
    assert result.raw_response_head == head + b"\r\n\r\n"
    assert result.error


# 7. A head in tiny pieces ---------------------------------------------------------------


async def test_a_head_sent_byte_by_byte(raw_server, make_fetcher):
    data = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Split: a b\r\n"
        b"Content-Length: 14\r\n\r\n<html>x</html>"
    )
    head, body = data.split(b"\r\n\r\n")
    head += b"\r\n\r\n"
    server = await raw_server(
        reply(*(head[i : i + 1] for i in range(len(head))), body[:6], body[6:], pause=0.001)
    )
    result = await make_fetcher(FAST).fetch(server.url("/", host="h.test"))
    assert result.state is NetState.OK
    assert result.body == b"<html>x</html>"
    assert result.raw_response_head == head
    assert result.headers == (
        ("Content-Type", "text/html"),
        ("X-Split", "a b"),
        ("Content-Length", "14"),
    )


# 8. Header fields as received (RFC 9110 §5) ---------------------------------------------


async def test_header_names_repeats_and_whitespace(raw_server, make_fetcher):
    server = await raw_server(
        reply(
            b"HTTP/1.1 200 OK\r\n"
            b"content-TYPE: text/html; charset=UTF-8\r\n"
            b"Set-Cookie: a=1; Path=/\r\n"
            b"X-Padded:   padded value   \r\n"
            b"set-cookie: b=2\r\n"
            b"X-Tight:v\r\n"
            b"X-Empty:\r\n"
            b"X-Tabs:\tt\t\r\n"
            b"Content-Length: 2\r\n\r\nok"
        )
    )
    result = await make_fetcher(FAST).fetch(server.url("/", host="h.test"))
    assert result.state is NetState.OK
    assert result.mime == "text/html"
    # Names keep their case, repeats and order stay; values lose leading and trailing
    # whitespace (OWS is not part of the field value, RFC 9110 §5.5).
    assert result.headers == (
        ("content-TYPE", "text/html; charset=UTF-8"),
        ("Set-Cookie", "a=1; Path=/"),
        ("X-Padded", "padded value"),
        ("set-cookie", "b=2"),
        ("X-Tight", "v"),
        ("X-Empty", ""),
        ("X-Tabs", "t"),
        ("Content-Length", "2"),
    )
    assert result.header("SET-COOKIE") == "a=1; Path=/"  # the first one
    # The head record is rebuilt from those fields as "Name: value", not the bytes received.
    assert result.raw_response_head == (
        b"HTTP/1.1 200 OK\r\n"
        b"content-TYPE: text/html; charset=UTF-8\r\n"
        b"Set-Cookie: a=1; Path=/\r\n"
        b"X-Padded: padded value\r\n"
        b"set-cookie: b=2\r\n"
        b"X-Tight: v\r\n"
        b"X-Empty: \r\n"
        b"X-Tabs: t\r\n"
        b"Content-Length: 2\r\n\r\n"
    )


@pytest.mark.parametrize(
    ("data", "field"),
    [
        # RFC 9112 §5.2: a user agent replaces obs-fold with SP.
        (b"HTTP/1.1 200 OK\r\nX-F: a\r\n b\r\nContent-Length: 2\r\n\r\nok", ("X-F", "a b")),
        # RFC 9112 §2.2: a recipient MAY take a bare LF as the line terminator.
        (b"HTTP/1.1 200 OK\nX-F: lf\nContent-Length: 2\n\nok", ("X-F", "lf")),
    ],
    ids=["obs-fold", "bare-lf"],
)
async def test_tolerated_head_forms(raw_server, make_fetcher, data, field):
    server = await raw_server(reply(data))
    result = await make_fetcher(FAST).fetch(server.url("/", host="h.test"))
    assert result.status == 200
    assert result.body == b"ok"
    assert result.headers == (field, ("Content-Length", "2"))
    assert result.raw_response_head == (
        b"HTTP/1.1 200 OK\r\n%s: %s\r\nContent-Length: 2\r\n\r\n"
        % (field[0].encode(), field[1].encode())
    )


# 9. The request on the wire (RFC 9112 §3) -------------------------------------------------

ACCEPT = b"text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"


def request(target: bytes, host: bytes, *extra: bytes, accept: bytes = b"Accept: " + ACCEPT):
    lines = [
        b"GET " + target + b" HTTP/1.1",
        b"Host: " + host,
        b"User-Agent: " + DEFAULT_USER_AGENT.encode(),
        accept,
        b"Accept-Encoding: " + ACCEPT_ENCODING.encode(),
        *extra,
    ]
    return b"\r\n".join(lines) + b"\r\n\r\n"


@pytest.mark.parametrize(
    ("path", "sent"),
    [
        ("/p%20a?q=%E2%82%AC", b"/p%20a?q=%E2%82%AC"),
        ("/p a?q=€", b"/p%20a?q=%E2%82%AC"),  # not yet encoded: quoted to the same
        ("/p#frag", b"/p"),  # the fragment is never sent
        ("/%7e/%2F/../x?a=%20&b=+", b"/%7e/%2F/../x?a=%20&b=+"),  # as spelt, not normalized
        ("/;a=b?c", b"/;a=b?c"),
        # An empty query keeps its "?": RFC 3986 §6.2.3 keeps an empty component's
        # delimiter, and "/p?" need not be "/p" to the server (aiohttp's client sent "/p").
        ("/p?", b"/p?"),
        ("/p?#f", b"/p?"),
    ],
)
async def test_the_request_bytes(raw_server, make_fetcher, path, sent):
    server = await raw_server(
        reply(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    )
    result = await make_fetcher(FAST).fetch(server.url(path, host="h.test"))
    assert result.status == 200
    expected = request(sent, b"h.test:%d" % server.port)
    assert server.requests == [expected]
    assert result.raw_request == expected


@pytest.mark.parametrize(
    ("url", "sent", "host"),
    [
        ("http://h.test:{port}", b"/", b"h.test:{port}"),
        ("http://h.test:{port}?x=1", b"/?x=1", b"h.test:{port}"),
        ("http://Mixed.Test:{port}/", b"/", b"Mixed.Test:{port}"),  # host spelt as given
    ],
)
async def test_the_request_line_and_host_of_bare_urls(raw_server, make_fetcher, url, sent, host):
    server = await raw_server(
        reply(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    )
    result = await make_fetcher(FAST).fetch(url.format(port=server.port))
    assert result.status == 200
    assert server.requests == [request(sent, host.replace(b"{port}", b"%d" % server.port))]


async def test_callers_headers_replace_ours_in_place_and_add_after(raw_server, make_fetcher):
    server = await raw_server(reply(b"HTTP/1.1 304 Not Modified\r\nConnection: close\r\n\r\n"))
    result = await make_fetcher(FAST).fetch(
        server.url("/c", host="h.test"),
        {"accept": "text/plain", "If-None-Match": '"v1"'},
    )
    assert result.status == 304
    expected = request(
        b"/c",
        b"h.test:%d" % server.port,
        b'If-None-Match: "v1"',
        accept=b"accept: text/plain",
    )
    assert server.requests == [expected]
    assert result.raw_request == expected


# 10. Many fetches at once to several hosts on one server ------------------------------------


def host_of(head: bytes) -> bytes:
    """The host name of a request head's Host field, without the port."""
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.lower() == b"host":
            return value.strip().rsplit(b":", 1)[0]
    raise AssertionError(f"no Host field in {head!r}")


async def test_fifty_concurrent_fetches_to_five_hosts(raw_server, make_fetcher):
    def echo(head):
        body = host_of(head) + b" " + target(head)
        return b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s" % (
            len(body),
            body,
        )

    server, log = await serve(raw_server, echo)
    fetcher = make_fetcher(FetchLimits(stall_timeout=2.0, connect_timeout=2.0, total_timeout=10))
    urls = [(f"h{n % 5}.test", f"/page/{n}") for n in range(50)]
    results = await asyncio.gather(*(fetcher.fetch(server.url(p, host=h)) for h, p in urls))
    assert [r.state for r in results] == [NetState.OK] * 50
    assert [r.body for r in results] == [f"{h} {p}".encode() for h, p in urls]
    assert sorted(target(head) for _, head in log) == sorted(p.encode() for _, p in urls)
    # A connection belongs to one host name, though all five share one address and port.
    hosts = {}
    for connection, head in log:
        hosts.setdefault(connection, set()).add(host_of(head))
    assert all(len(names) == 1 for names in hosts.values()), hosts


# 11. Status lines ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status_line", "recorded"),
    [
        # RFC 9112 §4 has a server send the SP before an absent reason phrase; without it
        # the line is still taken. The record drops the SP of an empty phrase.
        (b"HTTP/1.1 200", b"HTTP/1.1 200"),
        (b"HTTP/1.1 200 ", b"HTTP/1.1 200"),
        (b"HTTP/1.1 200 Very  Fine ", b"HTTP/1.1 200 Very  Fine "),  # kept as sent
    ],
    ids=["no-reason", "empty-reason", "odd-reason"],
)
async def test_status_line_without_or_with_an_odd_reason(
    raw_server, make_fetcher, status_line, recorded
):
    rest = b"\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\n"
    server = await raw_server(reply(status_line + rest + b"ok"))
    result = await make_fetcher(FAST).fetch(server.url("/", host="h.test"))
    assert result.state is NetState.OK
    assert result.status == 200
    assert result.body == b"ok"
    assert result.raw_response_head == recorded + rest


# 12. A request on a reused connection that the server closed before answering is sent again,
# once, on a new connection (RFC 9112 §9.3.1): the server's keep-alive timeout met our
# politeness rest, and the request never reached its application. Recording it lost the page
# (the host backed off, the URL was never asked again). A new connection's failure, and a
# reused one's after the answer began, are the server's: recorded, not retried.


@pytest.mark.parametrize("second", [RESET, HANG_UP], ids=["rst", "fin"])
async def test_a_reused_connection_closed_before_answering_is_retried_on_a_new_one(
    raw_server, make_fetcher, second
):
    server, log = await serve(raw_server, in_turn(SECOND, second, SECOND))
    fetcher = make_fetcher(FAST)
    first = await fetcher.fetch(server.url("/1", host="h.test"))
    assert first.state is NetState.OK
    again = await fetcher.fetch(server.url("/2", host="h.test"))
    assert again.state is NetState.OK
    assert again.body == b"<p>2</p>"
    assert again.raw_request == log[2][1]
    # /2 went on the kept-alive connection, got nothing back, and went again on a new one.
    assert [(n, target(h)) for n, h in log] == [(0, b"/1"), (0, b"/2"), (1, b"/2")]


@pytest.mark.parametrize(
    ("answer", "state"), [(RESET, NetState.hErr), (HANG_UP, NetState.hSht)], ids=["rst", "fin"]
)
async def test_a_new_connection_failing_is_recorded_not_retried(
    raw_server, make_fetcher, answer, state
):
    server, log = await serve(raw_server, in_turn(answer, SECOND))
    failed = await make_fetcher(FAST).fetch(server.url("/1", host="h.test"))
    assert failed.state is state
    assert failed.status is None
    assert [(n, target(h)) for n, h in log] == [(0, b"/1")]
    assert len(server.writers) == 1


async def test_a_reused_connection_closed_mid_head_is_not_retried(raw_server, make_fetcher):
    # A byte of answer came: the request reached the server's application.
    cut = Answer(b"HTTP/1.1 200 OK\r\nContent-", close=True)
    server, log = await serve(raw_server, in_turn(SECOND, cut, SECOND))
    fetcher = make_fetcher(FAST)
    assert (await fetcher.fetch(server.url("/1", host="h.test"))).state is NetState.OK
    failed = await fetcher.fetch(server.url("/2", host="h.test"))
    assert failed.state is NetState.hSht
    assert [(n, target(h)) for n, h in log] == [(0, b"/1"), (0, b"/2")]


def _kept(timeout: bytes | None) -> bytes:
    field = b"Keep-Alive: " + timeout + b"\r\n" if timeout is not None else b""
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
        + field
        + b"Content-Length: 8\r\n\r\n<p>2</p>"
    )


@pytest.mark.parametrize(
    ("keep_alive", "idle", "reused"),
    [
        (None, 3.5, True),  # the server said nothing: kept 4 s, under Apache's and lighttpd's 5
        (None, 4.5, False),
        (b"timeout=10, max=100", 8.5, True),  # Apache's header: kept a second less than said
        (b"timeout=10, max=100", 9.5, False),
        (b"timeout=1, max=100", 0.0, False),  # kept no time at all: a second is the margin
        (b"timeout=600", 40.0, False),  # at most 30 s, whatever is said
        (b"timeout=bogus", 3.5, True),  # an unreadable header is no header
    ],
)
async def test_an_idle_connection_is_kept_less_than_the_server_keeps_it(
    raw_server, make_fetcher, keep_alive, idle, reused
):
    now = [100.0]
    pool = HttpPool(clock=lambda: now[0])
    server, log = await serve(raw_server, lambda head: _kept(keep_alive))
    fetcher = make_fetcher(FAST, pool=pool)
    try:
        assert (await fetcher.fetch(server.url("/1", host="h.test"))).state is NetState.OK
        now[0] += idle
        assert (await fetcher.fetch(server.url("/2", host="h.test"))).state is NetState.OK
    finally:
        await pool.close()
    assert [n for n, _ in log] == ([0, 0] if reused else [0, 1])


async def test_a_validator_with_a_line_break_cannot_split_the_request(raw_server, make_fetcher):
    # If-None-Match carries a value a server gave: it stays one header line.
    server = await raw_server(reply(b"HTTP/1.1 304 Not Modified\r\nConnection: close\r\n\r\n"))
    result = await make_fetcher(FAST).fetch(
        server.url("/v", host="h.test"), {"If-None-Match": '"a"\r\nX-Injected: 1'}
    )
    assert result.status == 304
    [head] = server.requests
    assert b"\r\nX-Injected" not in head
    assert b'If-None-Match: "a"  X-Injected: 1\r\n' in head
