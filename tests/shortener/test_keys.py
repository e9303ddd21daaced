"""Who may create and see links: API keys, per-key visibility, public mode, the link list."""

import asyncio
import hashlib
import time
from pathlib import Path

from dustless.cli.main import main
from dustless.shortener import ShortenerConfig, create_app, open_store
from shortener.helpers import bearer, get_json, make_key, open_config, post


async def cli(*args: str) -> int:
    """``dustless shortener ARGS`` (it runs its own event loop: in a thread)."""
    return await asyncio.to_thread(main, ["shortener", *args])


def keyed_config(db_url: str, **settings: object) -> ShortenerConfig:
    return ShortenerConfig(db=db_url, rate_limit=0, **settings)  # type: ignore[arg-type]


async def test_without_a_key_create_is_401_when_keys_are_required(db_url, run_app):
    async with run_app(create_app(keyed_config(db_url))) as srv:
        status, body, headers = await post(srv, {"longUrl": "https://example.com/x"})
        assert (status, body["problem"]) == (401, "unauthorized")
        assert headers["WWW-Authenticate"].startswith("Bearer")
        assert await srv.app.store.count() == 0
        status, info, _ = await get_json(srv, "/api/v1/info")
        assert info["keysRequired"] is True
        key = await make_key(srv.app.store, "alice")
        # Both headers name a key: Authorization: Bearer (RFC 6750) and X-Api-Key (Shlink's).
        assert (await post(srv, {"longUrl": "https://example.com/x"}, key))[0] == 201
        status, _, _ = await post(srv, {"longUrl": "https://example.com/y"}, **{"X-Api-Key": key})
        assert status == 201
        for bad in ("dls_wrong", "", "Basic abc"):
            headers = {"Authorization": bad if bad.startswith("Basic") else f"Bearer {bad}"}
            assert (await post(srv, {"longUrl": "https://example.com/z"}, **headers))[0] == 401


async def test_with_key_a_key_bs_links_are_invisible(db_url, run_app):
    async with run_app(create_app(keyed_config(db_url))) as srv:
        store = srv.app.store
        alice, bob = await make_key(store, "alice"), await make_key(store, "bob")
        admin = await make_key(store, "ops", admin=True)
        _, a_link, _ = await post(srv, {"longUrl": "https://example.com/alice"}, alice)
        _, b_link, _ = await post(srv, {"longUrl": "https://example.com/bob"}, bob)
        # list
        _, listed, _ = await get_json(srv, "/api/v1/links", alice)
        assert [item["code"] for item in listed["links"]] == [a_link["code"]]
        assert listed["total"] == 1
        _, listed, _ = await get_json(srv, "/api/v1/links?search=bob", alice)
        assert listed["total"] == 0
        _, everything, _ = await get_json(srv, "/api/v1/links", admin)
        assert {item["code"] for item in everything["links"]} == {a_link["code"], b_link["code"]}
        assert (await get_json(srv, "/api/v1/links"))[0] == 401
        # stats
        assert (await get_json(srv, f"/api/v1/{b_link['code']}/stats", alice))[0] == 404
        assert (await get_json(srv, f"/api/v1/{b_link['code']}/stats", bob))[0] == 200
        # edit
        async with srv.session.patch(
            f"{srv.base}/api/v1/links/{b_link['code']}",
            json={"maxVisits": 1},
            headers=bearer(alice),
        ) as resp:
            assert resp.status == 404
        assert (await srv.get("/" + b_link["code"])).status == 302  # unchanged
        async with srv.session.patch(
            f"{srv.base}/api/v1/links/{b_link['code']}",
            json={"validUntil": time.time() - 10},
            headers=bearer(bob),
        ) as resp:
            assert resp.status == 400  # an end in the past is refused, for the owner too
        async with srv.session.patch(
            f"{srv.base}/api/v1/links/{b_link['code']}", json={"maxVisits": 1}, headers=bearer(bob)
        ) as resp:
            assert resp.status == 200
            assert (await resp.json())["maxVisits"] == 1
        assert (await srv.get("/" + b_link["code"])).status == 302
        assert (await srv.get("/" + b_link["code"])).status == 410
        async with srv.session.patch(
            f"{srv.base}/api/v1/links/{a_link['code']}",
            json={"maxVisits": 5},
            headers=bearer(admin),
        ) as resp:
            assert resp.status == 200


