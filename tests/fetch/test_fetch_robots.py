"""robots.txt fetched by RFC 9309's rules: redirects, size cap, status classes."""

from aiohttp import web

from dustless.fetch import FetchLimits, NetState, fetch_robots
from dustless.robots import ROBOTS_MAX_BYTES, ROBOTS_MAX_REDIRECTS, RobotsCache, RobotsOutcome

LIMITS = FetchLimits(stall_timeout=0.5, connect_timeout=0.5, total_timeout=5)


async def serve(web_server, routes):
    app = web.Application()
    for path, handler in routes.items():
        app.router.add_get(path, handler)
    return await web_server(app)


async def test_parsed(web_server, make_fetcher):
    async def robots(request):
        return web.Response(text="User-agent: *\nDisallow: /private\nCrawl-delay: 3\n")

    port = await serve(web_server, {"/robots.txt": robots})
    fetched = await make_fetcher(LIMITS).fetch_robots(f"http://h.test:{port}/some/page")
    assert fetched.url == f"http://h.test:{port}/robots.txt"
    assert fetched.status == 200
    assert fetched.outcome is RobotsOutcome.PARSED
    assert not fetched.robots.allowed("dustless", "/private/x")
    assert fetched.robots.allowed("dustless", "/public")
    assert fetched.robots.crawl_delay("dustless") == 3.0
    assert len(fetched.results) == 1
    # The engine stores it in the cache with the same status and body.
    cache = RobotsCache()
    robots = cache.put(("http", "h.test", port), fetched.status, fetched.body, now=0.0)
    assert not robots.allowed("dustless", "/private")


async def test_status_classes(web_server, make_fetcher, refused_port):
    async def missing(request):
        raise web.HTTPNotFound

    async def broken(request):
        raise web.HTTPServiceUnavailable

    port404 = await serve(web_server, {"/robots.txt": missing})
    port503 = await serve(web_server, {"/robots.txt": broken})
    fetcher = make_fetcher(LIMITS)
    not_found = await fetcher.fetch_robots(f"http://h.test:{port404}/")
    assert not_found.robots.allowed("dustless", "/anything")
    unavailable = await fetcher.fetch_robots(f"http://h.test:{port503}/")
    assert not unavailable.robots.allowed("dustless", "/anything")
    assert unavailable.outcome is RobotsOutcome.UNREACHABLE
    unreachable = await fetcher.fetch_robots(f"http://h.test:{refused_port}/")
    assert unreachable.status is None
    assert unreachable.results[0].state is NetState.cErr
    assert not unreachable.robots.allowed("dustless", "/anything")


async def test_redirects_followed_up_to_five(web_server, make_fetcher):
    async def hop(request):
        n = int(request.match_info["n"])
        if n == 0:
            return web.Response(text="User-agent: *\nDisallow: /x\n")
        raise web.HTTPFound(location=f"/hop/{n - 1}")

    def start(chain):
        async def handler(request):
            raise web.HTTPMovedPermanently(location=f"/hop/{chain}")

        return handler

    for chain, parsed in ((ROBOTS_MAX_REDIRECTS - 1, True), (ROBOTS_MAX_REDIRECTS + 3, False)):
        app = web.Application()
        app.router.add_get("/robots.txt", start(chain))
        app.router.add_get("/hop/{n}", hop)
        port = await web_server(app)
        fetched = await make_fetcher(LIMITS).fetch_robots(f"http://h.test:{port}/")
        assert len(fetched.results) <= ROBOTS_MAX_REDIRECTS + 1
        if parsed:
            assert fetched.status == 200
            assert not fetched.robots.allowed("dustless", "/x")
        else:
            # Too many redirects: unavailable, so allowed (§2.3.1.2).
            assert 300 <= fetched.status < 400
            assert fetched.robots.allowed("dustless", "/x")
            assert len(fetched.results) == ROBOTS_MAX_REDIRECTS + 1


async def test_only_the_first_500_kib_are_read(web_server, make_fetcher):
    async def huge(request):
        body = b"User-agent: *\nDisallow: /early\n" + b"#" * ROBOTS_MAX_BYTES
        return web.Response(body=body + b"\nDisallow: /late\n", content_type="text/plain")

    port = await serve(web_server, {"/robots.txt": huge})
    fetched = await make_fetcher(LIMITS).fetch_robots(f"http://h.test:{port}/")
    assert fetched.results[0].state is NetState.tooBig
    assert fetched.status == 200
    assert len(fetched.body) == ROBOTS_MAX_BYTES
    assert not fetched.robots.allowed("dustless", "/early")
    assert fetched.robots.allowed("dustless", "/late")


async def test_pause_is_awaited_between_redirect_hops(web_server, make_fetcher):
    # The crawler rests the host between two hops (seed 004 §2): the hook sees every response
    # that redirected, in order, and nothing after the final answer.
    async def hop(request):
        n = int(request.match_info["n"])
        if n == 0:
            return web.Response(text="User-agent: *\nDisallow: /x\n")
        raise web.HTTPFound(location=f"/hop/{n - 1}")

    async def start(request):
        raise web.HTTPMovedPermanently(location="/hop/2")

    port = await serve(web_server, {"/robots.txt": start, "/hop/{n}": hop})
    paused = []

    async def pause(previous):
        paused.append((previous.url, previous.status))

    fetcher = make_fetcher(LIMITS)
    fetched = await fetch_robots(fetcher, f"http://h.test:{port}/", pause=pause)
    base = f"http://h.test:{port}"
    assert paused == [(f"{base}/robots.txt", 301), (f"{base}/hop/2", 302), (f"{base}/hop/1", 302)]
    assert fetched.status == 200
    assert len(fetched.results) == 4
