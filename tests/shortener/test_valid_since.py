"""validSince (Shlink's): before it a link answers as an unknown code (404), after it as usual;
set on create, by PATCH and by ``add --valid-since``; carried by export and import with the
link's title; a version 3 database (no validSince, no title) opens migrated on both stores."""

import json
import sqlite3

import psycopg
import pytest

from dustless.cli.main import main
from dustless.shortener import ShortenerConfig, create_app, open_store
from dustless.shortener._dump import VERSION
from dustless.shortener._store import SCHEMA_VERSION
from shortener.helpers import get_json, make_key, post

pytestmark = pytest.mark.slow

T0 = 1_800_000_000.0  # 2027-01-15T08:00:00Z
SINCE = "2027-02-01T00:00:00Z"
SINCE_TS = 1_801_440_000.0


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


async def test_not_found_before_valid_since_then_redirects(any_db, run_app):
    store = await open_store(any_db)
    try:
        alice = await make_key(store, "alice")
    finally:
        await store.close()
    config = ShortenerConfig(db=any_db, base_url="https://sho.rt", rate_limit=0)
    app = create_app(config)
    clock = [T0]
    app.now = lambda: clock[0]
    async with run_app(app) as srv:
        status, link, _ = await post(
            srv,
            {"longUrl": "https://example.com/launch", "validSince": SINCE, "title": " Launch "},
            alice,
        )
        assert status == 201
        assert (link["validSince"], link["title"], link["status"]) == (
            SINCE,
            "Launch",
            "not-yet-valid",
        )
        code = link["code"]
        # Before it: exactly what an unknown code gets, as a page and as JSON.
        resp = await srv.get("/" + code)
        assert (resp.status, resp.headers.get("location")) == (404, None)
        status, body, _ = await get_json(srv, "/api/v1/" + code)
        assert (status, body["problem"]) == (404, "not-found")
        # A plain request for the same URL is not handed the link that does not work yet.
        status, plain, _ = await post(srv, {"longUrl": "https://example.com/launch"}, alice)
        assert status == 201
        assert plain["code"] != code
        # Its owner still sees it, with its start.
        _, stats, _ = await get_json(srv, f"/api/v1/{code}/stats", alice)
        assert (stats["validSince"], stats["status"], stats["clicks"]) == (
            SINCE,
            "not-yet-valid",
            0,
        )
        # From validSince on (the cached entry is read with the new clock): a redirect.
        clock[0] = SINCE_TS
        resp = await srv.get("/" + code)
        assert (resp.status, resp.headers["location"]) == (302, "https://example.com/launch")

        # PATCH: a start in the future again, then cleared.
        status, edited = await _patch(srv, code, {"validSince": SINCE_TS + 3600}, alice)
        assert (status, edited["status"]) == (200, "not-yet-valid")
        assert (await srv.get("/" + code)).status == 404
        status, edited = await _patch(srv, code, {"validSince": None, "title": None}, alice)
        assert (status, edited["validSince"], edited["title"]) == (200, None, None)
        assert (await srv.get("/" + code)).status == 302

        # A start at or after the end, or no time at all, is refused.
        for bad in (
            {"validSince": "2027-03-01T00:00:00Z", "validUntil": "2027-02-15T00:00:00Z"},
            {"validSince": "tomorrow"},
            {"validSince": True},
            {"validSince": float("1e300")},
            {"title": 5},
            {"title": "a\nb"},
        ):
            status, body, _ = await post(srv, {"longUrl": "https://example.com/x", **bad}, alice)
            assert status == 400, bad
            assert body["problem"] in ("valid-since", "title"), body
        status, body = await _patch(srv, code, {"validUntil": SINCE_TS + 10}, alice)
        assert status == 200
        status, body = await _patch(srv, code, {"validSince": SINCE_TS + 10}, alice)
        assert (status, body["problem"]) == (400, "valid-since")


