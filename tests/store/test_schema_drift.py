"""The crawl DB's two dialects cannot drift: a SQLite DB and a PostgreSQL one have the same
tables, columns (name, type by the map below, nullability, default, order), primary keys,
indexes (name, unique, columns, partial or not) and triggers — fresh, and at every schema
version reached one migration at a time from an empty DB (the oldest each store opens).
``_schema.py`` and ``_pg_schema.py`` write the DDL twice; this test is what keeps the two
one schema (issue 27, item 1)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from dustless.store import PostgresCrawlStore, SQLiteStore
from dustless.store._pg_schema import PG_MIGRATIONS, ROWID_COLUMNS
from dustless.store._schema import MIGRATIONS

# One name per kind of value; SQLite's declared type, PostgreSQL's ``data_type``. SQLite's
# INTEGER is 64-bit, so ``bigint`` and ``integer`` both stand for it (docstring of
# ``_pg_schema.py``).
TYPES = {
    "INTEGER": "integer",
    "integer": "integer",
    "bigint": "integer",
    "REAL": "real",
    "double precision": "real",
    "TEXT": "text",
    "text": "text",
    "BLOB": "blob",
    "bytea": "blob",
}

Schema = dict[str, dict[str, Any]]


def _default(value: str | None) -> str | None:
    # PostgreSQL spells a literal default with its type: '[]'::text; SQLite as written.
    return None if value is None else re.sub(r"::[a-z ]+$", "", value)


def sqlite_schema(db: SQLiteStore) -> Schema:
    out: Schema = {}
    tables = db.query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    )
    for (table,) in tables:
        info = db.query(f"PRAGMA table_info({table})")
        indexes = {}
        for _, name, unique, origin, partial in db.query(f"PRAGMA index_list({table})"):
            if origin == "c":  # written as CREATE INDEX (not a primary key's own)
                cols = [r[2] for r in sorted(db.query(f"PRAGMA index_info({name})"))]
                indexes[name] = (bool(unique), cols, bool(partial))
        out[table] = {
            # A key column counts as NOT NULL, as PostgreSQL makes it (SQLite would store a
            # NULL in a TEXT key; no code writes one).
            "columns": [
                (name, TYPES.get(decl, decl), bool(notnull or pk), _default(dflt))
                for _, name, decl, notnull, dflt, pk in info
            ],
            "pk": [r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5])],
            "indexes": indexes,
            "references": sorted(
                (r[3], r[2], r[4]) for r in db.query(f"PRAGMA foreign_key_list({table})")
            ),
            "triggers": sorted(
                r[0]
                for r in db.query(
                    "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?",
                    (table,),
                )
            ),
        }
    return out


def pg_schema(db: PostgresCrawlStore) -> Schema:
    out: Schema = {}
    tables = db.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
        "AND table_type = 'BASE TABLE' AND table_name <> 'schema_version'"
    )
    for (table,) in tables:
        rowid = ROWID_COLUMNS.get(table)  # SQLite's implicit rowid, made a column here
        columns = [
            (name, TYPES.get(kind, kind), nullable == "NO", _default(dflt))
            for name, kind, nullable, dflt in db.query(
                "SELECT column_name, data_type, is_nullable, column_default "
                "FROM information_schema.columns WHERE table_schema = 'public' "
                "AND table_name = ? ORDER BY ordinal_position",
                (table,),
            )
            if name != rowid
        ]
        names = dict(
            db.query(
                "SELECT attnum, attname FROM pg_attribute WHERE attrelid = ?::regclass "
                "AND attnum > 0",
                (table,),
            )
        )
        pk: list[str] = []
        indexes = {}
        for name, unique, primary, keys, partial in db.query(
            "SELECT c.relname, i.indisunique, i.indisprimary, i.indkey::int2[], "
            "i.indpred IS NOT NULL FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = ?::regclass",
            (table,),
        ):
            cols = [names[k] for k in keys]
            if primary:
                pk = cols
            else:
                indexes[name] = (bool(unique), cols, bool(partial))
        triggers = db.query(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = ?::regclass AND NOT tgisinternal",
            (table,),
        )
        references = sorted(
            (names[a], to, to_names[b])
            for to, froms, tos in db.query(
                "SELECT confrelid::regclass::text, conkey, confkey FROM pg_constraint "
                "WHERE contype = 'f' AND conrelid = ?::regclass",
                (table,),
            )
            for to_names in [
                dict(
                    db.query(
                        "SELECT attnum, attname FROM pg_attribute WHERE attrelid = ?::regclass",
                        (to,),
                    )
                )
            ]
            for a, b in zip(froms, tos, strict=True)
        )
        out[table] = {
            "columns": columns,
            "pk": pk,
            "references": references,
            "indexes": indexes,
            "triggers": sorted(r[0] for r in triggers),
        }
    return out


def assert_same(lite: Schema, pg: Schema, where: str) -> None:
    assert sorted(lite) == sorted(pg), where
    for table in lite:
        for part in ("columns", "pk", "references", "indexes", "triggers"):
            assert lite[table][part] == pg[table][part], f"{where}: {table} {part}"


def test_a_fresh_crawl_db_has_one_schema_in_both_dialects(pg_db: str, tmp_path: Path) -> None:
    with SQLiteStore(tmp_path) as lite, PostgresCrawlStore(pg_db) as pg:
        assert lite.schema_version == pg.schema_version == len(MIGRATIONS) == len(PG_MIGRATIONS)
        ours = sqlite_schema(lite)
        assert "urls" in ours
        assert ours["urls"]["indexes"]["urls_queued"] == (False, ["priority", "depth", "id"], True)
        assert ours["fetches"]["references"] == [("url_id", "urls", "id")]
        assert_same(ours, pg_schema(pg), "fresh")


def test_every_schema_version_is_one_schema_in_both_dialects(pg_db: str, tmp_path: Path) -> None:
    """From an empty DB, one migration at a time, as an old crawl DB is brought up to date."""
    fresh: tuple[Schema, Schema] | None = None
    with SQLiteStore(tmp_path / "fresh") as lite:
        fresh_lite = sqlite_schema(lite)
    for version in range(1, len(MIGRATIONS) + 1):
        with (
            SQLiteStore(tmp_path, migrations=MIGRATIONS[:version]) as lite,
            PostgresCrawlStore(pg_db, migrations=PG_MIGRATIONS[:version]) as pg,
        ):
            assert lite.schema_version == pg.schema_version == version
            fresh = sqlite_schema(lite), pg_schema(pg)
            assert_same(*fresh, f"version {version}")
    assert fresh is not None
    assert fresh[0] == fresh_lite  # migrated step by step: what a fresh DB has
