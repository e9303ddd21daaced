"""Counters at /__testweb/stats, /__testweb/reset, and simulated days."""

import asyncio
import json
import urllib.error
import urllib.request

import pytest

from dustless.testweb import change_count, changed_on, read_rates
from testweb_fixture import LoopbackClient

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


async def test_duplicates_resources_and_per_host_counters(testweb_factory):
    web = testweb_factory(profile="dirty", sites=7, pages_per_site=16)
    host = web.site("iis")
    leaf = next(r for r in web.truth() if r.url.startswith(web.base_url(host)) and ".asp" in r.url)
    async with LoopbackClient() as c:
        await c.get(leaf.url)
        await c.get(leaf.url)  # the same URL again
        await c.get(leaf.url.upper().replace("HTTP://", "http://").replace(host.upper(), host))
        await c.get(web.url(host, "/robots.txt"))  # not a resource
        await c.get(web.url(host, "/no-such-page"))  # a 404 is not a resource either
    stats = web.stats()
    assert stats["requests"] == 5
    assert stats["resources_fetched"] == 1
    assert stats["duplicate_fetches"] == 2
    assert stats["trap_hits"] == 0
    h = stats["hosts"][host]
    assert h["requests"] == 5
    assert h["max_concurrent"] == 1
    assert h["min_gap_s"] >= 0
    web.reset()
    assert web.stats() == {
        "requests": 0, "resources_fetched": 0, "duplicate_fetches": 0, "trap_hits": 0, "hosts": {}
    }  # fmt: skip


async def test_max_concurrent_and_min_gap(testweb_factory):
    web = testweb_factory(profile="hostile", sites=7, pages_per_site=12)
    host = next(iter(web.sites.values()))["hosts"][0]
    # Each answer waits 1.5 s, so the four requests overlap at the server however slowly
    # a loaded machine lets the client send them (0.3 s could end the first too soon).
    url = web.url(host, "/slow/first-byte.html?delay=1.5")
    async with LoopbackClient() as c:
        await asyncio.gather(*(c.get(url) for _ in range(4)))
    h = web.stats()["hosts"][host]
    assert h["max_concurrent"] == 4
    assert h["min_gap_s"] < 1.5


def day_bodies(web, urls):
    async def run():
        async with LoopbackClient() as c:
            return [(await c.get(u)).body for u in urls]

    return asyncio.run(run())


def first_change(rid: str, period: int, salt: int) -> int:
    """The first day > 0 on which the page's Poisson change process fires."""
    return next(d for d in range(1, 100 * period) if changed_on(rid, period, salt, d))


def test_change_process_is_poisson_at_the_page_rate():
    # Over many pages, the share of days with a change is 1 - exp(-1/period).
    import math

    period, days, pages = 4, 200, 50
    changes = sum(change_count(f"site1:/p{i}.html", period, 7, days) for i in range(pages))
    expected = pages * days * -math.expm1(-1 / period)
    assert abs(changes - expected) < 0.05 * expected
    assert change_count("site1:/static.html", 0, 0, days) == 0


def test_pages_change_only_when_the_day_advances_at_their_rates(testweb_factory):
    web = testweb_factory(profile="clean", sites=3, pages_per_site=20)
    rates = read_rates(web.truth_path)
    rows = {r.rid: r.url for r in web.truth()}
    changing = [(rid, p, ph) for rid, (p, ph) in rates.items() if p > 1]
    static = [rid for rid, (p, _) in rates.items() if p == 0]
    assert changing
    assert static
    rid, period, salt = changing[0]
    change_day = first_change(rid, period, salt)
    urls = [rows[rid], rows[static[0]]]
    before = day_bodies(web, urls)
    assert day_bodies(web, urls) == before  # no change without a new day
    web.set_day(change_day - 1)
    assert day_bodies(web, urls) == before
    web.set_day(change_day)
    after = day_bodies(web, urls)
    assert after[0] != before[0]  # a changing page changed on its day
    assert after[1] == before[1]  # a static page never does
    web.set_day(0)
    assert day_bodies(web, urls) == before  # a day is a pure function of the page


def test_day_endpoint_and_start_day(testweb_factory):
    web = testweb_factory(profile="clean", sites=3, pages_per_site=20, day=7)
    assert web.day() == 7
    for what, code in (("day?set=-1", 400), ("day?set=x", 400), ("nope", 404)):
        with pytest.raises(urllib.error.HTTPError) as exc:
            OPENER.open(f"{web.control_url}/{what}", timeout=10)
        assert exc.value.code == code
        exc.value.close()
    assert web.day() == 7


def test_control_endpoints_answer_on_any_host(testweb_factory):
    web = testweb_factory(profile="clean", sites=3, pages_per_site=20)
    req = urllib.request.Request(web.control_url + "/day", headers={"Host": "site2.test"})
    with OPENER.open(req, timeout=10) as resp:
        assert json.loads(resp.read()) == {"day": 0}


async def test_etag_revalidation_follows_the_page_version(testweb_factory):
    web = testweb_factory(profile="clean", sites=3, pages_per_site=20)
    rates = read_rates(web.truth_path)
    rows = {r.rid: r.url for r in web.truth()}
    rid, (period, salt) = next((rid, pp) for rid, pp in rates.items() if pp[0] > 1)
    async with LoopbackClient() as c:
        first = await c.get(rows[rid])
        etag = first.headers["ETag"]
        again = await c.get(rows[rid], headers={"If-None-Match": etag})
        assert again.status == 304
        assert again.body == b""
        web.set_day(first_change(rid, period, salt))
        changed = await c.get(rows[rid], headers={"If-None-Match": etag})
    assert changed.status == 200
    assert changed.headers["ETag"] != etag
