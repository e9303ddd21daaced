"""Tags (Shlink's): set on create and by PATCH, filter the link list, list a key's tags — on
SQLite and PostgreSQL; and a version 2 database (no tags) opens, migrated, its links intact."""

import sqlite3

import psycopg
import pytest

from dustless.shortener import create_app, open_store
from dustless.shortener._store import SCHEMA_VERSION
from shortener.helpers import get_json, make_key, post

pytestmark = pytest.mark.slow


@pytest.fixture(params=["sqlite", "postgresql"])
def any_db(request, db_url):
    if request.param == "sqlite":
        return db_url
    return request.getfixturevalue("pg_db")


async def _patch(srv, code, body, key):
    async with srv.session.patch(
        f"{srv.base}/api/v1/links/{code}", json=body, headers={"Authorization": f"Bearer {key}"}
    ) as resp:
        return resp.status, await resp.json()


async def test_tags_set_filter_list_and_patch(any_db, run_app):
    from dustless.shortener import ShortenerConfig

    store = await open_store(any_db)
    try:
        alice = await make_key(store, "alice")
        bob = await make_key(store, "bob")
    finally:
        await store.close()
    config = ShortenerConfig(db=any_db, base_url="https://sho.rt", rate_limit=0)
    async with run_app(create_app(config)) as srv:
        status, a, _ = await post(
            srv, {"longUrl": "https://example.com/a", "tags": ["news", " 2026 ", "news"]}, alice
        )
        assert status == 201
        assert a["tags"] == ["2026", "news"]
        _, b, _ = await post(srv, {"longUrl": "https://example.com/b", "tags": ["news"]}, alice)
        await post(srv, {"longUrl": "https://example.com/c"}, alice)
        await post(srv, {"longUrl": "https://example.com/d", "tags": ["news", "bob"]}, bob)
        # The same URL again: the existing link, with its tags.
        status, again, _ = await post(srv, {"longUrl": "https://example.com/a"}, alice)
        assert (status, again["tags"]) == (200, ["2026", "news"])

        _, page, _ = await get_json(srv, "/api/v1/links?tag=news", alice)
        assert page["total"] == 2
        assert {item["code"] for item in page["links"]} == {a["code"], b["code"]}
        assert {tuple(item["tags"]) for item in page["links"]} == {("2026", "news"), ("news",)}
        _, page, _ = await get_json(srv, "/api/v1/links?tag=bob", alice)
        assert page["total"] == 0  # another key's tag shows none of its links
        _, tags, _ = await get_json(srv, "/api/v1/tags", alice)
        assert tags == {"tags": [{"tag": "2026", "links": 1}, {"tag": "news", "links": 2}]}

        status, edited = await _patch(srv, b["code"], {"tags": ["later"]}, alice)
        assert (status, edited["tags"]) == (200, ["later"])
        _, page, _ = await get_json(srv, "/api/v1/links?tag=news", alice)
        assert [item["code"] for item in page["links"]] == [a["code"]]
        _, stats, _ = await get_json(srv, f"/api/v1/{b['code']}/stats", alice)
        assert stats["tags"] == ["later"]

        for bad in ("news", [""], [1], ["x" * 65], ["a\nb"], [str(i) for i in range(33)]):
            status, body, _ = await post(
                srv, {"longUrl": "https://example.com/x", "tags": bad}, alice
            )
            assert (status, body["problem"]) == (400, "tags"), bad
        status, _ = await _patch(srv, a["code"], {"tags": "news"}, alice)
        assert status == 400
        status, _, _ = await get_json(srv, "/api/v1/tags")
        assert status == 401


# The version 2 schema as the previous release made it (no link_tags).
_V2_LINKS = """CREATE TABLE links (
    id {id} PRIMARY KEY, code TEXT NOT NULL UNIQUE, long_url TEXT NOT NULL,
    url_key TEXT NOT NULL, redirect INTEGER NOT NULL, created_at {real} NOT NULL,
    expires_at {real}, is_alias {flag} NOT NULL DEFAULT {false}, shared {flag} NOT NULL
    DEFAULT {false}, owner INTEGER NOT NULL DEFAULT 0, max_visits INTEGER,
    visits INTEGER NOT NULL DEFAULT 0)"""
_V2_REST = (
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE clicks (link_id BIGINT NOT NULL, day TEXT NOT NULL, referrer_host TEXT NOT"
    " NULL, ua_family TEXT NOT NULL, n BIGINT NOT NULL,"
    " PRIMARY KEY (link_id, day, referrer_host, ua_family))",
    "CREATE TABLE api_keys (id {serial} PRIMARY KEY, name TEXT NOT NULL UNIQUE, key_hash TEXT"
    " NOT NULL UNIQUE, admin {flag} NOT NULL DEFAULT {false}, created_at {real} NOT NULL,"
    " revoked_at {real})",
    "INSERT INTO meta VALUES ('schema_version', '2')",
    "INSERT INTO meta VALUES ('code_key', '" + "ab" * 32 + "')",
    "INSERT INTO links (id, code, long_url, url_key, redirect, created_at)"
    " VALUES (1, 'old-link', 'https://example.com/old', 'https://example.com/old', 302, 1.0)",
)


async def test_a_version_2_database_opens_migrated(any_db):
    if any_db.startswith("sqlite"):
        words = {"id": "INTEGER", "real": "REAL", "flag": "INTEGER", "false": "0",
                 "serial": "INTEGER"}  # fmt: skip
        conn = sqlite3.connect(any_db.removeprefix("sqlite:///"))
        for statement in (_V2_LINKS, *_V2_REST):
            conn.execute(statement.format(**words))
        conn.commit()
        conn.close()
    else:
        words = {"id": "BIGINT", "real": "DOUBLE PRECISION", "flag": "BOOLEAN",
                 "false": "FALSE", "serial": "BIGSERIAL"}  # fmt: skip
        with psycopg.connect(any_db, autocommit=True) as conn:
            conn.execute("CREATE SEQUENCE shortener_link_ids START 2")
            for statement in (_V2_LINKS, *_V2_REST):
                conn.execute(statement.format(**words))
    store = await open_store(any_db)
    try:
        link = await store.get("old-link")
        assert link is not None
        assert link.long_url == "https://example.com/old"
        await store.set_tags(link.id, ["kept"])
        assert await store.tags_of([link.id]) == {link.id: ("kept",)}
        page = await store.list_links(None, "", 0, 10, "2026-01-01", "kept")
        assert [x.code for x in page.links] == ["old-link"]
    finally:
        await store.close()
    if any_db.startswith("sqlite"):
        conn = sqlite3.connect(any_db.removeprefix("sqlite:///"))
        version = conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()
        conn.close()
    else:
        with psycopg.connect(any_db) as conn:
            version = conn.execute(
                "SELECT value FROM meta WHERE name = 'schema_version'"
            ).fetchone()
    assert version == (str(SCHEMA_VERSION),)
