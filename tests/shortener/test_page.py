"""The web page at ``/`` in headless Chromium (Debian's, driven by Playwright)."""

import pytest

import support
from dustless.shortener import NewLink, Redirect, ShortenerConfig, create_app
from shortener.helpers import open_config

pytestmark = pytest.mark.slow

HOSTILE = [
    'https://example.com/"><img src=x onerror="window.__pwned=1;alert(1)">',
    "https://example.com/?q=</span><script>window.__pwned=2;alert(2)</script>",
]


@pytest.fixture
async def browser_page(tmp_path):
    executable = support.chromium()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=executable, args=list(support.CHROMIUM_ARGS), headless=True
        )
        context = await browser.new_context()
        page = await context.new_page()
        problems = []
        page.on(
            "console",
            lambda msg: (
                problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None
            ),
        )
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))

        async def on_dialog(dialog):
            problems.append(f"dialog: {dialog.message}")
            await dialog.dismiss()

        page.on("dialog", on_dialog)
        try:
            yield context, page, problems
        finally:
            await context.close()
            await browser.close()


async def test_shorten_copy_and_stats_in_chromium(browser_page, db_url, run_app, tmp_path):
    context, page, problems = browser_page
    config = open_config(db=db_url, rate_limit=0, base_url="https://sho.rt")
    async with run_app(create_app(config)) as srv:
        await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=srv.base)
        await page.goto(srv.base + "/")
        assert await page.title() == "dustless — shorten a URL"

        # Shorten.
        await page.fill("#long-url", "https://example.com/some/long/path?x=1")
        await page.click("#shorten")
        await page.wait_for_selector("#result", state="visible")
        short = await page.text_content("#short-url")
        assert short is not None
        assert short.startswith("https://sho.rt/")
        code = short.rsplit("/", 1)[1]
        assert await page.text_content("#result-long") == "https://example.com/some/long/path?x=1"

        # Copy.
        await page.click("#copy")
        await page.wait_for_selector("#copied", state="visible")
        assert await page.evaluate("navigator.clipboard.readText()") == short

        # Clicks, then stats.
        for agent in ("curl/8.0", "curl/8.0", "Mozilla/5.0 Firefox/120.0"):
            await srv.get("/" + code, headers={"User-Agent": agent})
        await srv.app.clicks.flush()
        await page.fill("#stats-code", short)  # a whole short URL is accepted too
        await page.click("#show-stats")
        await page.wait_for_selector("#stats", state="visible")
        assert await page.text_content("#stats-clicks") == "3"
        agents = await page.locator("#stats-agents tr").all_inner_texts()
        assert [a.split("\t") for a in agents] == [["curl (bot)", "2"], ["Firefox", "1"]]

        shot = tmp_path / "shortener.png"
        await page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 1000
        assert problems == []

        # A rejected URL shows the server's message (Chromium logs every 4xx response as
        # "Failed to load resource": that one line is expected, nothing else).
        await page.fill("#long-url", "https://user:pw@example.com/")
        await page.click("#shorten")
        await page.wait_for_selector("#error", state="visible")
        assert "credentials" in (await page.text_content("#error") or "")
    assert len(problems) == 1
    assert "status of 400" in problems[0]


async def test_a_hostile_stored_url_is_never_executed(browser_page, db_url, run_app):
    _context, page, problems = browser_page
    config = open_config(db=db_url, rate_limit=0)
    async with run_app(create_app(config)) as srv:
        # Through the page (the server percent-encodes what it stores) …
        await page.goto(srv.base + "/")
        for url in HOSTILE:
            await page.fill("#long-url", url)
            await page.click("#shorten")
            await page.wait_for_selector("#result", state="visible")
            shown = await page.text_content("#result-long")
            assert shown is not None
            assert "example.com" in shown
        # … and a raw hostile value already in the database (an old import, a bug):
        # the page must still show it as text only.
        raw = HOSTILE[0]
        result = await srv.app.store.create(NewLink(raw, raw, Redirect.FOUND, 0.0, alias="evil"))
        assert result.link.long_url == raw
        await page.fill("#stats-code", "evil")
        await page.click("#show-stats")
        await page.wait_for_selector("#stats", state="visible")
        assert await page.text_content("#stats-long") == raw
        assert await page.locator("#stats img").count() == 0
        assert await page.evaluate("window.__pwned") is None
        # The 404 page never reflects markup either.
        await page.goto(srv.base + "/no-such-code")
        assert await page.evaluate("window.__pwned") is None
    assert [p for p in problems if "404" not in p] == []
    assert not any("dialog" in p for p in problems)


