"""A WACZ of a crawl opens in ReplayWeb.page (npm ``replaywebpage``, the Makefile's pinned
version) in Debian's headless Chromium, and its pages replay from the archive alone.

The app and the WACZ are served from one loopback server (a service worker needs http, and
the WACZ is read by Range requests); the browser cannot resolve the test web's host names,
so a replayed page's text can only come from the WACZ."""

from __future__ import annotations

import asyncio
import re
import struct
import zipfile
from html.parser import HTMLParser
from urllib.parse import quote

import pytest

from crawl.conftest import crawl
from dustless.export import check_wacz, export_wacz
from dustless.store import SQLiteStore
from export.archive_support import Tab, get, headless_chromium, replaywebpage, static_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def crawled(tmp_path_factory, _testweb_pool):
    from testweb_fixture import start_testweb

    key = ("profile", "sitemaps")  # test_wacz_replay's test web, when it started one
    web = _testweb_pool.get(key)
    if web is None or web.process is None or web.process.poll() is not None:
        web = start_testweb(tmp_path_factory.mktemp("web"), profile="sitemaps")
        _testweb_pool[key] = web
    out = tmp_path_factory.mktemp("crawl") / "c"
    result = crawl(web, out, seeds=(web.base_url("sitemaps.test") + "/",))
    assert result.finished
    return web, out


class _Text(HTMLParser):
    """The words of a page's <h1> and <p> elements, as a browser lays them out."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[str] = []
        self._in = False

    def handle_starttag(self, tag, attrs) -> None:
        if tag in ("h1", "p"):
            self._in = True
            self.blocks.append("")

    def handle_endtag(self, tag) -> None:
        if tag in ("h1", "p"):
            self._in = False

    def handle_data(self, data) -> None:
        if self._in:
            self.blocks[-1] += data


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _served_blocks(web, url: str) -> list[str]:
    path = url.split(str(web.port), 1)[1]
    host = url.split("//", 1)[1].split("/", 1)[0]
    status, _headers, body = get(web.address, web.port, path, {"Host": host})
    assert status == 200
    parser = _Text()
    parser.feed(body.decode("utf-8"))
    blocks = [_words(b) for b in parser.blocks if b.strip()]
    assert len(blocks) >= 2  # a heading and a paragraph of the test web's words
    return blocks


@pytest.mark.parametrize("block", [None, 4], ids=["index.cdx", "index.cdx.gz+idx"])
def test_wacz_replays_in_replaywebpage_in_headless_chromium(crawled, tmp_path, block) -> None:
    web, out = crawled
    app = replaywebpage()
    wacz = tmp_path / "crawl.wacz"
    export_wacz(out, wacz, **({} if block is None else {"index_block_lines": block}))
    assert check_wacz(wacz) == []
    with zipfile.ZipFile(wacz) as z:
        assert ("indexes/index.cdx" in z.namelist()) == (block is None)
    with SQLiteStore(out) as store:
        pages = [
            r.url
            for r in store.iter_fetches()
            if r.status == 200 and r.mime == "text/html" and r.revisit_of is None and r.warc
        ][:3]
    assert len(pages) == 3
    expected = {url: _served_blocks(web, url) for url in pages}

    async def replay() -> dict[str, str]:
        shown: dict[str, str] = {}
        async with (
            static_server(app, {"crawl.wacz": wacz}) as base,
            headless_chromium(tmp_path / "profile") as cdp,
        ):
            tab = await Tab.open(cdp)
            source = quote(f"{base}/crawl.wacz", safe=":/")
            for i, url in enumerate(pages):
                await tab.navigate("about:blank")
                await tab.navigate(f"{base}/index.html?source={source}#view=replay&url={url}")

                async def replayed(url: str = url) -> str | None:
                    for frame in await tab.frames():
                        # the service worker's replay of the capture: /w/<id>/mp_/<url>
                        src = frame["src"] or ""
                        if src.startswith(f"{base}/w/") and src.endswith(f"mp_/{url}"):
                            text = frame["text"] or ""
                            if all(b in _words(text) for b in expected[url]):
                                return text
                    return None

                shown[url] = await tab.until(replayed, f"{url} replayed from the WACZ")
                if i == 0:
                    png = await tab.screenshot(tmp_path / "replaywebpage.png")
                    assert png.read_bytes().startswith(b"\x89PNG")
        return shown

    shown = asyncio.run(asyncio.wait_for(replay(), 240))
    assert set(shown) == set(pages)


@pytest.mark.parametrize("block", [None, 4], ids=["index.cdx", "index.cdx.gz+idx"])
def test_every_members_local_header_has_the_central_directorys_extra_length(
    crawled, tmp_path, block
) -> None:
    # ReplayWeb.page (wabac.js) reads a member's data at its local header + 30 + name + the
    # central directory's extra length: a local ZIP64 field the central entry lacks (as a
    # forced ZIP64 header of a small member is) shifts every read by 20 bytes.
    _web, out = crawled
    wacz = tmp_path / "crawl.wacz"
    export_wacz(out, wacz, **({} if block is None else {"index_block_lines": block}))
    data = wacz.read_bytes()
    with zipfile.ZipFile(wacz) as z:
        for info in z.infolist():
            header = data[info.header_offset : info.header_offset + 30]
            assert header[:4] == b"PK\x03\x04"
            name_len, extra_len = struct.unpack("<HH", header[26:30])
            assert (info.filename, extra_len) == (info.filename, len(info.extra))
            start = info.header_offset + 30 + name_len + len(info.extra)
            assert data[start : start + info.file_size] == z.read(info)
