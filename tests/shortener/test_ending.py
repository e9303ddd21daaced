"""Links that end (validUntil, maxVisits), custom slugs, clicks by bots, QR codes."""

import asyncio
import io

import aiohttp
import pytest
import segno

from dustless.shortener._bots import ua_family
from shortener.helpers import get_json, post

BROWSERS = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 "
    "Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
    "Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15",
    "Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 Chrome/120.0 Mobile Safari/537.36",
)
BOTS = (
    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "Twitterbot/1.0",
    "Mozilla/5.0 (compatible; LinkedInBot/1.0)",
    "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
    "TelegramBot (like TwitterBot)",
    "WhatsApp/2.23.20.0",
    "curl/8.5.0",
    "python-requests/2.31.0",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0 "
    "Safari/537.36",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "",
)


async def test_an_expired_link_answers_410_and_says_so_in_stats(service):
    clock = [1_800_000_000.0]
    service.app.now = lambda: clock[0]
    status, made, _ = await post(
        service, {"longUrl": "https://example.com/offer", "validUntil": "2027-01-15T12:00:00Z"}
    )
    assert status == 201
    assert made["validUntil"] == "2027-01-15T12:00:00Z"
    assert made["status"] == "active"
    assert (await service.get("/" + made["code"])).status == 302
    clock[0] = 1_800_000_000.0 + 86400 * 365
    resp = await service.get("/" + made["code"])
    assert resp.status == 410
    async with service.session.get(service.base + "/" + made["code"]) as page:
        text = await page.text()
        assert "text/html" in page.headers["Content-Type"]
        assert "expired" in text
    _, stats, _ = await get_json(service, f"/api/v1/{made['code']}/stats")
    assert stats["status"] == "expired"


async def test_a_link_past_its_visit_limit_answers_410(service):
    _, made, _ = await post(service, {"longUrl": "https://example.com/once", "maxVisits": 3})
    assert (made["maxVisits"], made["visits"]) == (3, 0)
    statuses = [(await service.get("/" + made["code"])).status for _ in range(5)]
    assert statuses == [302, 302, 302, 410, 410]
    resp = await service.get("/" + made["code"])
    assert resp.status == 410
    _, stats, _ = await get_json(service, f"/api/v1/{made['code']}/stats")
    assert (stats["status"], stats["visits"]) == ("visit-limit", 3)
    for bad in (0, -1, 1.5, "3", True):
        status, body, _ = await post(
            service, {"longUrl": "https://example.com/x", "maxVisits": bad}
        )
        assert (status, body["problem"]) == (400, "max-visits")


async def test_visit_limits_are_exact_under_64_concurrent_clicks(service):
    _, made, _ = await post(service, {"longUrl": "https://example.com/limited", "maxVisits": 10})
    url = f"{service.base}/{made['code']}"
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def click() -> int:
            async with session.get(url, allow_redirects=False) as resp:
                await resp.read()
                return resp.status

        statuses = await asyncio.gather(*(click() for _ in range(64)))
    assert statuses.count(302) == 10
    assert statuses.count(410) == 54


async def test_custom_slugs_are_validated(service):
    status, made, _ = await post(
        service, {"longUrl": "https://example.com/s", "customSlug": "spring-sale_2"}
    )
    assert (status, made["code"]) == (201, "spring-sale_2")
    for slug, problem in (
        ("ab", "alias"),
        ("-lead", "alias"),
        ("with space", "alias"),
        ("ünïcode", "alias"),
        ("a" * 65, "alias"),
        ("healthz", "alias-reserved"),
        ("LINKS", "alias-reserved"),
        ("Ab3dE9x", "alias-shape"),  # 7 base62 characters: a generated code's shape
        (42, "alias"),
    ):
        status, body, _ = await post(
            service, {"longUrl": "https://example.com/s", "customSlug": slug}
        )
        assert (status, body["problem"]) == (400, problem), slug
    status, body, _ = await post(
        service, {"longUrl": "https://example.com/t", "customSlug": "spring-sale_2"}
    )
    assert (status, body["problem"]) == (409, "alias-taken")


async def test_100_bot_clicks_and_100_browser_clicks_count_100_people(service):
    _, made, _ = await post(service, {"longUrl": "https://example.com/shared-in-slack"})
    for i in range(100):
        await service.get("/" + made["code"], headers={"User-Agent": BOTS[i % len(BOTS)]})
        await service.get("/" + made["code"], headers={"User-Agent": BROWSERS[i % len(BROWSERS)]})
    await service.app.clicks.flush()
    _, stats, _ = await get_json(service, f"/api/v1/{made['code']}/stats")
    assert (stats["clicks"], stats["humanClicks"], stats["potentialBotClicks"]) == (200, 100, 100)
    bots = {row["key"] for row in stats["userAgents"] if row["potentialBot"]}
    people = {row["key"] for row in stats["userAgents"] if not row["potentialBot"]}
    assert people == {"Chrome", "Firefox", "Safari"}
    assert "Slackbot" in bots  # the top ten families only: each bot has ~8 of 100 clicks


@pytest.mark.parametrize("agent", BOTS)
def test_preview_fetchers_and_scripts_are_potential_bots(agent):
    from dustless.shortener._bots import is_bot_family

    assert is_bot_family(ua_family(agent))


@pytest.mark.parametrize("agent", BROWSERS)
def test_browsers_are_people(agent):
    from dustless.shortener._bots import is_bot_family

    assert not is_bot_family(ua_family(agent))


async def test_each_link_has_a_qr_code_in_svg_and_png(service):
    _, made, _ = await post(service, {"longUrl": "https://example.com/printed"})
    async with service.session.get(f"{service.base}/{made['code']}/qr") as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"] == "image/svg+xml"
        svg = await resp.read()
    assert svg.startswith(b"<svg")
    async with service.session.get(f"{service.base}/{made['code']}/qr?format=png") as resp:
        assert resp.headers["Content-Type"] == "image/png"
        png = await resp.read()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    # The code is the short URL's, drawn as segno draws it (and never the long URL).
    expected = io.BytesIO()
    segno.make(made["shortUrl"], error="m", micro=False).save(
        expected, kind="png", scale=4, border=4
    )
    assert png == expected.getvalue()
    assert made["qrUrl"] == made["shortUrl"] + "/qr"
    async with service.session.get(f"{service.base}/{made['code']}/qr?format=gif") as resp:
        assert resp.status == 400
    async with service.session.get(f"{service.base}/zzzzzzz/qr") as resp:
        assert resp.status == 404
