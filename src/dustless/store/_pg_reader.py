"""The PostgreSQL reader of a crawl shared by workers (``--db postgresql://…``).

:class:`PgCrawlDB` answers the same :class:`~dustless.store.CrawlReader` questions as the
SQLite reader, over the crawl DB the workers share. The readers' SQL is written once, in the
subset both databases speak; what differs is translated here, at the edge:

* SQLite's ``?`` parameters become psycopg's ``%s`` (a literal ``%`` is doubled);
* the session's temporary tables are named ``temp.x`` in the shared SQL: ``pg_temp.x`` here;
* ``instr`` is ``strpos``; SQLite's scalar ``max(a, b)`` is ``greatest``;
* ``numeric`` results (``sum`` of a BIGINT, ``avg``) come back as ``int`` or ``float``, as
  SQLite's do, not as ``Decimal``.

The whole reading is one REPEATABLE READ transaction: ``stats`` on a crawl that workers are
still writing sees one snapshot of it, never half of a commit. Nothing is written but the
session's temporary tables. The WARC files are each worker's: ``warc_files`` says which
worker wrote a file and ``workers.dir`` where that worker's directory is; ``dirs`` may say
where a worker's directory is on this machine when it is not at the path it was crawled in.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import psycopg
from psycopg.adapt import Buffer, Loader

from dustless.errors import InvalidOption, StoreError
from dustless.store._pg_conn import display_dsn, one_line, sqlite_params
from dustless.store._reader import (
    BATCHES_SQL,
    REQUIRED_TABLES,
    WARC_DIR,
    BatchChoice,
    batch_infos,
)

__all__ = ["PgCrawlDB", "open_pg_crawl"]

_TEMP = re.compile(r"(?<![\w.])temp\.")
_names = itertools.count(1)


class _NumberLoader(Loader):
    """``numeric`` as SQLite answers it: an ``int`` when integral, else a ``float``."""

    def load(self, data: Buffer) -> int | float:
        text = bytes(data).decode("ascii")
        return int(text) if text.lstrip("-").isdigit() else float(text)


class PgCrawlDB(BatchChoice):
    """The PostgreSQL reader; :func:`open_pg_crawl`."""

    dialect = "postgresql"

    def __init__(
        self, dsn: str, conn: psycopg.Connection[tuple[Any, ...]], dirs: Mapping[str, Path]
    ) -> None:
        self._dsn = dsn
        self._db = conn
        self._dirs = dict(dirs)
        self.tables = frozenset(
            r[0]
            for r in self.query(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema()"
            )
        )
        missing = REQUIRED_TABLES - self.tables
        if missing:
            raise InvalidOption(
                f"{self.source} holds no crawl (no table {sorted(missing)[0]}): "
                "start one with dustless crawl DIR URL… --db URL"
            )
        self.batches = batch_infos(self.query(BATCHES_SQL))

    @property
    def source(self) -> str:
        return display_dsn(self._dsn)

    @property
    def path(self) -> Path:
        return Path(self.source)

    def columns(self, table: str) -> frozenset[str]:
        return frozenset(
            r[0]
            for r in self.query(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = ?",
                (table,),
            )
        )

    def instr(self, haystack: str, needle: str) -> str:
        return f"strpos({haystack}, {needle})"

    def greatest(self, a: str, b: str) -> str:
        return f"greatest({a}, {b})"

    def floor(self, value: str) -> str:
        # A CAST to an integer rounds on PostgreSQL (SQLite's truncates): floor() first.
        return f"CAST(floor({value}) AS BIGINT)"

    # -- the crawl's directories ---------------------------------------------------------------
    def crawl_dirs(self) -> list[Path]:
        """Each worker's directory (its ``warc/`` and ``indexes/``), by worker name."""
        rows = self.query("SELECT name, dir FROM workers ORDER BY name")
        return [self._dirs.get(name, Path(d)) for name, d in rows]

    def warc_dir(self, name: str) -> Path:
        """The ``warc/`` directory holding the WARC file ``name`` (its worker's)."""
        rows = self.query(
            "SELECT w.name, w.dir FROM workers w WHERE w.name = coalesce("
            "(SELECT worker FROM warc_files WHERE name = ?), "
            "(SELECT worker FROM fetches WHERE warc_file = ? LIMIT 1))",
            (name, name),
        )
        if not rows:
            raise StoreError(f"{self.source}: no worker wrote the WARC file {name}")
        worker, directory = rows[0]
        return self._dirs.get(worker, Path(directory)) / WARC_DIR

    # -- SQL -----------------------------------------------------------------------------------
    def _sql(self, sql: str) -> str:
        return sqlite_params(_TEMP.sub("pg_temp.", sql))

    def _error(self, exc: psycopg.Error) -> StoreError:
        if not self._db.closed and not self._db.broken:
            self._db.rollback()  # the reading can go on (a new snapshot)
        return StoreError(f"{self.source}: {one_line(exc)}")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            with self._db.cursor() as cur:
                cur.execute(self._sql(sql), list(params))
                return cur.fetchall() if cur.description is not None else []
        except psycopg.Error as exc:
            raise self._error(exc) from None

    def iterate(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]:
        # A server-side cursor: a million rows cost a window of them in memory, not all.
        try:
            with self._db.cursor(name=f"dustless_{next(_names)}") as cur:
                cur.itersize = 20_000
                cur.execute(self._sql(sql), list(params))
                yield from cur
        except psycopg.Error as exc:
            raise self._error(exc) from None

    def script(self, sql: str, params: Sequence[Any] = ()) -> None:
        """One statement that writes only the session's temporary tables."""
        self.query(sql, params)

    def script_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        try:
            with self._db.cursor() as cur:
                cur.executemany(self._sql(sql), [list(r) for r in rows])
        except psycopg.Error as exc:
            raise self._error(exc) from None

    def close(self) -> None:
        self._db.close()  # the session's temporary tables go with it

    def __enter__(self) -> PgCrawlDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_pg_crawl(dsn: str, dirs: Mapping[str, Path] | None = None) -> PgCrawlDB:
    """Open the crawl in the PostgreSQL database ``dsn`` for reading; one clear
    :class:`InvalidOption` when it cannot be reached or holds no crawl."""
    try:
        conn = psycopg.connect(dsn, connect_timeout=10, application_name="dustless reader")
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.adapters.register_loader("numeric", _NumberLoader)
    except psycopg.Error as exc:
        raise InvalidOption(
            f"cannot open the crawl DB on {display_dsn(dsn)}: {one_line(exc)}"
        ) from None
    try:
        return PgCrawlDB(dsn, conn, dirs or {})
    except BaseException:
        conn.close()
        raise
