"""The connection goes where the policy allowed; a caller's own connection pool still works."""

import asyncio

from aiohttp import web

from dustless.fetch import AddressPolicy, Fetcher, FetchLimits, HttpPool, NetState, Resolver

FAST = FetchLimits(stall_timeout=0.3, connect_timeout=0.3, total_timeout=5.0)


async def test_dns_rebinding_is_refused_at_connect(raw_server, make_fetcher):
    async def handler(reader, writer, release):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()

    server = await raw_server(handler)
    answers = iter(["93.184.216.34", "127.0.0.1", "127.0.0.1"])

    async def rebinding(host):
        return [next(answers)]

    # ttl=0: every resolve looks up again, so the check and the connection each ask DNS.
    fetcher = make_fetcher(FAST, resolver=Resolver(lookup=rebinding, ttl=0.0))
    result = await fetcher.fetch(server.url("/", host="rebind.example"))
    assert result.state is NetState.filtered
    assert "private" in result.error
    assert server.requests == []


async def test_a_callers_pool_is_used_and_left_open(web_server, raw_server):
    async def page(request):
        return web.Response(text="<p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    port = await web_server(app)

    async def silent(reader, writer, release):
        await release.wait()

    quiet = await raw_server(silent)
    pool = HttpPool(limit=4)
    try:
        fetcher = Fetcher(Resolver(), FAST, AddressPolicy(trusted_hosts=["127.0.0.1"]), pool)
        ok = await fetcher.fetch(f"http://127.0.0.1:{port}/")
        assert ok.state is NetState.OK
        assert ok.body == b"<p>"
        stalled = await fetcher.fetch(quiet.url("/"))
        assert stalled.state is NetState.hTim
        # The policy is still applied before any connection.
        assert (await fetcher.fetch("http://10.0.0.1/")).state is NetState.filtered
        await fetcher.close()
        assert not pool.closed
        again = await Fetcher(
            Resolver(), FAST, AddressPolicy(trusted_hosts=["127.0.0.1"]), pool
        ).fetch(f"http://127.0.0.1:{port}/")
        assert again.body == b"<p>"
    finally:
        await pool.close()


async def test_fetcher_as_context_manager_closes_its_pool(web_server):
    async def page(request):
        return web.Response(text="x", content_type="text/plain")

    app = web.Application()
    app.router.add_get("/", page)
    port = await web_server(app)
    async with Fetcher(Resolver({"*.test": "127.0.0.1"}), FAST, AddressPolicy()) as fetcher:
        result = await fetcher.fetch(f"http://a.test:{port}/")
        assert result.state is NetState.code
        assert result.mime == "text/plain"
    assert fetcher.closed


async def test_a_full_pool_makes_room_and_a_waiting_fetch_goes_on(web_server):
    async def page(request):
        await asyncio.sleep(0.05)  # long enough for the fetches below to overlap
        return web.Response(text=request.host.split(":")[0], content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    port = await web_server(app)
    pool = HttpPool(limit=1)
    fetcher = Fetcher(Resolver({"*.test": "127.0.0.1"}), FAST, AddressPolicy(), pool)
    try:
        # One connection in all: the second host's fetch waits for the first to end, then
        # closes its idle connection to open its own; a third reuses nothing and still goes.
        results = await asyncio.wait_for(
            asyncio.gather(*(fetcher.fetch(f"http://h{i}.test:{port}/") for i in range(3))), 5
        )
        assert [r.body for r in results] == [b"h0.test", b"h1.test", b"h2.test"]
        assert all(r.state is NetState.OK for r in results)
        assert len(pool._open) <= 1
    finally:
        await pool.close()
