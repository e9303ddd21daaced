"""The PostgreSQL backend, on a throwaway server started by the tests (initdb + pg_ctl)."""

import asyncio
import subprocess
import sys

import aiohttp
import pytest

import support
from dustless.shortener import AliasTaken, NewLink, Redirect, create_app, open_store
from dustless.shortener._model import ClickKey
from shortener.helpers import open_config

pytestmark = pytest.mark.slow


def _new(url, **kw):
    return NewLink(url, url, kw.pop("redirect", Redirect.FOUND), 1_700_000_000.0, **kw)


async def test_store_creates_reads_dedups_and_counts(pg_db):
    store = await open_store(pg_db)
    try:
        first = await store.create(_new("https://example.com/a"))
        assert first.created
        again = await store.create(_new("https://example.com/a"))
        assert (again.created, again.link.code) == (False, first.link.code)
        other = await store.create(_new("https://example.com/a", redirect=Redirect(301)))
        assert other.created
        assert other.link.code != first.link.code
        alias = await store.create(_new("https://example.com/b", alias="pg-alias"))
        assert alias.link.code == "pg-alias"
        with pytest.raises(AliasTaken):
            await store.create(_new("https://example.com/c", alias="pg-alias"))
        assert (await store.get(first.link.code)) == first.link
        assert await store.get("nothere") is None
        assert store.codec.decode(first.link.code) == first.link.id
        await store.add_clicks({ClickKey(first.link.id, "2026-01-01", "", "curl"): 2})
        await store.add_clicks({ClickKey(first.link.id, "2026-01-01", "", "curl"): 3})
        stats = await store.stats(first.link)
        assert stats.total == 5
        assert stats.user_agents == (("curl", 5),)
        assert await store.count() == 3
    finally:
        await store.close()


async def test_concurrent_creates_across_connections_yield_one_link(pg_db):
    # Three stores = three "servers", 4 connections each: the database settles the race.
    stores = [await open_store(pg_db) for _ in range(3)]
    try:
        results = await asyncio.gather(
            *(stores[i % 3].create(_new("https://example.com/race")) for i in range(30))
        )
        codes = {r.link.code for r in results}
        assert len(codes) == 1
        assert sum(r.created for r in results) == 1
        # The code key was made once; every store agrees on it.
        assert len({s.codec.encode(12345) for s in stores}) == 1
    finally:
        for store in stores:
            await store.close()


async def test_the_service_on_postgresql(pg_db, run_app):
    config = open_config(db=pg_db, rate_limit=0, base_url="https://sho.rt")
    async with run_app(create_app(config)) as srv:
        status, body = await srv.shorten("https://example.com/pg")
        assert status == 201
        resp = await srv.get("/" + body["code"], headers={"User-Agent": "curl/8"})
        assert resp.headers["Location"] == "https://example.com/pg"
        await srv.app.clicks.flush()
        async with srv.session.get(f"{srv.base}/api/v1/{body['code']}/stats") as r:
            assert (await r.json())["clicks"] == 1
    # Restart: the link is still there.
    async with run_app(create_app(config)) as srv:
        assert (await srv.get("/" + body["code"])).status == 302


async def test_two_workers_on_postgresql_give_one_code_for_one_url(pg_db, servers):
    server = servers(pg_db, "--public", "--rate-limit", "0", workers=2)
    sessions = [aiohttp.ClientSession() for _ in range(20)]

    async def post(session):
        async with session.post(
            server.base + "/api/v1/data", json={"longUrl": "https://example.com/pg-race"}
        ) as resp:
            return resp.status, (await resp.json())["code"]

    try:
        results = await asyncio.gather(*(post(s) for s in sessions))
    finally:
        await asyncio.gather(*(s.close() for s in sessions))
    assert len({code for _, code in results}) == 1
    assert sorted(status for status, _ in results).count(201) == 1


