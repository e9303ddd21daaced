"""Read-only access to a crawl's DB for ``stats``, ``evaluate``, ``report`` and the others.

The store owns the schema, every write and every read: the readers (``analysis``, ``export``,
``report``, the CLI) go through :class:`CrawlReader` and the named reads of ``_reads.py`` and
``_stat_reads.py`` built on it, never through SQL of their own. The reader answers read-only SQL
over the documented schema (docs/storage.md), grouping in the database so a million fetches cost
a few scans, not a million Python objects. The SQL is written once, in the subset SQLite and
PostgreSQL share (``CASE`` sums, never a sum of a comparison; an alias on every subquery in
``FROM``; window functions; integer division of integers only); where the two differ the reader
says how (:meth:`CrawlReader.instr`, :meth:`CrawlReader.greatest`, :meth:`CrawlReader.floor`).
Two spellings are the reader's to translate: the ``?`` placeholders, and ``temp.NAME`` for the
session's temporary tables (``pg_temp.NAME`` on PostgreSQL). :class:`CrawlDB` is the SQLite
reader: its connection is opened with ``mode=ro``, so ``dustless stats`` on a crawl that is
still running never takes a write lock (WAL lets readers proceed).

Batches: every fetch row carries the batch it belongs to (004 §4 "일괄 수집"). The fetches
``evaluate --fetch`` makes to measure coverage loss go into a batch of their own whose
config JSON says ``{"kind": "evaluate-fetch"}`` (:data:`PROBE_KIND`); statistics leave those
batches out, and ``evaluate`` uses them only to look up normalized forms.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from dustless.errors import InvalidOption, StoreError
from dustless.store._types import DB_NAME, PROBE_KIND

__all__ = [
    "REQUIRED_TABLES",
    "WARC_DIR",
    "BatchInfo",
    "CrawlDB",
    "CrawlReader",
    "open_crawl",
    "worker_dir_message",
]

WARC_DIR = "warc"  # OUTDIR/warc holds the WARC files

# Tables a crawl DB has since the store's first migration (store/_schema.py, V1).
REQUIRED_TABLES = frozenset({"crawls", "hosts", "seeds", "urls", "fetches"})


@dataclass(frozen=True, slots=True)
class BatchInfo:
    """One row of ``crawls``: a batch of the crawl, or a probe batch of ``evaluate --fetch``."""

    number: int
    started_at: float
    ended_at: float | None
    batch_time: float
    config: str
    probe: bool


def _is_probe(config: str) -> bool:
    try:
        data = json.loads(config)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("kind") == PROBE_KIND


# The batches of a crawl, as both readers ask for them.
BATCHES_SQL = "SELECT batch, started_at, ended_at, batch_time, config FROM crawls ORDER BY batch"


def batch_infos(rows: Sequence[Sequence[Any]]) -> tuple[BatchInfo, ...]:
    """``BATCHES_SQL``'s rows as ``BatchInfo``s."""
    return tuple(
        BatchInfo(int(b), float(s), e, float(t), str(c), _is_probe(str(c)))
        for b, s, e, t, c in rows
    )


class BatchChoice:
    """What both readers answer from their ``batches`` alone."""

    batches: tuple[BatchInfo, ...]

    @property
    def source(self) -> str:
        raise NotImplementedError

    def crawl_batches(self, selected: int | None = None) -> tuple[int, ...]:
        """The batches of the crawl itself (not probes); only ``selected`` when given."""
        numbers = tuple(b.number for b in self.batches if not b.probe)
        if selected is None:
            return numbers
        if selected not in numbers:
            known = ", ".join(map(str, numbers)) or "none"
            raise InvalidOption(f"no crawl batch {selected} in {self.source} (batches: {known})")
        return (selected,)

    def probe_batches(self) -> tuple[int, ...]:
        return tuple(b.number for b in self.batches if b.probe)


class CrawlReader(Protocol):
    """What the readers of a crawl may ask of its database (SQLite or PostgreSQL)."""

    batches: tuple[BatchInfo, ...]
    tables: frozenset[str]

    @property
    def source(self) -> str:
        """The crawl directory or database read, as the user named it."""
        ...

    @property
    def path(self) -> Path:
        """What the reader reads, for messages and memo keys."""
        ...

    def crawl_batches(self, selected: int | None = None) -> tuple[int, ...]: ...

    def probe_batches(self) -> tuple[int, ...]: ...

    def columns(self, table: str) -> frozenset[str]:
        """The columns ``table`` has (a crawl stored by an older dustless has fewer)."""
        ...

    def instr(self, haystack: str, needle: str) -> str:
        """SQL for the 1-based position of ``needle`` in ``haystack`` (0: absent)."""
        ...

    def greatest(self, a: str, b: str) -> str:
        """SQL for the larger of two values."""
        ...

    def floor(self, value: str) -> str:
        """SQL for the integer part of a non-negative number (a bucket's index)."""
        ...

    def crawl_dirs(self) -> list[Path]:
        """The directories of the crawl's WARC files (``warc/``) and their index
        (``indexes/``): DIR itself, or each worker's DIR of a crawl shared on PostgreSQL."""
        ...

    def warc_dir(self, name: str) -> Path:
        """The ``warc/`` directory that holds the WARC file ``name``."""
        ...

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    def iterate(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]: ...

    def script(self, sql: str, params: Sequence[Any] = ()) -> None:
        """One statement that writes only ``temp.`` tables (``pg_temp.`` on PostgreSQL)."""
        ...

    def script_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> CrawlReader: ...

    def __exit__(self, *exc: object) -> None: ...


