"""What a hostile client sends the service: bad expiries, probes for codes, loops back to the
service itself, inputs built to crash a parser, cross-site posts. Each is refused cleanly."""

import asyncio
import json
import sqlite3

import pytest

from dustless.fetch import Resolver
from dustless.shortener import create_app
from shortener.helpers import get_json, make_key, open_config, post

# -- bad expiries (validUntil / expiresAt) --------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "1e300",  # a finite float no date can show
        "Infinity",  # Python's json accepts these three JavaScript literals
        "-Infinity",
        "NaN",
        "-5",
        "1" + "0" * 400,  # an integer too large for a float
        '"not a date"',
        "[1]",
        "true",
        '"2030-01-01T00:00:00"',  # no time zone
    ],
)
async def test_a_bad_expiry_is_400_and_stores_nothing(service, raw):
    before = await service.app.store.count()
    body = b'{"longUrl": "https://example.com/e", "expiresAt": ' + raw.encode() + b"}"
    status, answer, _ = await post(service, body)
    assert status == 400
    assert answer["problem"] == "expires"
    assert await service.app.store.count() == before
    # validUntil is the same field under its Shlink name.
    body = b'{"longUrl": "https://example.com/e", "validUntil": ' + raw.encode() + b"}"
    assert (await post(service, body))[0] == 400


async def test_a_stored_bad_expiry_never_breaks_stats_or_redirects(service, db_url):
    # Rows written before expiries were checked (or by hand): the service must still answer.
    _, made, _ = await post(service, {"longUrl": "https://example.com/old"})
    conn = sqlite3.connect(db_url.removeprefix("sqlite:///"))
    conn.execute("UPDATE links SET expires_at = ? WHERE code = ?", (1e300, made["code"]))
    conn.commit()
    conn.close()
    service.app.cache.forget(made["code"])
    status, stats, _ = await get_json(service, f"/api/v1/{made['code']}/stats")
    assert status == 200
    assert stats["validUntil"] is None  # no date can show it; it never ends
    assert (await service.get("/" + made["code"])).status == 302


# -- probing for codes ------------------------------------------------------------------------


async def test_404s_are_rate_limited_per_client_with_retry_after(db_url, run_app):
    config = open_config(db=db_url, rate_limit=0, miss_rate_limit=1.0, miss_burst=5)
    async with run_app(create_app(config)) as srv:
        clock = [1000.0]
        srv.app.now = lambda: clock[0]
        _, made, _ = await post(srv, {"longUrl": "https://example.com/real"})
        statuses = [(await srv.get(f"/zz{i:05d}")).status for i in range(5)]
        assert statuses == [404] * 5
        resp = await srv.get("/zz99999")
        assert resp.status == 429
        assert resp.headers["Retry-After"] == "1"
        api = await srv.get("/api/v1/zz99999")
        assert (api.status, api.content_type) == (429, "application/json")
        # The statistics and QR endpoints are probes too.
        assert (await get_json(srv, "/api/v1/zz99999/stats"))[0] == 429
        assert (await srv.get("/zz99999/qr")).status == 429
        # A client out of misses still follows links that exist (hits cost nothing).
        for _ in range(10):
            assert (await srv.get("/" + made["code"])).status == 302
        clock[0] += 1.0
        assert (await srv.get("/zz88888")).status == 404
        assert (await srv.get("/zz77777")).status == 429


async def test_statistics_are_only_for_the_links_owner(db_url, run_app):
    config = open_config(db=db_url, rate_limit=0, public_stats=False)
    async with run_app(create_app(config)) as srv:
        alice = await make_key(srv.app.store, "alice")
        bob = await make_key(srv.app.store, "bob")
        admin = await make_key(srv.app.store, "root", admin=True)
        _, made, _ = await post(srv, {"longUrl": "https://example.com/secret?token=abc"}, alice)
        path = f"/api/v1/{made['code']}/stats"
        status, body, headers = await get_json(srv, path)
        assert status == 401
        assert "Bearer" in headers["WWW-Authenticate"]
        assert "token" not in json.dumps(body)
        status, body, _ = await get_json(srv, path, bob)
        assert status == 404  # bob cannot even tell that the code exists
        assert (await get_json(srv, "/api/v1/zzzzzz9/stats", bob))[0] == 404
        assert (await get_json(srv, path, alice))[0] == 200
        assert (await get_json(srv, path, admin))[0] == 200
        assert (await get_json(srv, path, "dls_not-a-key"))[0] == 401
    # --public-stats opens them to everyone, on purpose.
    async with run_app(create_app(open_config(db=db_url, public_stats=True))) as srv:
        assert (await get_json(srv, path))[0] == 200


