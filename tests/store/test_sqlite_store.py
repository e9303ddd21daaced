"""SQLiteStore: its file, WAL, migrations and transactions (the contract every store
keeps is tested on SQLite and PostgreSQL alike in ``test_store_contract.py``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dustless.errors import StoreError, StoreLocked
from dustless.store import (
    DB_NAME,
    SCHEMA_VERSION,
    NewURL,
    SQLiteStore,
)
from dustless.store._schema import MIGRATIONS


def u(path: str, host: str = "a.test", depth: int = 1, **kw: object) -> NewURL:
    url = f"http://{host}{path}"
    return NewURL(url, url, host, depth, **kw)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    s = SQLiteStore(tmp_path)
    s.start_batch('{"policy": "standard"}', now=1000.0)
    return s


# -- schema -------------------------------------------------------------------------------------
def test_creates_crawl_db_in_wal_mode_with_all_tables(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path) as s:
        assert s.path == tmp_path / DB_NAME
        assert s.schema_version == SCHEMA_VERSION
        assert s.query("PRAGMA journal_mode") == [("wal",)]
        tables = {r[0] for r in s.query("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"crawls", "hosts", "seeds", "urls", "fetches"} <= tables


def test_migration_applies_on_open_and_keeps_data(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path) as s:
        s.start_batch("{}", 1.0)
        s.add_urls([u("/kept")])
    extra = (*MIGRATIONS, ("ALTER TABLE urls ADD COLUMN note TEXT",))
    with SQLiteStore(tmp_path, migrations=extra) as s:
        assert s.schema_version == len(MIGRATIONS) + 1
        assert s.query("SELECT url, note FROM urls") == [("http://a.test/kept", None)]
    with SQLiteStore(tmp_path, migrations=extra) as s:  # idempotent
        assert s.schema_version == len(MIGRATIONS) + 1


def test_failed_migration_rolls_back(tmp_path: Path) -> None:
    SQLiteStore(tmp_path).close()
    bad = (*MIGRATIONS, ("CREATE TABLE t (x)", "THIS IS NOT SQL"))
    with pytest.raises(StoreError):
        SQLiteStore(tmp_path, migrations=bad)
    with SQLiteStore(tmp_path) as s:
        assert s.schema_version == SCHEMA_VERSION
        assert s.query("SELECT name FROM sqlite_master WHERE name = 't'") == []


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    SQLiteStore(tmp_path).close()
    db = sqlite3.connect(tmp_path / DB_NAME)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    db.close()
    with pytest.raises(StoreError, match="newer"):
        SQLiteStore(tmp_path)


# -- transactions -------------------------------------------------------------------------------
def test_uncommitted_writes_are_invisible_to_other_readers_until_commit(tmp_path: Path) -> None:
    writer = SQLiteStore(tmp_path)
    writer.start_batch("{}", 1.0)
    writer.add_urls([u("/1")])
    assert writer.contains_identities(["http://a.test/1"])  # own writes are visible
    reader = SQLiteStore(tmp_path)
    assert reader.contains_identities(["http://a.test/1"]) == set()
    writer.commit()
    assert reader.contains_identities(["http://a.test/1"]) == {"http://a.test/1"}
    writer.add_urls([u("/2")])
    writer.rollback()
    assert writer.contains_identities(["http://a.test/2"]) == set()
    reader.close()
    writer.close()


def test_memory_db(tmp_path: Path) -> None:
    with SQLiteStore(":memory:") as s:
        s.start_batch("{}", 1.0)
        assert s.add_urls([u("/1")]) == [True]


def test_a_held_write_lock_raises_store_locked(tmp_path: Path) -> None:
    first = SQLiteStore(tmp_path)
    first.start_batch("{}", 1.0)  # holds the write transaction
    second = SQLiteStore(tmp_path, busy_timeout=0.05)
    with pytest.raises(StoreLocked):
        second.add_urls([u("/1")])
    first.commit()
    assert second.add_urls([u("/1")]) == [True]
    second.close()
    first.close()


def test_not_a_database_raises_store_error(tmp_path: Path) -> None:
    (tmp_path / DB_NAME).write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError):
        SQLiteStore(tmp_path)


def test_with_block_rolls_back_on_exception(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path) as s:
        s.start_batch("{}", 1.0)

    def fail() -> None:
        with SQLiteStore(tmp_path) as s:
            s.add_urls([u("/lost")])
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        fail()
    with SQLiteStore(tmp_path) as s:
        assert s.contains_identities(["http://a.test/lost"]) == set()


def test_every_method_translates_sqlite_errors(tmp_path: Path) -> None:
    # Methods of every concern, generators too: an sqlite3 error is a StoreError (one line),
    # never a traceback of sqlite3's (CONVENTIONS §7).
    store = SQLiteStore(tmp_path)
    store._db.close()
    with pytest.raises(StoreError, match="closed"):
        store.spelling_bases()
    with pytest.raises(StoreError, match="closed"):
        next(store.iter_fetches())
    with pytest.raises(StoreError, match="closed"):
        store.urls_by_id([1])
