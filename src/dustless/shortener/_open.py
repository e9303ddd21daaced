"""How a ``--db`` URL picks the shortener's store backend (SQLite or PostgreSQL).

Apart from the store interface (``_store.py``) so that the backends can import the interface
and its shared row helpers without an import cycle.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from dustless.errors import UsageError

from ._store import DEFAULT_DB, Store, is_postgres, sqlite_path

__all__ = ["open_store", "store_for"]


async def open_store(db: str = DEFAULT_DB, *, durable: bool = True) -> Store:
    """Open (and create or migrate) the store a ``--db`` URL names.

    ``durable=False`` relaxes SQLite's fsync per commit (``synchronous=NORMAL``): a process
    crash still loses nothing committed, a power cut may lose the last commits.
    """
    path = sqlite_path(db)
    if path is not None:
        from ._sqlite_store import SqliteStore

        return await SqliteStore.open(path, durable=durable)
    if is_postgres(db):
        from ._pg_store import PostgresStore

        return await PostgresStore.open(db)
    raise UsageError(f"bad --db {db!r}: expected sqlite:///PATH or postgresql://…")


@contextlib.asynccontextmanager
async def store_for(db: str) -> AsyncIterator[Store]:
    store = await open_store(db)
    try:
        yield store
    finally:
        await store.close()
