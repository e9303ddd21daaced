"""Raw bytes in a ``Location`` header are kept, percent-encoded, as browsers keep them.

A server on 127.0.0.1 writes the response head byte for byte: ``/caf\\xe9/\\xff\\xfe?x=\\xc7\\xd1``
(Latin-1, bytes that are no UTF-8, EUC-KR) must become ``/caf%E9/%FF%FE?x=%C7%D1``, not
``/caf/?x=`` (what the fetcher recorded while it let yarl decode the header as text).
"""

import pytest

from dustless.fetch import NetState

RAW_LOCATION = b"/caf\xe9/\xff\xfe?x=\xc7\xd1"


def redirect_to(location: bytes, status: bytes = b"302 Found"):
    async def handler(reader, writer, release):
        writer.write(
            b"HTTP/1.1 " + status + b"\r\nLocation: " + location + b"\r\n"
            b"Content-Length: 0\r\nConnection: close\r\n\r\n"
        )
        await writer.drain()

    return handler


@pytest.mark.parametrize(
    ("location", "expected_path"),
    [
        (RAW_LOCATION, "/caf%E9/%FF%FE?x=%C7%D1"),  # bytes that are not UTF-8, kept
        (b"caf\xe9.html", "/dir/caf%E9.html"),  # relative, resolved against the URL
        ("/카페/?q=한국".encode(), "/%EC%B9%B4%ED%8E%98/?q=%ED%95%9C%EA%B5%AD"),  # UTF-8
        (b"/a b\tc/%7e?q=1 2#f\xe9", "/a%20bc/~?q=1%202#f%E9"),  # as a browser parses it
    ],
)
async def test_raw_bytes_in_location_are_percent_encoded(
    raw_server, make_fetcher, location, expected_path
):
    server = await raw_server(redirect_to(location))
    result = await make_fetcher().fetch(server.url("/dir/page", host="h.test"))
    assert result.state is NetState.code
    assert result.status == 302
    assert result.location == f"http://h.test:{server.port}{expected_path}"
    # the response record keeps the bytes the server sent
    assert b"Location: " + location + b"\r\n" in result.raw_response_head


async def test_an_absolute_location_with_raw_bytes(raw_server, make_fetcher):
    server = await raw_server(redirect_to(b"http://other.test/\xb0\xa1?\xff", b"301 Moved"))
    result = await make_fetcher().fetch(server.url("/", host="h.test"))
    assert result.location == "http://other.test/%B0%A1?%FF"


async def test_robots_txt_redirects_follow_the_same_bytes(raw_server, make_fetcher):
    hops = []

    async def handler(reader, writer, release):
        hops.append(len(hops))
        if len(hops) == 1:
            writer.write(
                b"HTTP/1.1 301 Moved\r\nLocation: /r\xe9bots.txt\r\nContent-Length: 0\r\n"
                b"Connection: close\r\n\r\n"
            )
        else:
            body = b"User-agent: *\nDisallow: /x\n"
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\nConnection: close\r\n\r\n"
                + body
            )
        await writer.drain()

    server = await raw_server(handler)
    got = await make_fetcher().fetch_robots(server.url("/robots.txt", host="h.test"))
    assert got.results[0].location == f"http://h.test:{server.port}/r%E9bots.txt"
    assert server.requests[1].startswith(b"GET /r%E9bots.txt HTTP/1.1")


async def test_the_hostile_web_raw_location_leads_to_its_page(testweb_factory, make_fetcher):
    # The hostile profile's redirect to raw non-ASCII bytes: followed as a browser would,
    # the target is a page of the site (dropping the bytes would give its soft 404).
    from dustless.testweb._hostile import RAW_LOCATION_TARGET

    web = testweb_factory(profile="hostile", sites=2, pages_per_site=12)
    host = next(iter(web.sites.values()))["hosts"][0]
    fetcher = make_fetcher()
    moved = await fetcher.fetch(web.url(host, "/r/raw-location"))
    assert moved.status == 302
    assert "Location: /caf\u00e9/".encode() in moved.raw_response_head  # raw UTF-8 bytes
    query = "?x=%ED%95%9C%EA%B5%AD"
    assert moved.location == web.url(host, RAW_LOCATION_TARGET) + query
    target = await fetcher.fetch(moved.location)
    assert target.state is NetState.OK
    assert b"Sorry" not in target.body  # a page of its own, not the soft 404
    rids = {row.url: row.rid for row in web.truth()}
    assert rids[web.url(host, RAW_LOCATION_TARGET)].endswith(":" + RAW_LOCATION_TARGET)
