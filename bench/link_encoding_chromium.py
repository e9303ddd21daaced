"""Links in pages that are not UTF-8: dustless against headless Chromium, every character.

For each encoding, pages served on 127.0.0.1 hold one link ``?q=&#N;`` per code point of the
Basic Multilingual Plane (63,328 of them, and five beyond it); the query is encoded with the
page's encoding (WHATWG URL "encoding-parse"), so every character exercises the encoder.
Prints, per encoding, how many of dustless's resolved links equal Chromium's ``a.href`` (in
the rfc3986 form dustless fetches), and the share: the peer is the browser, measured in the
same run. Takes a few minutes; needs Debian's ``chromium`` and Playwright (the dev extra).
Run by hand: ``.venv/bin/python bench/link_encoding_chromium.py [ENCODING,…]``.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import time

from aiohttp import web

from dustless.extract import extract_links
from dustless.url import normalize
from dustless.url._parse import BAD_ESCAPE_RE

ENCODINGS = [
    "euc-kr",
    "shift_jis",
    "gb18030",
    "gbk",
    "windows-1252",
    "euc-jp",
    "iso-2022-jp",
    "big5",
]
# Headless, off the network (the same flags as tests/support.py's CHROMIUM_ARGS).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CODE_POINTS = [c for c in range(0xA0, 0x10000) if not 0xD800 <= c < 0xE000] + [
    0x10000,
    0x1F600,
    0x20000,
    0x2A6D6,
    0x10FFFD,
]
CHUNK = 8000  # links a page


def page(encoding: str, chunk: int) -> bytes:
    points = CODE_POINTS[chunk * CHUNK : (chunk + 1) * CHUNK]
    links = "".join(f'<a href="?q=&#{c};">x</a>' for c in points)
    html = f"<!DOCTYPE html><html><body>{links}</body></html>"
    return html.encode(encoding, "xmlcharrefreplace")


async def run(encodings: list[str]) -> None:
    from playwright.async_api import async_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("error: Debian's chromium is not installed (apt-get install chromium)")

    async def handler(request: web.Request) -> web.Response:
        encoding = request.match_info["encoding"]
        body = page(encoding, int(request.match_info["chunk"]))
        return web.Response(body=body, headers={"Content-Type": f"text/html; charset={encoding}"})

    app = web.Application()
    app.router.add_get("/{encoding}/{chunk}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    chunks = (len(CODE_POINTS) + CHUNK - 1) // CHUNK
    total = agree = 0
    started = time.monotonic()
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        tab = await browser.new_page()
        for encoding in encodings:
            same = seen = 0
            differ: list[tuple[str, str, str]] = []
            for chunk in range(chunks):
                url = f"http://127.0.0.1:{port}/{encoding}/{chunk}"
                await tab.goto(url)
                hrefs = await tab.evaluate(
                    "Array.from(document.querySelectorAll('a'), a => a.href)"
                )
                ours = extract_links(page(encoding, chunk), url, f"text/html; charset={encoding}")
                for href, link in zip(hrefs, ours.links, strict=True):
                    seen += 1
                    if normalize(BAD_ESCAPE_RE.sub("%25", href)) == link.url:
                        same += 1
                    elif len(differ) < 5:
                        differ.append((link.raw, href, link.url))
            total += seen
            agree += same
            print(f"  {encoding:<13} {same:>7,} of {seen:,} links as Chromium ({same / seen:.3%})")
            for raw, href, got in differ:
                print(f"      {raw!r}: Chromium {href}  dustless {got}")
        await browser.close()
    await runner.cleanup()
    print(
        f"all: {agree:,} of {total:,} ({agree / total:.3%}) in {time.monotonic() - started:.0f} s"
    )


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1].split(",") if len(sys.argv) > 1 else ENCODINGS))
