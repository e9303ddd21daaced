"""The service as users run it: ``dustless shortener serve`` subprocesses with 2 workers.

What must hold (docs/shortener.md): concurrent creates of the same long URL yield one code;
``kill -9`` under load loses no link whose 201 was sent; a restart serves every link.
"""

import asyncio
import contextlib

import aiohttp
import pytest

pytestmark = pytest.mark.slow


async def _post(session, base, long_url):
    async with session.post(base + "/api/v1/data/shorten", json={"longUrl": long_url}) as resp:
        return resp.status, await resp.json()


async def test_concurrent_creates_of_the_same_long_url_yield_one_code(db_url, servers):
    server = servers(db_url, "--public", "--rate-limit", "0", workers=2)
    spellings = [
        "https://example.com/same/page?id=1",
        "HTTPS://EXAMPLE.COM/same/page?id=1",
        "https://example.com:443/same/./page?id=1",
        "https://example.com/same/x/../page?id=%31",
    ]
    # Separate sessions: separate connections, spread over both worker processes.
    sessions = [aiohttp.ClientSession() for _ in range(40)]
    try:
        results = await asyncio.gather(
            *(_post(s, server.base, spellings[i % len(spellings)]) for i, s in enumerate(sessions))
        )
    finally:
        await asyncio.gather(*(s.close() for s in sessions))
    statuses = sorted(status for status, _ in results)
    codes = {body["code"] for _, body in results}
    assert len(codes) == 1, codes
    assert statuses.count(201) == 1
    assert statuses.count(200) == 39


async def test_kill_9_under_load_loses_no_acknowledged_link(db_url, servers):
    server = servers(db_url, "--public", "--rate-limit", "0", workers=2)
    acknowledged: dict[str, str] = {}
    enough = asyncio.Event()

    async def creator(n: int) -> None:
        async with aiohttp.ClientSession() as session:
            i = 0
            while True:
                url = f"https://example.com/load/{n}/{i}"
                i += 1
                try:
                    status, body = await _post(session, server.base, url)
                except (TimeoutError, aiohttp.ClientError):
                    return  # the server is gone
                if status == 201:
                    acknowledged[body["code"]] = body["longUrl"]
                    if len(acknowledged) >= 150:
                        enough.set()

    tasks = [asyncio.create_task(creator(n)) for n in range(12)]
    await asyncio.wait_for(enough.wait(), 60)
    # Requests are in flight right now: kill supervisor and workers without any warning.
    server.kill_all()
    await asyncio.wait_for(asyncio.gather(*tasks), 30)
    assert len(acknowledged) >= 150

    restarted = servers(db_url, "--public", "--rate-limit", "0", workers=2)
    async with aiohttp.ClientSession() as session:
        lost = []
        for code, long_url in acknowledged.items():
            async with session.get(restarted.base + "/" + code, allow_redirects=False) as resp:
                if resp.status != 302 or resp.headers.get("Location") != long_url:
                    lost.append((code, resp.status))
        assert lost == []
        # The service keeps working on the same database after the crash.
        status, body = await _post(session, restarted.base, "https://example.com/after-crash")
        assert status == 201
        assert body["code"] not in acknowledged


async def test_a_restart_serves_every_link_and_keeps_the_code_key(db_url, servers):
    first = servers(db_url, "--public", "--rate-limit", "0")
    async with aiohttp.ClientSession() as session:
        made = [await _post(session, first.base, f"https://example.org/{i}") for i in range(20)]
    first.stop()
    second = servers(db_url, "--public", "--rate-limit", "0")
    async with aiohttp.ClientSession() as session:
        for status, body in made:
            assert status == 201
            async with session.get(second.base + "/" + body["code"], allow_redirects=False) as r:
                assert r.headers["Location"] == body["longUrl"]
        # Same key after restart: re-posting gives the same code (200), not a new one.
        status, again = await _post(session, second.base, "https://example.org/0")
        assert (status, again["code"]) == (200, made[0][1]["code"])


async def test_clicks_reach_the_database_in_batches(db_url, servers):
    server = servers(db_url, "--public", "--rate-limit", "0")
    async with aiohttp.ClientSession() as session:
        _, body = await _post(session, server.base, "https://example.org/clicked")
        for _ in range(5):
            async with session.get(server.base + "/" + body["code"], allow_redirects=False):
                pass
    # A clean stop writes the last batch (lifespan shutdown).
    server.stop()
    from dustless.shortener import open_store

    store = await open_store(db_url)
    try:
        link = await store.get(body["code"])
        assert link is not None
        stats = await store.stats(link)
    finally:
        await store.close()
    assert stats.total == 5
    with contextlib.suppress(Exception):
        server.kill_all()