async def test_key_prompt_link_list_and_qr_code_in_chromium(browser_page, db_url, run_app):
    from playwright.async_api import expect

    from shortener.helpers import make_key

    _context, page, problems = browser_page
    config = ShortenerConfig(db=db_url, rate_limit=0, base_url="https://sho.rt")
    async with run_app(create_app(config)) as srv:
        key = await make_key(srv.app.store, "page-user")
        await page.goto(srv.base + "/")
        # The server needs a key: the page asks for one before anything else.
        await page.wait_for_selector("#key-box", state="visible")
        assert await page.is_hidden("#links")
        # A create without a key is refused, and the previous result never lingers.
        await page.fill("#long-url", "https://example.com/no-key")
        await page.click("#shorten")
        await page.wait_for_selector("#error", state="visible")
        assert "API key" in (await page.text_content("#error") or "")
        await page.fill("#api-key", key)
        await page.click("#save-key")
        await page.wait_for_selector("#links", state="visible")
        assert await page.text_content("#links-total") == "0 links"

        for i in range(3):
            await page.fill("#long-url", f"https://example.com/listed/{i}")
            await page.click("#shorten")
            await page.wait_for_selector("#result", state="visible")
        await expect(page.locator("#links-body tr")).to_have_count(3)
        short = await page.text_content("#short-url")
        assert short is not None
        code = short.rsplit("/", 1)[1]
        # The QR code of the new link is shown (drawn by the server, loaded as an image).
        await page.wait_for_load_state("networkidle")
        assert await page.locator("#qr").evaluate("img => img.complete && img.naturalWidth") > 100
        assert await page.get_attribute("#qr", "src") == f"/{code}/qr"
        assert (await page.get_attribute("#qr-png", "href") or "").endswith("format=png&scale=8")

        # Clicks by a person and a bot, then the list shows them and a chart per link.
        await srv.get("/" + code, headers={"User-Agent": "Mozilla/5.0 Firefox/121.0"})
        await srv.get("/" + code, headers={"User-Agent": "Slackbot-LinkExpanding 1.0"})
        await srv.app.clicks.flush()
        await page.fill("#search", "listed/2")
        await page.click("#do-search")
        await expect(page.locator("#links-body tr")).to_have_count(1)
        cells = await page.locator("#links-body tr td").all_inner_texts()
        assert cells[0] == short
        assert cells[1] == "https://example.com/listed/2"
        assert cells[2:4] == ["1", "1"]  # one person, one potential bot
        assert cells[5] == "active"
        assert await page.locator("#links-body svg.chart rect").count() == 2
        assert "matching" in (await page.text_content("#links-total") or "")

        # A failed create clears the last result instead of leaving it under the error.
        await page.fill("#long-url", "javascript:alert(1)")
        await page.click("#shorten")
        await page.wait_for_selector("#error", state="visible")
        assert await page.is_hidden("#result")

        # Statistics with the key: people and bots apart.
        await page.fill("#stats-code", code)
        await page.click("#show-stats")
        await page.wait_for_selector("#stats", state="visible")
        assert await page.text_content("#stats-human") == "1"
        assert await page.text_content("#stats-bots") == "1"
    # Chromium logs each 4xx response it fetched: the 401 without a key and the 400.
    assert all("status of 40" in p for p in problems), problems
