"""The HTTP API against a real uvicorn server on 127.0.0.1 (in the test's event loop)."""

import asyncio
import json

import pytest

from dustless.shortener import create_app
from dustless.shortener._app import CSP
from dustless.shortener._clicks import ClickRecorder
from dustless.shortener._codes import is_code_shape
from shortener.helpers import open_config

JSON = {"Content-Type": "application/json"}


async def test_create_then_redirect(service):
    status, body = await service.shorten("https://example.com/a/long/path?x=1#frag")
    assert status == 201
    code = body["code"]
    assert is_code_shape(code)
    assert body["shortUrl"] == f"https://sho.rt/{code}"
    assert body["longUrl"] == "https://example.com/a/long/path?x=1#frag"  # fragment kept
    resp = await service.get(f"/{code}")
    assert resp.status == 302  # the configured default
    assert resp.headers["Location"] == body["longUrl"]
    assert resp.headers["Cache-Control"] == "private, no-store"
    api = await service.get(f"/api/v1/{code}")
    assert api.status == 302
    assert api.headers["Location"] == body["longUrl"]


async def test_the_seed_endpoint_and_equal_urls_share_one_code(service):
    status, first = await service.shorten("http://example.com/a/b?q=%7e")
    assert status == 201
    # Equal under rfc3986: case of scheme/host, default port, dot segments, %7e → ~.
    async with service.session.post(
        service.base + "/api/v1/data", json={"longUrl": "HTTP://EXAMPLE.com:80/a/./x/../b?q=~"}
    ) as resp:
        assert resp.status == 200
        again = await resp.json()
    assert again["code"] == first["code"]
    # A different fragment is a different URL under rfc3986 (fragments are kept).
    status, other = await service.shorten("http://example.com/a/b?q=%7e#part")
    assert status == 201
    assert other["code"] != first["code"]


async def test_per_link_redirect_type(service):
    _, permanent = await service.shorten("https://example.org/p", redirect=301)
    _, temporary = await service.shorten("https://example.org/p", redirect=302)
    assert permanent["code"] != temporary["code"]
    resp = await service.get("/" + permanent["code"])
    assert resp.status == 301
    assert "max-age" in resp.headers["Cache-Control"]
    resp = await service.get("/" + temporary["code"])
    assert resp.status == 302
    status, body = await service.shorten("https://example.org/q", redirect=303)
    assert status == 400
    assert body["problem"] == "redirect"


async def test_configured_default_301(db_url, run_app):
    config = open_config(db=db_url, redirect=301, rate_limit=0)
    async with run_app(create_app(config)) as srv:
        _, body = await srv.shorten("https://example.org/")
        assert body["redirect"] == 301
        assert (await srv.get("/" + body["code"])).status == 301


async def test_unknown_codes_are_404_as_json_or_page(service):
    api = await service.get("/api/v1/zzzzzzz")
    assert api.status == 404
    assert api.content_type == "application/json"
    page = await service.session.get(service.base + "/zzzzzzz")
    text = await page.text()
    assert page.status == 404
    assert "text/html" in page.headers["Content-Type"]
    assert page.headers["Content-Security-Policy"] == CSP
    assert "zzzzzzz" in text
    page.release()


async def test_expired_links_are_410_gone(service):
    _, body = await service.shorten("https://example.net/soon", expiresAt="2099-01-01T00:00:00Z")
    code = body["code"]
    assert body["expiresAt"] == "2099-01-01T00:00:00Z"
    assert (await service.get("/" + code)).status == 302
    service.app.now = lambda: 4_102_444_800.0 + 1  # just after 2100-01-01
    resp = await service.get("/" + code)
    assert resp.status == 410  # an ended link is gone, not unknown
    resp = await service.get("/api/v1/" + code)
    assert resp.status == 410
    # An expiring link is a link of its own, not the plain link of the same URL.
    status, plain = await service.shorten("https://example.net/soon")
    assert status == 201
    assert plain["code"] != code


async def test_custom_aliases(service):
    status, body = await service.shorten("https://example.com/x", alias="my-page")
    assert (status, body["code"]) == (201, "my-page")
    assert body["shortUrl"] == "https://sho.rt/my-page"
    status, again = await service.shorten("https://example.com/x", alias="my-page")
    assert (status, again["code"]) == (200, "my-page")
    status, taken = await service.shorten("https://example.com/other", alias="my-page")
    assert status == 409
    assert taken["problem"] == "alias-taken"
    status, reserved = await service.shorten("https://example.com/x", alias="api")
    assert (status, reserved["problem"]) == (400, "alias-reserved")
    status, bad = await service.shorten("https://example.com/x", alias="no/slash")
    assert (status, bad["problem"]) == (400, "alias")
    assert (await service.get("/my-page")).headers["Location"] == "https://example.com/x"