def _cli(capsys, *args):
    code = main(["shortener", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_add_valid_since_and_title_then_export_and_import_keep_them(capsys, tmp_path, db_url):
    shown = json.loads(
        _cli(
            capsys,
            "add",
            "https://example.com/later",
            "--db",
            db_url,
            "--valid-since",
            "2099-01-01T00:00:00Z",
            "--title",
            "Later",
            "--json",
        )
    )
    assert (shown["validSince"], shown["title"], shown["status"]) == (
        "2099-01-01T00:00:00Z",
        "Later",
        "not-yet-valid",
    )
    main(["shortener", "add", "https://example.com/x", "--db", db_url, "--valid-since", "soon"])
    assert "--valid-since is not a date-time" in capsys.readouterr().err

    dump = tmp_path / "out.jsonl"
    _cli(capsys, "export", "--db", db_url, "-o", str(dump))
    header, record = (json.loads(line) for line in dump.read_text().splitlines())
    assert header["version"] == VERSION == 2
    assert (record["validSince"], record["title"]) == (4_070_908_800.0, "Later")
    other = f"sqlite:///{tmp_path / 'other.db'}"
    _cli(capsys, "import", "--db", other, str(dump))
    moved = json.loads(_cli(capsys, "stats", shown["code"], "--db", other, "--json"))
    assert (moved["validSince"], moved["title"]) == ("2099-01-01T00:00:00Z", "Later")

    # A version 1 file (before validSince and titles) still imports.
    old = tmp_path / "v1.jsonl"
    header["version"] = 1
    del record["validSince"], record["title"]
    record["code"] = "from-v1"
    record["customSlug"] = True
    record["clicks"] = [["2026-01-01", "", "Chrome", 3]]  # version 1: no operating system
    old.write_text(json.dumps(header) + "\n" + json.dumps(record) + "\n")
    _cli(capsys, "import", "--db", other, str(old))
    moved = json.loads(_cli(capsys, "stats", "from-v1", "--db", other, "--json"))
    assert (moved["validSince"], moved["title"], moved["status"]) == (None, None, "active")
    assert moved["operatingSystems"] == [{"key": "(unknown)", "clicks": 3}]


# The version 3 schema as the previous release made it (no valid_since, no title).
_V3 = (
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE links (
    id {id} PRIMARY KEY, code TEXT NOT NULL UNIQUE, long_url TEXT NOT NULL,
    url_key TEXT NOT NULL, redirect INTEGER NOT NULL, created_at {real} NOT NULL,
    expires_at {real}, is_alias {flag} NOT NULL DEFAULT {false}, shared {flag} NOT NULL
    DEFAULT {false}, owner INTEGER NOT NULL DEFAULT 0, max_visits INTEGER,
    visits INTEGER NOT NULL DEFAULT 0)""",
    "CREATE TABLE clicks (link_id BIGINT NOT NULL, day TEXT NOT NULL, referrer_host TEXT NOT"
    " NULL, ua_family TEXT NOT NULL, n BIGINT NOT NULL,"
    " PRIMARY KEY (link_id, day, referrer_host, ua_family))",
    "CREATE TABLE api_keys (id {serial} PRIMARY KEY, name TEXT NOT NULL UNIQUE, key_hash TEXT"
    " NOT NULL UNIQUE, admin {flag} NOT NULL DEFAULT {false}, created_at {real} NOT NULL,"
    " revoked_at {real})",
    "CREATE TABLE link_tags (link_id BIGINT NOT NULL, tag TEXT NOT NULL,"
    " PRIMARY KEY (link_id, tag))",
    "INSERT INTO meta VALUES ('schema_version', '3')",
    "INSERT INTO meta VALUES ('code_key', '" + "ab" * 32 + "')",
    "INSERT INTO links (id, code, long_url, url_key, redirect, created_at, shared)"
    " VALUES (1, 'old-link', 'https://example.com/old', 'https://example.com/old', 302, 1.0,"
    " {true})",
    "INSERT INTO link_tags VALUES (1, 'kept')",
    "INSERT INTO clicks VALUES (1, '2026-01-01', '', 'Firefox', 5)",
)
_WORDS = {
    "sqlite": {"id": "INTEGER", "real": "REAL", "flag": "INTEGER", "false": "0", "true": "1",
               "serial": "INTEGER"},
    "postgresql": {"id": "BIGINT", "real": "DOUBLE PRECISION", "flag": "BOOLEAN",
                   "false": "FALSE", "true": "TRUE", "serial": "BIGSERIAL"},
}  # fmt: skip


def _schema_version(db):
    if db.startswith("sqlite"):
        conn = sqlite3.connect(db.removeprefix("sqlite:///"))
        try:
            return conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()
        finally:
            conn.close()
    with psycopg.connect(db) as conn:
        return conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()


async def test_a_version_3_database_opens_migrated(any_db):
    kind = "sqlite" if any_db.startswith("sqlite") else "postgresql"
    statements = [s.format(**_WORDS[kind]) for s in _V3]
    if kind == "sqlite":
        conn = sqlite3.connect(any_db.removeprefix("sqlite:///"))
        for statement in statements:
            conn.execute(statement)
        conn.commit()
        conn.close()
    else:
        with psycopg.connect(any_db, autocommit=True) as conn:
            conn.execute("CREATE SEQUENCE shortener_link_ids START 2")
            for statement in statements:
                conn.execute(statement)
    store = await open_store(any_db)
    try:
        link = await store.get("old-link")
        assert link is not None
        assert (link.long_url, link.valid_since, link.title) == (
            "https://example.com/old",
            None,
            None,
        )
        assert await store.tags_of([link.id]) == {link.id: ("kept",)}
        stats = await store.stats(link)
        assert (stats.total, stats.operating_systems) == (5, (("(unknown)", 5),))
        updated = await store.update_link(link.id, None, None, SINCE_TS, "Old")
        assert updated is not None
        assert (updated.valid_since, updated.title) == (SINCE_TS, "Old")
    finally:
        await store.close()
    assert _schema_version(any_db) == (str(SCHEMA_VERSION),)
    # Opening it again changes nothing (the migration ran once).
    store = await open_store(any_db)
    try:
        again = await store.get("old-link")
        assert again is not None
        assert again.title == "Old"
    finally:
        await store.close()
