"""Every URL of the truth file answers as the truth says, from a real HTTP client.

This is the strongest check of every personality at once: a status per spelling, and
byte-identical bodies for all spellings of one resource — but different bodies for
different resources — so payload hashes are an exact witness of duplication.
"""

import asyncio
import collections

import pytest

from testweb_fixture import LoopbackClient

# Misbehaving resources whose delivery is checked on its own in test_testweb_hostile.py.
SKIP = ("/slow/", "/reset/", "/big/", "/bomb.html")


async def fetch_all(urls):
    async with LoopbackClient() as client:
        sem = asyncio.Semaphore(16)

        async def one(url):
            async with sem:
                return await client.get(url)

        return await asyncio.gather(*(one(u) for u in urls))


@pytest.mark.parametrize("profile", ["dirty", "hostile", "clean"])
async def test_every_truth_url_answers_as_the_truth_says(testweb_factory, profile):
    web = testweb_factory(profile=profile, sites=7, pages_per_site=16)
    rows = [r for r in web.truth() if not any(s in r.url for s in SKIP)]
    assert len(rows) > 100
    fetched = await fetch_all([r.url for r in rows])
    bodies = collections.defaultdict(set)
    for row, got in zip(rows, fetched, strict=True):
        assert got.status == row.status, row
        if row.status == 200 and row.rid != "-":  # robots.txt, soft 404s: no resource
            bodies[row.rid].add(got.body)
        if 300 <= row.status < 400:
            assert got.headers["Location"], row
    # aliases of one resource: byte-identical
    for rid, variants in bodies.items():
        assert len(variants) == 1, rid
    # different resources: different bodies
    owner = {}
    for rid, (body,) in bodies.items():
        assert owner.setdefault(body, rid) == rid, (rid, owner[body])
    if profile == "clean":
        # clean: every spelling is canonical — one URL per resource, no redirects or 404s
        assert all(r.status == 200 for r in rows)
        assert len({r.rid for r in rows}) == len(rows)
        assert web.stats()["duplicate_fetches"] == 0
    else:
        assert web.stats()["duplicate_fetches"] > 0


async def test_urls_first_served_are_appended_to_the_truth(testweb_factory):
    web = testweb_factory(profile="dirty", sites=7, pages_per_site=16)
    php = next(r for r in web.truth() if "item.php?id=" in r.url and r.status == 200)
    new = php.url + "&PHPSESSID=feedfacecafe0001"
    assert new not in {r.url for r in web.truth()}
    async with LoopbackClient() as client:
        got = await client.get(new)
        canonical = await client.get(php.url)
    assert got.status == 200
    assert got.body == canonical.body
    rows = {r.url: r for r in web.truth()}
    assert rows[new].rid == php.rid
    assert rows[new].status == 200