@pytest.mark.parametrize(
    ("long_url", "problem"),
    [
        ("javascript:alert(document.cookie)", "scheme"),
        ("data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "scheme"),
        ("https://admin:hunter2@example.com/", "credentials"),
        ("https://sho.rt/abcdefg", "own-domain"),
        ("not a url", "malformed"),
        ("https://example.com/" + "x" * 2100, "too-long"),
    ],
)
async def test_bad_long_urls_get_400_naming_the_problem(service, long_url, problem):
    status, body = await service.shorten(long_url)
    assert status == 400
    assert body["problem"] == problem
    assert body["error"]


async def test_bad_bodies_get_400_json(service):
    url = service.base + "/api/v1/data/shorten"
    for data, problem in (
        (b"not json", "body"),
        (b"[1, 2]", "body"),
        (b"{}", "malformed"),
        (b'{"longUrl": 5}', "type"),
    ):
        async with service.session.post(url, data=data, headers=JSON) as resp:
            assert resp.status == 400
            assert (await resp.json())["problem"] == problem
    async with service.session.post(url, data=b"x" * 20_000, headers=JSON) as resp:
        assert resp.status == 413


async def test_blocklisted_urls_get_403(tmp_path, db_url, run_app):
    blocklist = tmp_path / "blocked.txt"
    blocklist.write_text("malware.example/\nexample.com/phish/\n")
    config = open_config(db=db_url, blocklist=str(blocklist), rate_limit=0)
    async with run_app(create_app(config)) as srv:
        status, body = await srv.shorten("http://cdn.MALWARE.example/payload.exe")
        assert (status, body["problem"]) == (403, "blocked")
        status, body = await srv.shorten("https://example.com/phish/login")
        assert status == 403
        status, _ = await srv.shorten("https://example.com/fine")
        assert status == 201


async def test_rate_limit_burst_then_429_with_retry_after(db_url, run_app):
    config = open_config(db=db_url, rate_limit=1.0, public_rate_factor=1.0, public_burst=3)
    async with run_app(create_app(config)) as srv:
        clock = [1000.0]
        srv.app.now = lambda: clock[0]
        statuses = [(await srv.shorten(f"https://example.com/{i}"))[0] for i in range(3)]
        assert statuses == [201, 201, 201]
        async with srv.session.post(
            srv.base + "/api/v1/data", json={"longUrl": "https://example.com/4"}
        ) as resp:
            assert resp.status == 429
            assert resp.headers["Retry-After"] == "1"
            assert (await resp.json())["problem"] == "rate-limited"
        clock[0] += 1.0
        assert (await srv.shorten("https://example.com/4"))[0] == 201
        # Redirects are never rate limited, even for a client whose bucket is empty.
        _, body = await srv.shorten("https://example.com/0")
        assert body["problem"] == "rate-limited"
        for _ in range(10):
            assert (await srv.get("/zzzzzzz")).status == 404


async def test_rate_limit_zero_disables_it(db_url, run_app):
    # A burst of 1 would allow one create per second; rate 0 switches the limiter off.
    config = open_config(db=db_url, rate_limit=0, public_burst=1)
    async with run_app(create_app(config)) as srv:
        srv.app.now = lambda: 5000.0
        statuses = {(await srv.shorten(f"https://example.com/n{i}"))[0] for i in range(10)}
    assert statuses == {201}


async def test_forwarded_for_is_trusted_only_from_configured_proxies(db_url, run_app):
    headers_a = {"X-Forwarded-For": "198.51.100.1"}
    headers_b = {"X-Forwarded-For": "198.51.100.2"}

    async def creates(srv, headers):
        async with srv.session.post(
            srv.base + "/api/v1/data",
            json={"longUrl": f"https://example.com/{headers['X-Forwarded-For']}"},
            headers=headers,
        ) as resp:
            return resp.status

    config = open_config(db=db_url, rate_limit=1.0, public_rate_factor=1.0, public_burst=1)
    async with run_app(create_app(config)) as srv:
        srv.app.now = lambda: 5000.0
        # Not trusted: both "clients" are 127.0.0.1 and share one bucket.
        assert await creates(srv, headers_a) == 201
        assert await creates(srv, headers_b) == 429
    config = open_config(
        db=db_url,
        rate_limit=1.0,
        public_rate_factor=1.0,
        public_burst=1,
        trusted_proxies=("127.0.0.1",),
    )
    async with run_app(create_app(config)) as srv:
        srv.app.now = lambda: 5000.0
        assert await creates(srv, headers_a) in (200, 201)
        assert await creates(srv, headers_b) in (200, 201)  # a bucket of its own
        assert await creates(srv, headers_b) == 429


async def test_stats_count_clicks_by_day_referrer_and_browser(service):
    _, body = await service.shorten("https://example.com/popular")
    code = body["code"]
    chrome = "Mozilla/5.0 (X11) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"
    for _ in range(3):
        await service.get(
            "/" + code, headers={"Referer": "https://news.example/item?id=1", "User-Agent": chrome}
        )
    await service.get("/" + code, headers={"User-Agent": "curl/8.0"})
    await service.session.head(service.base + "/" + code, allow_redirects=False)  # not a click
    # Nothing was written on the redirect path: the counts wait in memory for the batch.
    async with service.session.get(f"{service.base}/api/v1/{code}/stats") as resp:
        assert (await resp.json())["clicks"] == 0
    await service.app.clicks.flush()
    async with service.session.get(f"{service.base}/api/v1/{code}/stats") as resp:
        assert resp.status == 200
        stats = await resp.json()
    assert stats["clicks"] == 4
    assert stats["countsEveryClick"] is True
    assert [d["clicks"] for d in stats["byDay"]] == [4]
    assert stats["referrers"] == [
        {"key": "news.example", "clicks": 3},
        {"key": "(direct)", "clicks": 1},
    ]
    assert stats["userAgents"] == [
        {"key": "Chrome", "clicks": 3, "potentialBot": False},
        {"key": "curl", "clicks": 1, "potentialBot": True},
    ]
    assert (stats["humanClicks"], stats["potentialBotClicks"]) == (3, 1)
    async with service.session.get(f"{service.base}/api/v1/zzzzzzz/stats") as resp:
        assert resp.status == 404


async def test_clicks_are_written_by_the_background_batch():
    written = asyncio.Event()
    batches = []

    class FakeStore:
        async def add_clicks(self, counts):
            batches.append(dict(counts))
            written.set()

    recorder = ClickRecorder(FakeStore(), interval=0.01)
    for _ in range(5):
        recorder.record(7, 86400.0 * 3, "", "curl/8")
    recorder.start()
    await asyncio.wait_for(written.wait(), 5)
    await recorder.stop()
    assert sum(n for batch in batches for n in batch.values()) == 5
    (key,) = batches[0]
    assert (key.link_id, key.day, key.ua_family) == (7, "1970-01-04", "curl")


async def test_a_failed_click_batch_is_kept_for_the_next_one():
    from dustless.errors import StoreError

    calls = []

    class FlakyStore:
        async def add_clicks(self, counts):
            calls.append(sum(counts.values()))
            if len(calls) == 1:
                raise StoreError("database is locked")

    recorder = ClickRecorder(FlakyStore())
    recorder.record(1, 0.0, "", "")
    await recorder.flush()
    recorder.record(1, 0.0, "", "")
    await recorder.flush()
    assert calls == [1, 2]


async def test_page_openapi_and_static_files(service):
    async with service.session.get(service.base + "/") as resp:
        assert resp.status == 200
        assert resp.headers["Content-Security-Policy"] == CSP
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
        page = await resp.text()
    assert '<script src="/static/app.js"' in page
    assert "<script>" not in page  # no inline script: the CSP forbids it anyway
    async with service.session.get(service.base + "/openapi.json") as resp:
        spec = json.loads(await resp.text())
    assert spec["openapi"].startswith("3.")
    for path in ("/api/v1/data/shorten", "/api/v1/data", "/{code}", "/api/v1/{code}/stats"):
        assert path in spec["paths"]
    async with service.session.get(service.base + "/static/app.js") as resp:
        assert resp.status == 200
        assert "textContent" in await resp.text()
    async with service.session.get(service.base + "/static/../app.py") as resp:
        assert resp.status == 404


async def test_hot_codes_are_served_from_the_cache(service):
    _, body = await service.shorten("https://example.com/hot")
    service.app.cache.hits = 0
    for _ in range(5):
        assert (await service.get("/" + body["code"])).status == 302
    assert service.app.cache.hits == 5


async def test_a_restarted_app_serves_every_link(db_url, run_app):
    config = open_config(db=db_url, rate_limit=0)
    async with run_app(create_app(config)) as srv:
        links = [await srv.shorten(f"https://example.com/r/{i}") for i in range(50)]
        alias = await srv.shorten("https://example.com/aliased", alias="keep-me")
    async with run_app(create_app(config)) as srv:
        for status, body in [*links, alias]:
            assert status == 201
            resp = await srv.get("/" + body["code"])
            assert resp.headers["Location"] == body["longUrl"]


async def test_connection_errors_do_not_leak(service):
    # A client that disconnects mid-request must not break the server.
    reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
    writer.write(b"POST /api/v1/data HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    await writer.drain()
    writer.close()
    await writer.wait_closed()
    del reader
    status, _ = await service.shorten("https://example.com/after")
    assert status == 201


async def test_a_large_click_batch_of_cold_traffic_is_counted_exactly():
    received = []

    class FakeStore:
        async def add_clicks(self, counts):
            received.append(dict(counts))

    recorder = ClickRecorder(FakeStore())
    for link_id in range(2000):  # cold traffic: every click a different link
        recorder.record(link_id, 0.0, "https://ref.example/x", "curl/8")
        recorder.record(link_id, 0.0, "https://ref.example/y", "curl/8")
    await recorder.flush()
    (counts,) = received
    assert len(counts) == 2000
    assert set(counts.values()) == {2}
    assert {k.referrer_host for k in counts} == {"ref.example"}
