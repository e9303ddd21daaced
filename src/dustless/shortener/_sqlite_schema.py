"""The SQLite schema of the shortener, and its migrations from versions 1, 2 and 3.

Version 1 had no owners, API keys or visit limits, and shared one link per long URL among
everyone; version 2 adds the columns (every old link belongs to no key, owner 0) and makes
the "same long URL" index per owner. Version 3 adds the ``link_tags`` table (old links have
no tags). Version 4 adds ``links.valid_since`` and ``links.title`` (old links: none) and
``clicks.os_family`` to the clicks' key (old clicks: ``(unknown)``).
"""

from __future__ import annotations

import secrets
import sqlite3

from dustless.errors import StoreError

from ._store import SCHEMA_VERSION

__all__ = ["init_schema"]

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS links (
    id INTEGER PRIMARY KEY,
    code TEXT NOT NULL UNIQUE,
    long_url TEXT NOT NULL,
    url_key TEXT NOT NULL,
    redirect INTEGER NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL,
    is_alias INTEGER NOT NULL DEFAULT 0,
    shared INTEGER NOT NULL DEFAULT 0,
    owner INTEGER NOT NULL DEFAULT 0,
    max_visits INTEGER,
    visits INTEGER NOT NULL DEFAULT 0,
    valid_since REAL,
    title TEXT
);
CREATE TABLE IF NOT EXISTS clicks (
    link_id INTEGER NOT NULL,
    day TEXT NOT NULL,
    referrer_host TEXT NOT NULL,
    ua_family TEXT NOT NULL,
    os_family TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (link_id, day, referrer_host, ua_family, os_family)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS api_keys (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    key_hash TEXT NOT NULL UNIQUE,
    admin INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    revoked_at REAL
);
CREATE TABLE IF NOT EXISTS link_tags (
    link_id INTEGER NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (link_id, tag)
) WITHOUT ROWID
"""

# Run after the migration: they name columns a version 1 table gets only then.
_INDEXES = """
CREATE UNIQUE INDEX IF NOT EXISTS links_same_owner_url
    ON links (owner, url_key, redirect) WHERE shared = 1;
CREATE INDEX IF NOT EXISTS links_by_owner ON links (owner, id);
CREATE INDEX IF NOT EXISTS link_tags_by_tag ON link_tags (tag, link_id)
"""

_FROM_1 = """
ALTER TABLE links ADD COLUMN owner INTEGER NOT NULL DEFAULT 0;
ALTER TABLE links ADD COLUMN max_visits INTEGER;
ALTER TABLE links ADD COLUMN visits INTEGER NOT NULL DEFAULT 0;
DROP INDEX IF EXISTS links_same_url
"""

# A primary key cannot be altered in SQLite: the clicks move to a table with the new key, the
# operating system of every old click "(unknown)" (it was never recorded).
_FROM_3 = """
ALTER TABLE links ADD COLUMN valid_since REAL;
ALTER TABLE links ADD COLUMN title TEXT;
CREATE TABLE clicks_4 (
    link_id INTEGER NOT NULL,
    day TEXT NOT NULL,
    referrer_host TEXT NOT NULL,
    ua_family TEXT NOT NULL,
    os_family TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (link_id, day, referrer_host, ua_family, os_family)
) WITHOUT ROWID;
INSERT INTO clicks_4 SELECT link_id, day, referrer_host, ua_family, '(unknown)', n FROM clicks;
DROP TABLE clicks;
ALTER TABLE clicks_4 RENAME TO clicks
"""


def _run(conn: sqlite3.Connection, script: str) -> None:
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def init_schema(conn: sqlite3.Connection) -> bytes:
    """Create or migrate the tables (any number of processes may race here); the code key."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        fresh = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'links'").fetchone() is None
        _run(conn, _TABLES)
        conn.execute(
            "INSERT OR IGNORE INTO meta (name, value) VALUES ('code_key', ?)",
            (secrets.token_hex(32),),
        )
        conn.execute(
            "INSERT OR IGNORE INTO meta (name, value) VALUES ('schema_version', ?)",
            (str(SCHEMA_VERSION if fresh else 1),),
        )
        key_hex = conn.execute("SELECT value FROM meta WHERE name = 'code_key'").fetchone()[0]
        version = int(
            conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()[0]
        )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"database schema {version} is newer than this dustless ({SCHEMA_VERSION})"
            )
        if version == 1:
            _run(conn, _FROM_1)
        # Version 3's table was made by _TABLES above.
        if version < 4:
            _run(conn, _FROM_3)
        if version < SCHEMA_VERSION:
            conn.execute(
                "UPDATE meta SET value = ? WHERE name = 'schema_version'", (str(SCHEMA_VERSION),)
            )
        _run(conn, _INDEXES)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return bytes.fromhex(key_hex)