def test_migration_from_sqlite_to_postgresql_keeps_every_code(tmp_path, pg_db):
    sqlite_db = f"sqlite:///{tmp_path / 'old.db'}"

    def dustless(*args, stdin=None):
        return subprocess.run(
            [sys.executable, "-m", "dustless", "shortener", *args],
            capture_output=True,
            text=True,
            input=stdin,
            check=False,
        )

    codes = {}
    for i in range(5):
        url = f"https://example.com/m/{i}"
        proc = dustless("add", url, "--db", sqlite_db)
        assert proc.returncode == 0, proc.stderr
        codes[proc.stdout.strip().rsplit("/", 1)[1]] = url
    proc = dustless("add", "https://example.com/alias", "--alias", "moved", "--db", sqlite_db)
    codes["moved"] = "https://example.com/alias"
    exported = dustless("export", "--db", sqlite_db)
    assert exported.returncode == 0, exported.stderr
    imported = dustless("import", "-", "--db", pg_db, stdin=exported.stdout)
    assert imported.returncode == 0, imported.stderr
    assert "imported 6 links" in imported.stderr

    async def check():
        store = await open_store(pg_db)
        try:
            for code, url in codes.items():
                link = await store.get(code)
                assert link is not None
                assert link.long_url == url
            # New links on the new database never take an imported code.
            made = [await store.create(_new(f"https://example.net/{i}")) for i in range(20)]
            assert not {m.link.code for m in made} & set(codes)
        finally:
            await store.close()

    asyncio.run(check())
    again = dustless("import", "-", "--db", pg_db, stdin=exported.stdout)
    assert "imported 0 links (6 already present)" in again.stderr


async def test_the_service_recovers_after_a_database_restart(postgres, pg_db, run_app):
    config = open_config(db=pg_db, rate_limit=0, base_url="https://sho.rt")
    async with run_app(create_app(config)) as srv:
        status, made = await srv.shorten("https://example.com/before-restart")
        assert status == 201
        async with srv.session.get(srv.base + "/healthz") as resp:
            assert (resp.status, (await resp.json())["ok"]) == (200, True)
        postgres.stop()
        try:
            # /healthz asks the database: down is 503, not {"ok": true}.
            async with srv.session.get(srv.base + "/healthz") as resp:
                assert resp.status == 503
                assert (await resp.json())["ok"] is False
            assert (await srv.shorten("https://example.com/while-down"))[0] == 503
        finally:
            postgres.start()
        # Every pooled connection was cut by the restart: each is noticed when taken, and a
        # new one made then, so the first request after the restart is served.
        async with srv.session.get(srv.base + "/healthz") as resp:
            assert resp.status == 200
        for i in range(8):  # more than the pool holds
            status, body = await srv.shorten(f"https://example.com/after-restart/{i}")
            assert status == 201, body
        srv.app.cache.forget(made["code"])  # an uncached redirect: a read from the database
        resp = await srv.get("/" + made["code"])
        assert (resp.status, resp.headers["Location"]) == (302, made["longUrl"])
        # A restart while idle, then an uncached redirect as the very first request.
        postgres.stop()
        postgres.start()
        srv.app.cache.forget(made["code"])
        assert (await srv.get("/" + made["code"])).status == 302


async def test_the_first_request_after_a_long_outage_is_served(postgres, pg_db, run_app):
    """An outage longer than a back-off: the first request once the database is back is
    served at once, not after a reconnect scheduled while the database was down."""
    config = open_config(db=pg_db, rate_limit=0, base_url="https://sho.rt")
    loop = asyncio.get_running_loop()
    async with run_app(create_app(config)) as srv:
        status, made = await srv.shorten("https://example.com/before-outage")
        assert status == 201
        postgres.stop()
        try:
            async with srv.session.get(srv.base + "/healthz") as resp:
                assert resp.status == 503
            # The outage itself, not a wait for something: 8 s is longer than the waits a
            # reconnecting pool with a doubling back-off (1, 2, 4, 8 s …) leaves between its
            # attempts, so that such a pool's next try would come seconds after the start.
            await asyncio.sleep(8)
            assert (await srv.shorten("https://example.com/while-down"))[0] == 503
        finally:
            postgres.start()  # returns once the server accepts connections (pg_ctl -w)
        started = loop.time()
        async with srv.session.get(srv.base + "/healthz") as resp:
            assert resp.status == 200
        status, body = await srv.shorten("https://example.com/after-outage")
        assert status == 201, body
        srv.app.cache.forget(made["code"])  # an uncached redirect: a read from the database
        assert (await srv.get("/" + made["code"])).status == 302
        # A connection on the loopback takes milliseconds; a pool still backing off, seconds.
        assert loop.time() - started < 4.0