async def test_resubmitting_a_long_url_reveals_no_other_owners_link(db_url, run_app):
    config = open_config(db=db_url, rate_limit=0)
    async with run_app(create_app(config)) as srv:
        alice = await make_key(srv.app.store, "alice")
        bob = await make_key(srv.app.store, "bob")
        url = "https://example.com/private/doc?id=42"
        status, first, _ = await post(srv, {"longUrl": url}, alice)
        assert status == 201
        status, again, _ = await post(srv, {"longUrl": url}, alice)
        assert (status, again["code"]) == (200, first["code"])  # one owner: one code
        status, other, _ = await post(srv, {"longUrl": url}, bob)
        assert status == 201
        assert other["code"] != first["code"]
        assert other["createdAt"] != first["createdAt"]
        # Anonymous (--public) requests share anonymous links (seed 003), but never learn
        # when someone else made one, nor a keyed owner's link.
        status, anon, _ = await post(srv, {"longUrl": url})
        assert status == 201
        assert anon["code"] not in (first["code"], other["code"])
        status, anon_again, _ = await post(srv, {"longUrl": url})
        assert (status, anon_again["code"], anon_again["createdAt"]) == (200, anon["code"], None)
        # A slug taken by someone else is 409 for everyone else, even with the same URL.
        await post(srv, {"longUrl": url, "customSlug": "alice-doc"}, alice)
        status, taken, _ = await post(srv, {"longUrl": url, "customSlug": "alice-doc"}, bob)
        assert status == 409
        assert "longUrl" not in taken


# -- loops back to the service itself ------------------------------------------------------------


@pytest.mark.parametrize(
    "long_url",
    [
        "http://localhost:8000/x",
        "http://LOCALHOST./x",
        "http://api.localhost/x",
        "http://[::1]:8000/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://2130706433/x",  # 127.0.0.1 as one decimal number (WHATWG IPv4 parser)
        "http://0x7f.1/x",
        "http://127.1/x",
        "http://127.0.0.5/x",
        "http://0.0.0.0/x",
        "https://sho.rt/abcdefg",
        "https://SHO.RT./abcdefg",
        "http://169.254.169.254/latest/meta-data/",  # link-local: never a public target
        "http://10.0.0.1/admin",
        "http://192.168.1.1/",
    ],
)
async def test_the_services_own_names_and_addresses_are_refused(service, long_url):
    status, body, _ = await post(service, {"longUrl": long_url})
    assert (status, body["problem"]) == (400, "own-domain"), body


async def test_a_slug_pointing_at_itself_is_refused(db_url, run_app):
    async with run_app(create_app(open_config(db=db_url, rate_limit=0))) as srv:
        port = srv.port
        for spelling in (
            f"http://localhost:{port}/self-loop",
            f"http://127.0.0.1:{port}/self-loop",
            f"http://2130706433:{port}/self-loop",
            f"http://[::1]:{port}/self-loop",
        ):
            status, body, _ = await post(srv, {"longUrl": spelling, "customSlug": "self-loop"})
            assert (status, body["problem"]) == (400, "own-domain")
        assert (await srv.get("/self-loop")).status == 404


async def test_names_that_resolve_to_the_service_are_refused(db_url, run_app):
    config = open_config(db=db_url, rate_limit=0, base_url="https://sho.rt")
    async with run_app(create_app(config)) as srv:
        # --resolve style answers instead of DNS: the same Resolver the crawler uses.
        srv.app.checker.guard.use_resolver(
            Resolver(
                {
                    "loop.test": "127.0.0.1",
                    "sho.rt": "203.0.113.7",
                    "alias-of-us.test": "203.0.113.7",
                    "inside.test": "10.1.2.3",
                    "fine.test": "93.184.215.14",
                }
            )
        )
        for url, problem in (
            ("http://loop.test/a", "own-domain"),
            ("http://alias-of-us.test/a", "own-domain"),  # our own address, another name
            ("http://inside.test/a", "own-domain"),
        ):
            status, body, _ = await post(srv, {"longUrl": url})
            assert (status, body["problem"]) == (400, problem), url
            assert "via" in body["error"]
        assert (await post(srv, {"longUrl": "http://fine.test/a"}))[0] == 201


async def test_private_targets_can_be_allowed_but_never_loopback(db_url, run_app):
    config = open_config(db=db_url, rate_limit=0, allow_private_targets=True)
    async with run_app(create_app(config)) as srv:
        assert (await post(srv, {"longUrl": "http://10.0.0.1/wiki"}))[0] == 201
        assert (await post(srv, {"longUrl": "http://2130706433/"}))[0] == 400


# -- inputs built to crash a parser ---------------------------------------------------------------