class CrawlDB(BatchChoice):
    """The SQLite reader: a read-only connection to ``DIR/crawl.db``; :func:`open_crawl`."""

    dialect = "sqlite"

    def __init__(self, directory: Path, connection: sqlite3.Connection) -> None:
        self.directory = directory
        self._db = connection
        # Tables added by later migrations (url_dates …) are looked for before they are read:
        # an older dustless wrote this DB and the reader does not migrate it.
        self.tables = frozenset(
            r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        )
        self.batches = batch_infos(self._db.execute(BATCHES_SQL).fetchall())

    @property
    def source(self) -> str:
        return str(self.directory)

    @property
    def path(self) -> Path:
        return self.directory / DB_NAME

    def columns(self, table: str) -> frozenset[str]:
        return frozenset(r[1] for r in self.query(f"PRAGMA table_info({table})"))

    def instr(self, haystack: str, needle: str) -> str:
        return f"instr({haystack}, {needle})"

    def greatest(self, a: str, b: str) -> str:
        return f"max({a}, {b})"  # SQLite's scalar max

    def floor(self, value: str) -> str:
        # SQLite's CAST truncates toward zero: the floor of a non-negative value. (PostgreSQL's
        # CAST rounds to the nearest integer instead, hence a method of the reader.)
        return f"CAST({value} AS INTEGER)"

    def crawl_dirs(self) -> list[Path]:
        return [self.directory]

    def warc_dir(self, name: str) -> Path:
        return self.directory / WARC_DIR

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {exc}") from exc

    def iterate(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]:
        try:
            cursor = self._db.execute(sql, params)
            while True:
                chunk = cursor.fetchmany(20_000)
                if not chunk:
                    return
                yield from chunk
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {exc}") from exc

    def script(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run one statement that writes only TEMP tables (allowed on a read-only DB)."""
        try:
            self._db.execute(sql, params)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {exc}") from exc

    def script_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """``executemany`` for statements that write only TEMP tables."""
        try:
            self._db.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {exc}") from exc

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> CrawlDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_crawl(
    directory: str | Path | None,
    *,
    db: str | None = None,
    dirs: Mapping[str, Path] | None = None,
) -> CrawlReader:
    """Open a crawl for reading: the crawl directory ``directory`` (its SQLite DB, read-only)
    or, with ``db`` (``postgresql://…``), the crawl its workers share there — ``dirs`` maps
    a worker's name to its directory on this machine when it moved (``_pg_reader.py``).
    One clear :class:`InvalidOption` when it is not a crawl."""
    if db is not None:
        from dustless.store._pg_reader import open_pg_crawl

        return open_pg_crawl(db, dirs)
    if directory is None:
        raise InvalidOption("give a crawl directory DIR, or --db postgresql://…")
    return open_sqlite_crawl(directory)


# A worker's directory of a crawl on PostgreSQL holds this file (dustless.crawl.worker's
# WORKER_FILE; not imported: that module brings in the PostgreSQL store).
_WORKER_FILE = "worker.json"


def _db_url_hint(where: str) -> str:
    """``--db``'s URL for the DB a worker file names as ``host:port/dbname``, with ``USER``
    for the user: the file keeps neither user nor password, so a directory copied or archived
    with its WARC files carries no credentials, and guessing a role could read with another's
    rights."""
    hostport, sep, dbname = where.rpartition("/")
    host, colon, port = hostport.rpartition(":")
    if not sep or not colon or not host or not port.isdigit():
        return "postgresql://USER@HOST/DBNAME"
    if host.startswith("/"):  # a Unix socket directory
        return f"postgresql://USER@/{dbname}?host={host}&port={port}"
    return f"postgresql://USER@{host}:{port}/{dbname}"


def worker_dir_message(directory: str | Path, *, how: str = "read it with") -> str | None:
    """What to say of ``directory`` when it is a worker's directory of a crawl shared on
    PostgreSQL (it has ``worker.json``, no ``crawl.db``): the crawl is in that DB, so
    ``--db`` is the way to it. ``None`` for any other directory."""
    d = Path(directory)
    path = d / _WORKER_FILE
    if not path.is_file() or (d / DB_NAME).exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        worker, where = str(data["worker"]), str(data["db"])
    except (OSError, ValueError, KeyError, TypeError):
        return f"{d}: a worker's directory of a crawl shared on PostgreSQL: {how} --db URL"
    return (
        f"{d} is the directory of worker {worker!r} of a crawl shared on PostgreSQL "
        f"({where}): {how} --db {_db_url_hint(where)}"
    )


def open_sqlite_crawl(directory: str | Path) -> CrawlDB:
    """Open a crawl directory read-only; one clear :class:`InvalidOption` when it is not one."""
    d = Path(directory)
    if not d.exists():
        raise InvalidOption(f"{d}: no such directory")
    if not d.is_dir():
        raise InvalidOption(f"{d}: not a directory (give the crawl's --out directory)")
    db_path = d / DB_NAME
    if not db_path.is_file():
        worker = worker_dir_message(d)
        raise InvalidOption(worker or f"{d}: not a crawl directory (no {DB_NAME})")
    try:
        db = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True, timeout=10.0)
        # Statistics build one temporary table of the counted fetches: keep it on disk (the
        # default temp store), not in this process's memory, at 1,000,000 fetches.
        db.execute("PRAGMA temp_store=FILE")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error as exc:
        raise InvalidOption(f"{d}: {DB_NAME} is not a readable crawl DB ({exc})") from None
    missing = REQUIRED_TABLES - tables
    if missing:
        db.close()
        raise InvalidOption(f"{d}: {DB_NAME} is not a crawl DB (no table {sorted(missing)[0]})")
    return CrawlDB(d, db)