async def test_the_pool_keeps_only_idle_connections_and_bounds_the_wait(pg_db):
    from dustless.errors import StoreError
    from dustless.shortener._pg_pool import ConnectionPool

    pool = ConnectionPool(pg_db, size=1, wait=0.2, connect_timeout=5)
    try:
        conn = await pool.getconn()
        with pytest.raises(StoreError, match=r"no connection within 0\.2 s"):
            await pool.getconn()  # the one connection is out
        await conn.execute("BEGIN")
        await pool.putconn(conn)  # left inside a transaction (a cancelled request): closed
        assert conn.closed
        again = await pool.getconn()
        assert again is not conn
        assert not again.closed
        await pool.putconn(again)
        assert await pool.getconn() is again  # an idle one is kept and taken again
        await pool.putconn(again)
    finally:
        await pool.close()
    assert again.closed
    with pytest.raises(StoreError, match="closed"):
        await pool.getconn()
    # Nothing listening: one line, and the slot is free again for the next request.
    with support.refused_port() as port:
        down = ConnectionPool(f"postgresql://postgres@127.0.0.1:{port}/x", 1, 0.2, 5)
        for _ in range(2):
            with pytest.raises(StoreError, match="Connection refused") as raised:
                await down.getconn()
            assert raised.value.__cause__ is None  # not retried as a broken pooled connection


def test_export_never_stops_at_a_bad_row_on_postgresql(pg_db):
    import psycopg

    async def fill():
        store = await open_store(pg_db)
        try:
            for i in range(5):
                await store.create(_new(f"https://example.com/x/{i}"))
        finally:
            await store.close()

    asyncio.run(fill())
    with psycopg.connect(pg_db, autocommit=True) as conn:
        # What a request could store before expiries were checked.
        conn.execute("UPDATE links SET expires_at = 'Infinity' WHERE long_url LIKE '%/1'")
        conn.execute("UPDATE links SET expires_at = 'NaN' WHERE long_url LIKE '%/2'")
        conn.execute("UPDATE links SET expires_at = 1e300 WHERE long_url LIKE '%/3'")
    proc = subprocess.run(
        [sys.executable, "-m", "dustless", "shortener", "export", "--format", "csv", "--db", pg_db],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    rows = proc.stdout.splitlines()
    assert len(rows) == 6  # the header and every link
    assert proc.stderr.count("warning:") == 3
    assert "exported 5 links" in proc.stderr


async def test_two_instances_share_links_limits_and_visit_counts(pg_db, run_app):
    from dustless.shortener import ShortenerConfig
    from shortener.helpers import make_key, post

    # A token every 1,000 s after a burst of 5: the bucket lives in PostgreSQL.
    config = ShortenerConfig(db=pg_db, rate_limit=0.001, burst=5, base_url="https://sho.rt")
    async with run_app(create_app(config)) as one, run_app(create_app(config)) as two:
        key = await make_key(one.app.store, "shared")
        statuses = []
        for i in range(3):  # a burst at one instance, then a burst at the other
            statuses.append((await post(one, {"longUrl": f"https://e.com/one/{i}"}, key))[0])
        for i in range(3):
            statuses.append((await post(two, {"longUrl": f"https://e.com/two/{i}"}, key))[0])
        assert statuses == [201] * 5 + [429]
        # A link made at one instance is served by the other at once.
        other = await make_key(one.app.store, "other")
        status, made, _ = await post(one, {"longUrl": "https://e.com/new", "maxVisits": 10}, other)
        assert status == 201
        assert (await two.get("/" + made["code"])).status == 302
        # Visit limits hold across instances: 64 concurrent clicks, 10 allowed (one used).
        clicks = [(one if i % 2 else two).get("/" + made["code"]) for i in range(64)]
        answers = [r.status for r in await asyncio.gather(*clicks)]
        assert (answers.count(302), answers.count(410)) == (9, 55)


async def test_10000_clicks_over_two_instances_count_10000(pg_db, servers):
    one = servers(pg_db, "--public", "--rate-limit", "0")
    two = servers(pg_db, "--public", "--rate-limit", "0")
    async with aiohttp.ClientSession() as session:
        async with session.post(
            one.base + "/api/v1/data", json={"longUrl": "https://example.com/popular"}
        ) as resp:
            code = (await resp.json())["code"]
        queue: asyncio.Queue[str] = asyncio.Queue()
        for i in range(10_000):
            queue.put_nowait((one if i % 2 else two).base + "/" + code)
        counted = {302: 0}

        async def clicker() -> None:
            while not queue.empty():
                url = queue.get_nowait()
                async with session.get(url, allow_redirects=False) as resp:
                    counted[resp.status] = counted.get(resp.status, 0) + 1

        await asyncio.gather(*(clicker() for _ in range(32)))
    assert counted == {302: 10_000}
    one.stop()  # a clean stop writes each instance's last click batch
    two.stop()
    store = await open_store(pg_db)
    try:
        link = await store.get(code)
        assert link is not None
        assert (await store.stats(link)).total == 10_000
    finally:
        await store.close()
