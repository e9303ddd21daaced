"""Moving a deployment: ``export`` (JSON Lines) then ``import`` into the other database keeps
every key (as stored), link, owner, code, limit, end and click count — SQLite → PostgreSQL
and back — and a refused file writes nothing."""

import asyncio
import json
import math
import sqlite3

import pytest

from dustless.cli.main import main
from dustless.shortener import NewLink, Redirect, create_app, open_store
from dustless.shortener._dump import VERSION
from dustless.shortener._model import ClickKey
from shortener.helpers import get_json, make_key

pytestmark = pytest.mark.slow

T0 = 1_700_000_000.25


async def cli(capsys, *args):
    code = await asyncio.to_thread(main, ["shortener", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _new(url, owner=0, **kw):
    return NewLink(url, url, kw.pop("redirect", Redirect.FOUND), T0, owner=owner, **kw)


async def _fill(db):
    """Two authors, an admin, a revoked key; their links, an anonymous one, ends, limits,
    clicks. Returns the plaintext keys (which only the test knows)."""
    store = await open_store(db)
    try:
        alice = await make_key(store, "alice")
        bob = await make_key(store, "bob")
        await make_key(store, "ops", admin=True)
        gone = await make_key(store, "gone")
        await store.revoke_key("gone", T0 + 5)
        keys = {k.name: k.id for k in await store.list_keys()}
        a1 = (await store.create(_new("https://example.com/a1", keys["alice"]))).link
        await store.create(_new("https://example.com/a2", keys["alice"], alias="alices-slug"))
        await store.create(_new("https://example.com/a1", keys["bob"]))  # same URL, other owner
        await store.create(_new("https://example.com/anon"))
        await store.create(_new("https://example.com/ends", keys["bob"], expires_at=T0 + 3600.5))
        limited = (
            await store.create(_new("https://example.com/lim", keys["bob"], max_visits=3))
        ).link
        await store.take_visit(limited.id)
        await store.take_visit(limited.id)
        await store.set_tags(a1.id, ["news", "2026"])
        await store.set_tags(limited.id, ["limited"])
        await store.create(_new("https://example.com/ended", keys["bob"], expires_at=T0 + 1))
        await store.add_clicks(
            {
                ClickKey(a1.id, "2026-01-01", "", "Chrome"): 3,
                ClickKey(a1.id, "2026-01-02", "news.example", "curl"): 2,
                ClickKey(limited.id, "2026-01-02", "", "Firefox"): 2,
            }
        )
    finally:
        await store.close()
    return {"alice": alice, "bob": bob, "gone": gone}


def _records(text):
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["format"] == "dustless-shortener"
    assert lines[0]["version"] == VERSION
    return lines[1:]


async def test_sqlite_to_postgresql_and_back_keeps_everything(
    capsys, tmp_path, db_url, pg_db, run_app
):
    plain = await _fill(db_url)
    # A link that ended at -inf (stored before values were checked) must stay ended.
    conn = sqlite3.connect(db_url.removeprefix("sqlite:///"))
    conn.execute("UPDATE links SET expires_at = ? WHERE code = 'alices-slug'", (-math.inf,))
    conn.commit()
    conn.close()

    first = tmp_path / "from-sqlite.jsonl"
    code, _, err = await cli(capsys, "export", "--db", db_url, "-o", str(first))
    assert code == 0, err
    assert "exported 7 links and 4 keys" in err
    records = _records(first.read_text())
    assert not any(plain["alice"] in line for line in first.read_text().splitlines())
    links = {r["code"]: r for r in records if r["type"] == "link"}
    assert links["alices-slug"]["validUntil"] == "-inf"
    assert links["alices-slug"]["owner"] == "alice"
    assert sum(n for r in links.values() for *_, n in r["clicks"]) == 7
    assert sorted(tuple(r["tags"]) for r in links.values() if r["tags"]) == [
        ("2026", "news"),
        ("limited",),
    ]

    code, _, err = await cli(capsys, "import", str(first), "--db", pg_db)
    assert code == 0, err
    assert "imported 7 links (0 already present), 4 keys (0 already present), 7 clicks" in err

    # The authors see their links on the new database, with their clicks and statuses.
    async with run_app(create_app(_config(pg_db))) as srv:
        status, page, _ = await get_json(srv, "/api/v1/links", plain["alice"])
        assert status == 200
        mine = {item["code"]: item for item in page["links"]}
        assert len(mine) == 2
        assert mine["alices-slug"]["status"] == "expired"
        a1 = next(c for c in mine if c != "alices-slug")
        assert mine[a1]["clicks"] == 5
        assert mine[a1]["potentialBotClicks"] == 2
        assert mine[a1]["tags"] == ["2026", "news"]
        _, page, _ = await get_json(srv, "/api/v1/links?tag=limited", plain["bob"])
        assert [item["longUrl"] for item in page["links"]] == ["https://example.com/lim"]
        status, page, _ = await get_json(srv, "/api/v1/links", plain["bob"])
        by_url = {item["longUrl"]: item for item in page["links"]}
        assert by_url["https://example.com/lim"]["visits"] == 2
        assert by_url["https://example.com/lim"]["maxVisits"] == 3
        assert by_url["https://example.com/ends"]["validUntil"] == "2023-11-14T23:13:20.750000Z"
        assert (await srv.get("/" + by_url["https://example.com/ended"]["code"])).status == 410
        # The revoked key stays revoked.
        status, _, _ = await get_json(srv, "/api/v1/links", plain["gone"])
        assert status == 401

    second = tmp_path / "from-postgresql.jsonl"
    code, _, err = await cli(capsys, "export", "--db", pg_db, "-o", str(second))
    assert code == 0, err
    back = f"sqlite:///{tmp_path / 'back.db'}"
    code, _, err = await cli(capsys, "import", str(second), "--db", back)
    assert code == 0, err
    third = tmp_path / "back.jsonl"
    code, _, err = await cli(capsys, "export", "--db", back, "-o", str(third))
    assert code == 0, err
    # Every record is the same after two moves: keys with their hashes and dates, links with
    # owners, codes, times to the last bit, limits, visits and clicks.
    assert _records(third.read_text()) == records == _records(second.read_text())

    # Importing again adds nothing, on either database.
    for db, path in ((pg_db, first), (back, second)):
        code, _, err = await cli(capsys, "import", str(path), "--db", db)
        assert code == 0, err
        assert "imported 0 links (7 already present), 0 keys (4 already present), 0 clicks" in err


def _config(db):
    from dustless.shortener import ShortenerConfig

    return ShortenerConfig(db=db, base_url="https://sho.rt", rate_limit=0)


@pytest.mark.parametrize("target", ["sqlite", "postgresql"])
async def test_a_conflicting_file_is_refused_and_writes_nothing(
    capsys, tmp_path, db_url, pg_db, target
):
    await _fill(db_url)
    path = tmp_path / "dump.jsonl"
    assert (await cli(capsys, "export", "--db", db_url, "-o", str(path)))[0] == 0
    other = pg_db if target == "postgresql" else f"sqlite:///{tmp_path / 'other.db'}"
    store = await open_store(other)
    try:
        await store.create(_new("https://example.org/elsewhere", alias="alices-slug"))
    finally:
        await store.close()
    code, _, err = await cli(capsys, "import", str(path), "--db", other)
    assert code == 2
    assert "code 'alices-slug' already links to 'https://example.org/elsewhere'" in err
    assert "nothing was imported" in err
    store = await open_store(other)
    try:
        assert await store.count() == 1
        assert await store.list_keys() == []
        await make_key(store, "alice")  # the same name, another key
        await store.create(_new("https://example.org/x"))
    finally:
        await store.close()
    text = path.read_text().replace('"alices-slug"', '"alices-other"')
    path.write_text(text)
    code, _, err = await cli(capsys, "import", str(path), "--db", other)
    assert code == 2
    assert "a key named 'alice' exists in the target database with another hash" in err
    store = await open_store(other)
    try:
        assert await store.count() == 2
        assert [k.name for k in await store.list_keys()] == ["alice"]
    finally:
        await store.close()


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"format": "other", "version": 1}'], ":1: not a dustless-shortener export"),
        (['{"format": "dustless-shortener", "version": 99}'], ":1: export format version 99"),
        (
            ['{"format": "dustless-shortener", "version": 1}', "{not json"],
            ":2: not JSON",
        ),
        (
            [
                '{"format": "dustless-shortener", "version": 1}',
                '{"type": "link", "code": "abcdefg", "longUrl": "javascript:alert(1)",'
                ' "redirect": 302, "createdAt": 1, "validUntil": null, "customSlug": false,'
                ' "owner": null, "maxVisits": null, "visits": 0, "clicks": []}',
            ],
            ":2: ",
        ),
        (
            [
                '{"format": "dustless-shortener", "version": 1}',
                '{"type": "link", "code": "abcdefg", "longUrl": "https://example.com/",'
                ' "redirect": 302, "createdAt": 1, "validUntil": "soon", "customSlug": false,'
                ' "owner": null, "maxVisits": null, "visits": 0, "clicks": []}',
            ],
            ":2: 'validUntil' is 'soon'",
        ),
        (
            [
                '{"format": "dustless-shortener", "version": 1}',
                '{"type": "link", "code": "abcdefg", "longUrl": "https://example.com/",'
                ' "redirect": 302, "createdAt": 1, "validUntil": null, "customSlug": false,'
                ' "owner": "nobody", "maxVisits": null, "visits": 0, "clicks": []}',
            ],
            ":2: owner 'nobody' is no key of this file",
        ),
    ],
)
async def test_a_bad_line_is_named_and_nothing_is_imported(
    capsys, tmp_path, db_url, lines, message
):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, _, err = await cli(capsys, "import", str(path), "--db", db_url)
    assert code == 2
    assert err.count("\n") == 1
    assert f"{path}{message}" in err
    store = await open_store(db_url)
    try:
        assert await store.count() == 0
    finally:
        await store.close()


async def test_the_older_csv_export_keeps_a_link_ended_at_minus_inf_ended(capsys, tmp_path, db_url):
    await _fill(db_url)
    conn = sqlite3.connect(db_url.removeprefix("sqlite:///"))
    conn.execute("UPDATE links SET expires_at = ? WHERE code = 'alices-slug'", (-math.inf,))
    conn.commit()
    conn.close()
    path = tmp_path / "links.csv"
    code, _, err = await cli(capsys, "export", "--format", "csv", "--db", db_url, "-o", str(path))
    assert code == 0, err
    other = f"sqlite:///{tmp_path / 'other.db'}"
    assert (await cli(capsys, "import", str(path), "--db", other))[0] == 0
    code, out, _ = await cli(capsys, "stats", "alices-slug", "--db", other, "--json")
    assert json.loads(out)["status"] == "expired"
