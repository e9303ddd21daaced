"""Links in pages that are not UTF-8 resolve as in a browser: headless Chromium is the oracle.

A page in each encoding is served on 127.0.0.1 with links whose queries hold characters of
many scripts (each written as a character reference, so that the same links can be written in
every encoding); ``extract_links`` must give, for every link, the URL Chromium gives for
``a.href`` (WHATWG URL "encoding-parse": the query in the page's encoding, the path and the
fragment in UTF-8, unrepresentable characters as ``%26%23NNNN%3B``), in the rfc3986 form.
"""

from __future__ import annotations

import pytest
from aiohttp import web

import support
from dustless.extract import extract_links
from dustless.url import normalize
from dustless.url._parse import BAD_ESCAPE_RE

pytestmark = pytest.mark.slow

# Every 53rd code point up to U+FFFF (1,200 characters of every block), and ones that the
# encoders treat specially: C1 controls in windows-1252, yen and overline, minus and fullwidth
# hyphen, halfwidth katakana, IBM/NEC duplicates in Shift_JIS, GB18030-2022's moved characters,
# Big5's differences from Python's table, characters outside the BMP.
SPECIAL = [
    *(0x81, 0x8D, 0xA2, 0xA5, 0xAF, 0xE9, 0xFC, 0x20AC, 0x203E, 0x2212, 0x2027, 0x2022),
    *(0xFF0D, 0xFF02, 0xFF5E, 0xFF61, 0xFF71, 0xFF9E, 0x301C, 0x2460, 0x2160, 0x2252),
    *(0x1E3F, 0x9FB4, 0xFE10, 0xFE19, 0xE7C7, 0x256D, 0x5605, 0x4EDD, 0x3000, 0x03A9),
    *(0xD55C, 0xAD6D, 0x65E5, 0x672C, 0x4E2D, 0x6587, 0x1F600, 0x20000, 0x241C, 0xE5E5),
]
CODE_POINTS = sorted(
    set(SPECIAL) | {c for c in range(0x80, 0x10000, 53) if not 0xD800 <= c < 0xE000}
)
PLAIN_LINKS = [
    "/search?q=한국",  # a query in the page's encoding
    "/한국/?q=한국#한국",  # path and fragment in UTF-8
    "http://other.test/p?q=café&x=1",
    "?q=a b'&quot;<>&#x2603;",
    "//other.test/?q=日本語",
]
ENCODINGS = [
    "euc-kr",
    "shift_jis",
    "gb18030",
    "gbk",
    "windows-1252",
    "iso-8859-1",
    "euc-jp",
    "big5",
    "iso-2022-jp",
]


def page(encoding: str, declare_in_meta: bool = False) -> bytes:
    hrefs = [*PLAIN_LINKS, *(f"?q=&#{c};" for c in CODE_POINTS)]
    meta = f'<meta charset="{encoding}">' if declare_in_meta else ""
    body = "".join(f'<a href="{h}">x</a>\n' for h in hrefs)
    html = f"<!DOCTYPE html><html><head>{meta}</head><body>{body}</body></html>"
    return html.encode(encoding, "xmlcharrefreplace")


@pytest.fixture
async def browser():
    executable = support.chromium()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        b = await pw.chromium.launch(executable_path=executable, args=list(support.CHROMIUM_ARGS))
        try:
            yield await b.new_page()
        finally:
            await b.close()


@pytest.fixture
async def server():
    """Pages in each encoding: /header/ENC declares it in Content-Type, /meta/ENC in <meta>."""

    async def handler(request: web.Request) -> web.Response:
        encoding = request.match_info["encoding"]
        if request.match_info["how"] == "meta":
            return web.Response(body=page(encoding, True), content_type="text/html")
        return web.Response(
            body=page(encoding), headers={"Content-Type": f"text/html; charset={encoding}"}
        )

    app = web.Application()
    app.router.add_get("/{how}/{encoding}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def as_fetched(href: str) -> str:
    # What dustless fetches for Chromium's URL: its rfc3986 form (a "%" that starts no
    # escape is written %25, as resolve() does).
    return normalize(BAD_ESCAPE_RE.sub("%25", href))


async def browser_links(tab, url: str) -> tuple[str, list[str]]:
    await tab.goto(url)
    charset = await tab.evaluate("document.characterSet")
    hrefs = await tab.evaluate("Array.from(document.querySelectorAll('a'), a => a.href)")
    return charset, hrefs


async def test_links_resolve_as_in_chromium_in_every_encoding(browser, server):
    checked = 0
    for encoding in ENCODINGS:
        url = f"{server}/header/{encoding}"
        charset, hrefs = await browser_links(browser, url)
        ours = extract_links(page(encoding), url, f"text/html; charset={encoding}").links
        assert len(ours) == len(hrefs) == len(PLAIN_LINKS) + len(CODE_POINTS), encoding
        differ = [
            (link.raw, href, link.url)
            for link, href in zip(ours, hrefs, strict=True)
            if as_fetched(href) != link.url
        ]
        assert differ == [], (encoding, charset, differ[:5])
        checked += len(hrefs)
    assert checked == len(ENCODINGS) * (len(PLAIN_LINKS) + len(CODE_POINTS))


async def test_a_korean_query_in_an_euc_kr_page(browser, server):
    # Declared only in <meta>: the encoding found by the prescan decides the query too.
    url = f"{server}/meta/euc-kr"
    charset, hrefs = await browser_links(browser, url)
    assert charset == "EUC-KR"
    ours = extract_links(page("euc-kr", True), url, "text/html").links
    assert hrefs[0] == f"{server}/search?q=%C7%D1%B1%B9"
    assert ours[0].url == f"{server}/search?q=%C7%D1%B1%B9"  # not UTF-8's %ED%95%9C%EA%B5%AD
    assert [link.url for link in ours] == [as_fetched(h) for h in hrefs]
