"""The PostgreSQL schema of the shortener, and its migrations from versions 1, 2 and 3 (every
statement is idempotent: an older database gets what it lacks, a new one everything)."""

from __future__ import annotations

import secrets

import psycopg

from dustless.errors import StoreError

from ._store import SCHEMA_VERSION

__all__ = ["init_schema"]

_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE SEQUENCE IF NOT EXISTS shortener_link_ids",
    """CREATE TABLE IF NOT EXISTS links (
        id BIGINT PRIMARY KEY,
        code TEXT NOT NULL UNIQUE,
        long_url TEXT NOT NULL,
        url_key TEXT NOT NULL,
        redirect SMALLINT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        expires_at DOUBLE PRECISION,
        is_alias BOOLEAN NOT NULL DEFAULT FALSE,
        shared BOOLEAN NOT NULL DEFAULT FALSE)""",
    # Version 2's columns: added to a version 1 table here, and to a new one alike.
    "ALTER TABLE links ADD COLUMN IF NOT EXISTS owner BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE links ADD COLUMN IF NOT EXISTS max_visits BIGINT",
    "ALTER TABLE links ADD COLUMN IF NOT EXISTS visits BIGINT NOT NULL DEFAULT 0",
    # Version 4: a link's start (validSince) and title.
    "ALTER TABLE links ADD COLUMN IF NOT EXISTS valid_since DOUBLE PRECISION",
    "ALTER TABLE links ADD COLUMN IF NOT EXISTS title TEXT",
    "DROP INDEX IF EXISTS links_same_url",
    "CREATE UNIQUE INDEX IF NOT EXISTS links_same_owner_url"
    " ON links (owner, url_key, redirect) WHERE shared",
    "CREATE INDEX IF NOT EXISTS links_by_owner ON links (owner, id)",
    """CREATE TABLE IF NOT EXISTS clicks (
        link_id BIGINT NOT NULL,
        day TEXT NOT NULL,
        referrer_host TEXT NOT NULL,
        ua_family TEXT NOT NULL,
        os_family TEXT NOT NULL,
        n BIGINT NOT NULL,
        PRIMARY KEY (link_id, day, referrer_host, ua_family, os_family))""",
    # Version 4: the operating system family, part of the key; old clicks "(unknown)".
    "ALTER TABLE clicks ADD COLUMN IF NOT EXISTS os_family TEXT NOT NULL DEFAULT '(unknown)'",
    """CREATE TABLE IF NOT EXISTS api_keys (
        id BIGSERIAL PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        key_hash TEXT NOT NULL UNIQUE,
        admin BOOLEAN NOT NULL DEFAULT FALSE,
        created_at DOUBLE PRECISION NOT NULL,
        revoked_at DOUBLE PRECISION)""",
    # Version 3: tags.
    """CREATE TABLE IF NOT EXISTS link_tags (
        link_id BIGINT NOT NULL,
        tag TEXT NOT NULL,
        PRIMARY KEY (link_id, tag))""",
    "CREATE INDEX IF NOT EXISTS link_tags_by_tag ON link_tags (tag, link_id)",
    # UNLOGGED: no WAL for a value that changes on every create; a crash empties the table,
    # which only gives every client a full bucket again.
    """CREATE UNLOGGED TABLE IF NOT EXISTS rate_buckets (
        name TEXT PRIMARY KEY,
        tokens DOUBLE PRECISION NOT NULL,
        updated DOUBLE PRECISION NOT NULL,
        granted BOOLEAN NOT NULL DEFAULT TRUE)""",
)
_SCHEMA_LOCK = 0x5D0C7  # advisory lock id: serialises schema creation across processes


async def init_schema(conn: psycopg.AsyncConnection) -> bytes:
    """Create or migrate the schema under an advisory lock; the code key."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        row = None
        if await _has_meta(conn):
            cur = await conn.execute("SELECT value FROM meta WHERE name = 'schema_version'")
            row = await cur.fetchone()
        if row is not None and int(row[0]) > SCHEMA_VERSION:
            raise StoreError(f"database schema {row[0]} is newer than this dustless")
        for statement in _TABLES:
            await conn.execute(statement)
        if row is not None and int(row[0]) < 4:
            # The key of a version 3 table lacks os_family (a new table has it already).
            await conn.execute(
                "ALTER TABLE clicks DROP CONSTRAINT clicks_pkey,"
                " ADD PRIMARY KEY (link_id, day, referrer_host, ua_family, os_family)"
            )
        await conn.execute(
            "INSERT INTO meta (name, value) VALUES ('code_key', %s) ON CONFLICT DO NOTHING",
            (secrets.token_hex(32),),
        )
        await conn.execute(
            "INSERT INTO meta (name, value) VALUES ('schema_version', %s)"
            " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (str(SCHEMA_VERSION),),
        )
        cur = await conn.execute("SELECT value FROM meta WHERE name = 'code_key'")
        key = await cur.fetchone()
    assert key is not None
    return bytes.fromhex(str(key[0]))


async def _has_meta(conn: psycopg.AsyncConnection) -> bool:
    cur = await conn.execute("SELECT to_regclass('meta') IS NOT NULL")
    row = await cur.fetchone()
    return bool(row and row[0])
