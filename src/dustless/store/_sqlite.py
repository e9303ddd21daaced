"""``SQLiteStore``: the crawl DB of one machine, ``OUTDIR/crawl.db`` in WAL mode.

Why these pragmas: WAL lets readers (``dustless stats`` on a running crawl) proceed while the
crawler writes; ``synchronous=NORMAL`` in WAL mode keeps every commit across a process crash
(kill -9; the OS holds the WAL pages) and only risks the last commits on power loss — and even
then the DB loses pointers, never gains ones to WARC bytes that are missing, because WARC
records are fsynced before the commit that points at them.

Writes open one ``BEGIN IMMEDIATE`` transaction lazily and ``commit()`` ends it, so a batch of
URLs and fetches costs one fsync-free commit per second, not one per row. All methods hold a
lock, so the engine may call them from a worker thread (``asyncio.to_thread``). This file
keeps the connection, the migrations and the lifecycle (``StoreSession``); each other concern
of ``CrawlStore`` is a base class in a file named as its PostgreSQL twin: ``_sqlite_work.py``
(``_pg_work.py``), ``_sqlite_urls.py``, ``_sqlite_fetches.py``, ``_sqlite_sites.py``,
``_sqlite_spellings.py`` and ``_sqlite_learn.py``.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from dustless.errors import StoreCorrupt, StoreError, StoreLocked
from dustless.store._protocol import CrawlStore
from dustless.store._rows import (
    url_hash,
)
from dustless.store._schema import MIGRATIONS, Migration
from dustless.store._sqlite_fetches import SQLiteFetches
from dustless.store._sqlite_learn import SQLiteLearn
from dustless.store._sqlite_sites import SQLiteSites
from dustless.store._sqlite_spellings import SQLiteSpellings
from dustless.store._sqlite_urls import SQLiteURLs
from dustless.store._sqlite_work import SQLiteWork
from dustless.store._types import (
    DB_NAME,
)

__all__ = ["LOCAL_WORKER", "SQLiteStore", "url_hash"]

LOCAL_WORKER = "local"


class SQLiteStore(SQLiteWork, SQLiteURLs, SQLiteFetches, SQLiteSites, SQLiteSpellings, SQLiteLearn):
    """The ``CrawlStore`` on SQLite. ``SQLiteStore(OUTDIR)`` opens or creates ``OUTDIR/crawl.db``.

    ``path`` may also name the DB file itself (``.db``) or be ``":memory:"`` for tests.
    ``worker`` names the process in leases and fetch rows (one machine: ``local``).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout: float = 10.0,
        cache_mb: int = 64,
        migrations: Sequence[Migration] = MIGRATIONS,
        worker: str = LOCAL_WORKER,
    ) -> None:
        p = Path(path)
        if str(path) != ":memory:" and p.suffix != ".db":
            p.mkdir(parents=True, exist_ok=True)
            p = p / DB_NAME
        self.path = p
        self._lock = threading.RLock()
        self._in_tx = False
        self._batch: int | None = None
        self._worker = worker
        try:
            self._db = sqlite3.connect(
                str(p), timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(f"PRAGMA cache_size=-{int(cache_mb) * 1024}")
            self._db.execute("PRAGMA foreign_keys=OFF")  # checked by the engine's flow
            self._migrate(migrations)
        except sqlite3.Error as exc:
            raise self._translate(exc) from exc

    # -- plumbing ----------------------------------------------------------------------------
    @staticmethod
    def _translate(exc: sqlite3.Error) -> StoreError:
        msg = str(exc)
        if "locked" in msg or "busy" in msg:
            return StoreLocked(f"crawl DB is locked by another process: {msg}")
        if isinstance(exc, sqlite3.DatabaseError) and (
            "malformed" in msg or "not a database" in msg
        ):
            return StoreCorrupt(f"crawl DB is corrupt: {msg}")
        return StoreError(f"crawl DB error: {msg}")

    def _migrate(self, migrations: Sequence[Migration]) -> None:
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version > len(migrations):
            raise StoreError(
                f"crawl DB schema version {version} is newer than this dustless knows "
                f"({len(migrations)}); upgrade dustless"
            )
        for number in range(version, len(migrations)):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for statement in migrations[number]:
                    self._db.execute(statement)
                # PRAGMA takes no parameters; the value is our own integer.
                self._db.execute(f"PRAGMA user_version = {number + 1}")
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    @property
    def worker(self) -> str:
        return self._worker

    @property
    def shared(self) -> bool:
        # One machine, one crawling process at a time (the WARC files are locked): what
        # this process has not seen, no other worker has stored meanwhile.
        return False

    def watch_outages(self, hook: Callable[[float | None], None]) -> None:
        """A file on this machine is never away: nothing to watch."""

    def maybe_away(self) -> bool:
        return False

    def reach(self) -> None:
        """A file on this machine is always there."""

    def impatient(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    @property
    def schema_version(self) -> int:
        with self._lock:
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _write(self) -> sqlite3.Connection:
        """The connection inside an open write transaction (begun lazily)."""
        if not self._in_tx:
            self._db.execute("BEGIN IMMEDIATE")
            self._in_tx = True
        return self._db

    def commit(self) -> None:
        with self._lock:
            if self._in_tx:
                self._db.execute("COMMIT")
                self._in_tx = False

    def rollback(self) -> None:
        """Drop uncommitted writes (tests; the engine never needs it)."""
        with self._lock:
            if self._in_tx:
                self._db.execute("ROLLBACK")
                self._in_tx = False

    def close(self) -> None:
        with self._lock:
            self.commit()
            self._db.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        # As sqlite3's own context manager: commit on success, roll back on an exception
        # (never persist half of what a failing block meant to write).
        if exc_type is not None:
            self.rollback()
        self.close()

    # -- inspection ---------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """SQL on this SQLite file, for tests and debugging. Not part of ``CrawlStore``:
        nothing in dustless reads the crawl DB this way (the readers of ``analysis`` go
        through ``CrawlReader``)."""
        with self._lock:
            return self._db.execute(sql, params).fetchall()


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _translated(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Translate sqlite3's exceptions at the I/O edge (CONVENTIONS §7)."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return fn(*args, **kwargs)
        except sqlite3.Error as exc:
            raise SQLiteStore._translate(exc) from exc

    return wrapper


def _translated_iter(fn: Callable[_P, Iterator[_R]]) -> Callable[_P, Iterator[_R]]:
    """The same for a generator: its errors come while the caller iterates."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> Iterator[_R]:
        try:
            yield from fn(*args, **kwargs)
        except sqlite3.Error as exc:
            raise SQLiteStore._translate(exc) from exc

    return wrapper


# Every method of every concern (``_protocol.py``), wherever its base class defines it, and
# the store's own: a new method cannot be left out of the translation.
for _name in sorted(
    {n for c in CrawlStore.__mro__ if c.__module__ == CrawlStore.__module__ for n in vars(c)}
    | {"commit", "rollback", "close", "query"}
):
    _fn = getattr(SQLiteStore, _name, None)
    if _name.startswith("_") or not inspect.isfunction(_fn):
        continue  # properties (``worker``, ``shared``) read no DB
    _wrap = _translated_iter if inspect.isgeneratorfunction(_fn) else _translated
    setattr(SQLiteStore, _name, _wrap(_fn))


def _is_a_crawl_store(store: SQLiteStore) -> CrawlStore:
    return store  # mypy proves SQLiteStore implements the protocol
