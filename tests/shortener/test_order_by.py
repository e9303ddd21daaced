"""orderBy (Shlink's spelling, FIELD-ASC|DESC) on the link list: the same order on SQLite and
PostgreSQL for every field of the allow-list, stable pages, and a 400 naming the fields for
anything else."""

import pytest

from dustless.shortener import ShortenerConfig, create_app, open_store
from shortener.helpers import get_json, make_key, post

pytestmark = pytest.mark.slow


@pytest.fixture(params=["sqlite", "postgresql"])
def any_db(request, db_url):
    if request.param == "sqlite":
        return db_url
    return request.getfixturevalue("pg_db")


# (slug, long URL, title, clicks), made in this order, a second apart. Upper case sorts
# before lower case byte by byte on both databases, whatever PostgreSQL's collation.
_LINKS = [
    ("b-link", "https://example.com/c", "Beta", 2),
    ("A-link", "https://example.com/a", None, 0),
    ("c-link", "https://example.com/B", "alpha", 5),
    ("a-link", "https://example.com/b", "Alpha", 1),
]


async def test_order_by_each_field_both_ways(any_db, run_app):
    store = await open_store(any_db)
    try:
        key = await make_key(store, "alice")
    finally:
        await store.close()
    app = create_app(ShortenerConfig(db=any_db, base_url="https://sho.rt", rate_limit=0))
    clock = [1_800_000_000.0]
    app.now = lambda: clock[0]
    async with run_app(app) as srv:
        for slug, url, title, clicks in _LINKS:
            body = {"longUrl": url, "customSlug": slug}
            if title is not None:
                body["title"] = title
            status, _, _ = await post(srv, body, key)
            assert status == 201
            for _ in range(clicks):
                assert (await srv.get("/" + slug)).status == 302
            clock[0] += 1
        await app.clicks.flush()

        async def order(value, **extra):
            query = "&".join(f"{k}={v}" for k, v in {"orderBy": value, **extra}.items())
            status, page, _ = await get_json(srv, "/api/v1/links?" + query, key)
            assert status == 200, page
            assert page["orderBy"] == value
            return [item["code"] for item in page["links"]]

        made = [slug for slug, *_ in _LINKS]
        assert await order("dateCreated-ASC") == made
        assert await order("dateCreated-DESC") == made[::-1]
        assert await order("shortCode-ASC") == ["A-link", "a-link", "b-link", "c-link"]
        assert await order("shortCode-DESC") == ["c-link", "b-link", "a-link", "A-link"]
        assert await order("longUrl-ASC") == ["c-link", "A-link", "a-link", "b-link"]
        assert await order("title-ASC") == ["a-link", "b-link", "c-link", "A-link"]
        assert await order("title-DESC") == ["c-link", "b-link", "a-link", "A-link"]
        assert await order("visits-DESC") == ["c-link", "b-link", "a-link", "A-link"]
        assert await order("visits-ASC") == ["A-link", "a-link", "b-link", "c-link"]
        # Pages of an order never overlap: ties fall back to the link's id.
        pages = [await order("title-ASC", pageSize=1, page=n) for n in (1, 2, 3, 4)]
        assert [code for p in pages for code in p] == ["a-link", "b-link", "c-link", "A-link"]
        # No orderBy: newest first, as before.
        _, page, _ = await get_json(srv, "/api/v1/links", key)
        assert [item["code"] for item in page["links"]] == made[::-1]
        assert page["orderBy"] is None

        for bad in ("visits", "visits-UP", "id-ASC", "created_at-DESC", "-ASC", "title-ASC;--"):
            status, body, _ = await get_json(srv, "/api/v1/links?orderBy=" + bad, key)
            assert (status, body["problem"]) == (400, "order-by"), bad
            assert "dateCreated, shortCode, longUrl, title, visits" in body["error"]