async def test_a_lone_surrogate_in_the_long_url_is_400(service):
    for text in ("https://\\ud800.example/", "https://example.com/\\udfff", "https://a\\ud83d.b/"):
        status, body, _ = await post(service, b'{"longUrl": "%s"}' % text.encode())
        assert (status, body["problem"]) == (400, "malformed"), text


async def test_json_nested_8000_deep_is_400(service):
    deep = b'{"longUrl": ' + b"[" * 8000 + b"]" * 8000 + b"}"
    assert len(deep) < 16 * 1024
    status, body, _ = await post(service, deep)
    assert (status, body["problem"]) == (400, "body")
    status, body, _ = await post(service, b'{"a":' * 2500 + b"1" + b"}" * 2500)
    assert status == 400


@pytest.mark.parametrize(
    ("content_type", "data"),
    [
        ("text/plain", b'{"longUrl": "https://example.com/csrf"}'),
        ("application/x-www-form-urlencoded", b"longUrl=https%3A%2F%2Fexample.com%2Fcsrf"),
        (
            "multipart/form-data; boundary=x",
            b'--x\r\nContent-Disposition: form-data; name="longUrl"\r\n\r\n'
            b"https://example.com/csrf\r\n--x--\r\n",
        ),
        (None, b'{"longUrl": "https://example.com/csrf"}'),
    ],
)
async def test_cross_site_form_posts_are_415(service, content_type, data):
    # A browser sends these three without asking the server first (no CORS preflight).
    headers = {"Origin": "https://evil.example"}
    if content_type:
        headers["Content-Type"] = content_type
    async with service.session.post(
        service.base + "/api/v1/data/shorten",
        data=data,
        headers=headers,
        skip_auto_headers=["Content-Type"],
    ) as resp:
        assert resp.status == 415
        assert (await resp.json())["problem"] == "media-type"
    assert await service.app.store.count() == 0


async def test_json_with_a_charset_is_accepted(service):
    status, _, _ = await post(
        service,
        {"longUrl": "https://example.com/utf8"},
        **{"Content-Type": "Application/JSON; charset=utf-8"},
    )
    assert status == 201


# -- the safety checks of a real deployment -----------------------------------------------------


@pytest.mark.parametrize(
    "long_url",
    [
        "https://example.com/a\r\nSet-Cookie: x=1",
        "https://example.com/a\nb",
        "https://example.com/\x00",
        "https://exa\tmple.com/",
        "https://example.com/\x7f",
    ],
)
async def test_crlf_and_control_characters_are_refused(service, long_url):
    status, body, _ = await post(service, {"longUrl": long_url})
    assert (status, body["problem"]) == (400, "control")


async def test_homoglyph_hosts_are_shown_in_punycode(service):
    # Cyrillic "а" (U+0430) in place of the Latin "a": shown as what it is.
    status, made, _ = await post(service, {"longUrl": "https://\u0430pple.com/login"})
    assert status == 201
    assert made["longUrl"] == "https://xn--pple-43d.com/login"
    status, stats, _ = await get_json(service, f"/api/v1/{made['code']}/stats")
    assert stats["longUrl"] == "https://xn--pple-43d.com/login"
    assert (await service.get("/" + made["code"])).headers["Location"] == made["longUrl"]


async def test_a_body_over_the_limit_is_refused_before_it_is_read(service):
    reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
    writer.write(
        b"POST /api/v1/data/shorten HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100000000\r\n\r\n{"
    )
    await writer.drain()
    status_line = await asyncio.wait_for(reader.readline(), 10)  # no 100 MB were sent
    writer.close()
    assert status_line.split()[1] == b"413"


@pytest.mark.parametrize(
    "path",
    [
        "//evil.example/",
        "/%2F%2Fevil.example",
        "/\\evil.example",
        "/?next=https://evil.example/",
        "/api/v1//evil.example",
        "/https://evil.example",
    ],
)
async def test_no_open_redirect_through_the_page_or_paths(service, path):
    async with service.session.get(service.base + path, allow_redirects=False) as resp:
        assert resp.status not in (301, 302, 303, 307, 308), path
        assert "Location" not in resp.headers


async def test_no_stored_url_is_rendered_as_html(service):
    hostile = 'https://example.com/"><script>alert(1)</script>'
    status, made, _ = await post(service, {"longUrl": hostile, "maxVisits": 1})
    assert status == 201
    assert "<script>" not in made["longUrl"]
    assert (await service.get("/" + made["code"])).status == 302
    async with service.session.get(service.base + "/" + made["code"]) as resp:
        page = await resp.text()
    assert resp.status == 410
    assert "example.com" not in page  # the ended page names no target at all
    async with service.session.get(service.base + "/" + made["code"] + "/qr") as resp:
        svg = await resp.text()
    assert "example.com" not in svg  # the QR code holds the short URL only