async def test_a_revoked_key_stops_working(db_url, run_app, capsys):
    code = await cli("key", "create", "carol", "--db", db_url)
    out, err = capsys.readouterr()
    assert code == 0
    key = out.strip()
    assert key.startswith("dls_")
    assert "only time it is shown" in err
    # Only the hash is stored: the key itself is nowhere in the database file.
    store = await open_store(db_url)
    try:
        found = await store.key_for_hash(hashlib.sha256(key.encode()).hexdigest())
        assert found is not None
        assert found.name == "carol"
    finally:
        await store.close()
    raw = b"".join(p.read_bytes() for p in Path(db_url[10:]).parent.glob("links.db*"))
    assert key.encode() not in raw
    async with run_app(create_app(keyed_config(db_url))) as srv:
        clock = [time.time()]
        srv.app.now = lambda: clock[0]
        assert (await post(srv, {"longUrl": "https://example.com/c"}, key))[0] == 201
        assert await cli("key", "revoke", "carol", "--db", db_url) == 0
        clock[0] += 6  # past the few seconds a worker remembers a checked key
        assert (await post(srv, {"longUrl": "https://example.com/d"}, key))[0] == 401
    assert await cli("key", "list", "--db", db_url) == 0
    listing = capsys.readouterr().out
    assert "carol\tauthor" in listing
    assert key not in listing
    assert await cli("key", "revoke", "nobody", "--db", db_url) == 2
    assert await cli("key", "create", "carol", "--db", db_url) == 2  # name taken
    assert await cli("key", "create", "bad name!", "--db", db_url) == 2


async def test_public_mode_creates_without_a_key_but_limits_harder(db_url, run_app):
    config = ShortenerConfig(db=db_url, public=True, rate_limit=1.0, burst=100)
    async with run_app(create_app(config)) as srv:
        clock = [1000.0]
        srv.app.now = lambda: clock[0]
        key = await make_key(srv.app.store, "team")
        anonymous = [(await post(srv, {"longUrl": f"https://e.com/a/{i}"}))[0] for i in range(11)]
        assert anonymous == [201] * 10 + [429]  # a burst of 10, a tenth of the keyed rate
        status, _, headers = await post(srv, {"longUrl": "https://e.com/a/x"})
        assert status == 429
        assert headers["Retry-After"] == "10"
        keyed = [(await post(srv, {"longUrl": f"https://e.com/k/{i}"}, key))[0] for i in range(30)]
        assert keyed == [201] * 30
        _, info, _ = await get_json(srv, "/api/v1/info")
        assert info["keysRequired"] is False


async def test_the_link_list_pages_searches_and_counts(db_url, run_app):
    async with run_app(create_app(keyed_config(db_url))) as srv:
        key = await make_key(srv.app.store, "dana")
        codes = []
        for i in range(25):
            _, made, _ = await post(srv, {"longUrl": f"https://example.com/list/{i:02d}"}, key)
            codes.append(made["code"])
        await post(srv, {"longUrl": "https://other.example/100%25_done"}, key)
        for agent in ("Mozilla/5.0 Firefox/120.0", "Slackbot-LinkExpanding 1.0", "curl/8"):
            await srv.get("/" + codes[-1], headers={"User-Agent": agent})
        await srv.app.clicks.flush()
        status, first, _ = await get_json(srv, "/api/v1/links?page=1&pageSize=10", key)
        assert status == 200
        assert (first["total"], first["pages"], len(first["links"])) == (26, 3, 10)
        newest = first["links"][1]  # newest first: the other.example link, then list/24
        assert newest["code"] == codes[-1]
        assert (newest["clicks"], newest["humanClicks"], newest["potentialBotClicks"]) == (3, 1, 2)
        today = time.strftime("%Y-%m-%d", time.gmtime())
        assert newest["daily"] == [{"day": today, "humanClicks": 1, "potentialBotClicks": 2}]
        _, last, _ = await get_json(srv, "/api/v1/links?page=3&pageSize=10", key)
        assert len(last["links"]) == 6
        _, found, _ = await get_json(srv, "/api/v1/links?search=list/0", key)
        assert found["total"] == 10
        # LIKE's wildcards are searched for as themselves.
        _, found, _ = await get_json(srv, "/api/v1/links?search=100%2525_", key)
        assert [item["longUrl"] for item in found["links"]] == ["https://other.example/100%25_done"]
        _, found, _ = await get_json(srv, "/api/v1/links?search=%25", key)
        assert found["total"] == 1
        _, found, _ = await get_json(srv, "/api/v1/links?search=_", key)
        assert found["total"] == 1
        assert (await get_json(srv, "/api/v1/links?page=0", key))[0] == 400
        assert (await get_json(srv, "/api/v1/links?pageSize=1000", key))[0] == 400


async def test_health_and_info_describe_the_service(db_url, run_app):
    async with run_app(create_app(open_config(db=db_url))) as srv:
        status, health, _ = await get_json(srv, "/healthz")
        assert (status, health["ok"]) == (200, True)
        _, info, _ = await get_json(srv, "/api/v1/info")
        assert info == {
            "keysRequired": False,
            "publicStats": True,
            "shortPrefix": info["shortPrefix"],
        }
