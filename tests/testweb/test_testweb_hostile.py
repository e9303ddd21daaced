"""Traps and misbehaviour of ``hostile`` sites, from a real client on 127.0.0.1."""

import asyncio
import time
import zlib

import aiohttp
import pytest

from testweb_fixture import LoopbackClient


@pytest.fixture
def web(testweb_factory):
    # 7 hostile sites: one per robots.txt variant
    return testweb_factory(profile="hostile", sites=7, pages_per_site=12)


def hostile_host(web, robots="rules"):
    return next(i["hosts"][0] for i in web.sites.values() if i["robots"] == robots)


async def get(url, **kw):
    async with LoopbackClient(decompress=kw.pop("decompress", True)) as client:
        return await client.get(url, **kw)


async def raw_request(web, host, path):
    reader, writer = await asyncio.open_connection("127.0.0.1", web.port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    return reader, writer


async def read_head(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if line)
    return lines[0], {k.lower(): v for k, v in headers.items()}


async def read_to_end(reader, into):
    while chunk := await reader.read(65536):
        into += chunk
    # a clean EOF instead of an RST: no reset happened, and pytest.raises fails


async def test_infinite_calendar_and_deeper_paths_are_counted_traps(web):
    host = hostile_host(web)
    base = web.base_url(host)
    months = ["2026/11/", "2026/12/", "2027/01/", "9999/12/"]
    pages = [await get(base + "/calendar/" + m) for m in months]
    assert all(p.status == 200 for p in pages)
    assert len({p.body for p in pages}) == 4
    assert b'href="../../2027/01/"' in pages[1].body  # December links to next January
    assert b'href="../../10000/01/"' in pages[3].body  # and on, past any real year
    deep = [await get(base + "/deep/" + "a/" * k) for k in (1, 2, 3, 30)]
    assert all(d.status == 200 and b'href="a/"' in d.body for d in deep)
    stats = web.stats()
    assert stats["trap_hits"] == 8
    rids = {r.rid for r in web.truth()}
    assert f"trap:{host.split('.')[0]}:/deep/" + "a/" * 30 in rids


async def test_soft_404_answers_200_with_one_body(web):
    base = web.base_url(hostile_host(web))
    a = await get(base + "/no/such/page.html")
    b = await get(base + "/gone/old-page.html")
    assert a.status == b.status == 200
    assert a.body == b.body
    assert b"does not exist" in a.body
    truth = {r.url: r.rid for r in web.truth()}
    assert truth[base + "/no/such/page.html"].startswith("soft404:")


async def test_redirect_chain_loop_and_relative_location(web):
    base = web.base_url(hostile_host(web))
    url, hops = base + "/r/chain/5", 0
    while True:
        got = await get(url)
        if got.status not in (301, 302):
            break
        url, hops = got.headers["Location"], hops + 1
    assert hops == 6
    assert url == base + "/landing.html"
    assert got.status == 200
    a = await get(base + "/r/loop/a")
    b = await get(a.headers["Location"])
    assert b.headers["Location"] == base + "/r/loop/a"
    rel = await get(base + "/r/relative")
    assert rel.headers["Location"] == "../landing.html"


async def test_robots_variants(web, testweb_factory):
    got = {}
    for info in web.sites.values():
        got[info["robots"]] = await get(web.url(info["hosts"][0], "/robots.txt"))
    assert set(got) == {"rules", "crawl-delay", "404", "5xx", "redirect", "huge", "garbage"}
    rules = got["rules"].body.decode()
    assert "Allow: /private/open*.html" in rules
    assert "Disallow: /*.pdf$" in rules
    for text in (rules, got["crawl-delay"].body.decode()):
        delay = float(text.split("Crawl-delay: ")[1].split()[0])
        assert 0 < delay <= 2
    assert got["404"].status == 404
    assert got["5xx"].status == 503
    assert got["redirect"].status == 301
    moved = await get(got["redirect"].headers["Location"])
    assert moved.status == 200
    assert b"Disallow: /private/" in moved.body
    assert len(got["huge"].body) > 500 * 1024  # RFC 9309 §2.5
    with pytest.raises(UnicodeDecodeError):
        got["garbage"].body.decode()
    # crawl-delay only on hostile hosts
    dirty = testweb_factory(profile="dirty", sites=7, pages_per_site=16)
    for info in dirty.sites.values():
        robots = await get(dirty.url(info["hosts"][0], "/robots.txt"))
        assert robots.status == 200
        assert b"Crawl-delay" not in robots.body


async def test_slow_first_byte_and_stalled_body(web):
    host = hostile_host(web)
    start = time.monotonic()
    slow = await get(web.url(host, "/slow/first-byte.html?delay=0.3"))
    assert slow.status == 200
    assert time.monotonic() - start >= 0.3
    reader, writer = await raw_request(web, host, "/slow/stall.html?delay=0.6")
    try:
        status, headers = await read_head(reader)
        length = int(headers["content-length"])
        first = await reader.readexactly(length // 2)
        with pytest.raises(TimeoutError):  # nothing more for a while: the body stalls
            await asyncio.wait_for(reader.readexactly(1), 0.2)
        rest = await asyncio.wait_for(reader.read(), 5)
        assert len(first) + 1 + len(rest) >= length - 1
    finally:
        writer.close()
        await writer.wait_closed()
    assert status.endswith("200 OK")


async def test_connection_resets(web):
    host = hostile_host(web)
    reader, writer = await raw_request(web, host, "/reset/before.html")
    try:
        with pytest.raises((ConnectionResetError, asyncio.IncompleteReadError)):
            await reader.readuntil(b"\r\n\r\n")
    finally:
        writer.close()
        with pytest.raises(ConnectionResetError):
            await writer.wait_closed()
    reader, writer = await raw_request(web, host, "/reset/mid.html")
    try:
        _, headers = await read_head(reader)
        body = bytearray()
        with pytest.raises(ConnectionResetError):
            await read_to_end(reader, body)
        assert len(body) < int(headers["content-length"])
    finally:
        writer.close()
        with pytest.raises(ConnectionResetError):
            await writer.wait_closed()
    with pytest.raises(aiohttp.ClientError):
        await get(web.url(host, "/reset/before.html"))


async def test_oversized_chunked_and_compression_bomb(web):
    host = hostile_host(web)
    huge = await get(web.url(host, "/big/huge.html"))
    assert int(huge.headers["Content-Length"]) == len(huge.body) > 2 * 1024 * 1024
    chunked = await get(web.url(host, "/big/chunked.html"))
    assert "Content-Length" not in chunked.headers
    assert chunked.headers["Transfer-Encoding"] == "chunked"
    assert len(chunked.body) > 2 * 1024 * 1024
    bomb = await get(web.url(host, "/bomb.html"), decompress=False)
    assert bomb.headers["Content-Encoding"] == "gzip"
    assert len(bomb.body) < 200 * 1024
    inflated = zlib.decompressobj(31).decompress(bomb.body, 20 * 1024 * 1024)
    assert len(inflated) == 20 * 1024 * 1024  # ratio > 100: a fetcher must stop early


async def test_wrong_and_missing_types_broken_html_bad_encodings(web):
    host = hostile_host(web)

    async def fetch(path):
        return await get(web.url(host, path))

    pdf, as_html, untyped, plain, broken, euc, meta, bad = [
        await fetch(p)
        for p in (
            "/files/report.pdf",
            "/types/pdf-as-html.html",
            "/types/no-type.html",
            "/types/html-as-plain.txt",
            "/broken.html",
            "/enc/euc-kr-labelled-utf8.html",
            "/enc/meta-euc-kr.html",
            "/enc/invalid-utf8.html",
        )
    ]
    assert pdf.headers["Content-Type"] == "application/pdf"
    assert as_html.headers["Content-Type"].startswith("text/html")
    assert as_html.body.startswith(b"%PDF")
    assert "Content-Type" not in untyped.headers
    assert plain.headers["Content-Type"] == "text/plain"
    assert b"<a href" in plain.body
    assert broken.status == 200
    assert b"<a href=/landing.html>" in broken.body
    assert "utf-8" in euc.headers["Content-Type"]
    with pytest.raises(UnicodeDecodeError):
        euc.body.decode("utf-8")
    assert "안녕하세요" in euc.body.decode("euc-kr", errors="replace")
    assert "charset" not in meta.headers["Content-Type"]
    assert b'charset="euc-kr"' in meta.body
    with pytest.raises(UnicodeDecodeError):
        bad.body.decode("utf-8")
