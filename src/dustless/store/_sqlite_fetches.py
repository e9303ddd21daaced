"""Every fetch kept (``FetchStore``) in ``SQLiteStore``: fetch rows and the URL states they set,
payloads seen (003), the fetches read back, and where each WARC file's committed part ends.

A base class of ``SQLiteStore``; the PostgreSQL twin is ``_pg_fetches.py``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from dustless.errors import StoreCorrupt, StoreError
from dustless.store._rows import (
    FETCH_COLS,
    FETCH_INSERT,
    chunks,
    fetch_params,
    fetch_row,
)
from dustless.store._types import (
    ContentRef,
    FetchRecord,
    FetchRow,
    WarcRef,
)

__all__ = ["SQLiteFetches"]


class SQLiteFetches:
    """Fetch rows and WARC marks; ``SQLiteStore`` sets the connection."""

    _db: sqlite3.Connection
    _lock: threading.RLock
    _worker: str
    _batch: int | None

    def _write(self) -> sqlite3.Connection:  # pragma: no cover - SQLiteStore's
        raise NotImplementedError

    def record_fetches(self, batch: Sequence[FetchRecord]) -> list[int]:
        if not batch:
            return []
        with self._lock:
            if self._batch is None:
                (current,) = self._db.execute("SELECT max(batch) FROM crawls").fetchone()
                self._batch = current
            db = self._write()
            rows = []
            for f in batch:
                number = f.batch if f.batch is not None else self._batch
                if number is None:
                    raise StoreError("record_fetches before start_batch: no batch is open")
                rows.append(fetch_params(f, number, self._worker))
            # We hold the write lock (BEGIN IMMEDIATE), so rowids of a rowid table are
            # handed out as max + 1, max + 2, …: the ids follow without a query per row.
            (first,) = db.execute("SELECT coalesce(max(id), 0) + 1 FROM fetches").fetchone()
            db.executemany(FETCH_INSERT, rows)
            (last,) = db.execute("SELECT max(id) FROM fetches").fetchone()
            if last != first + len(rows) - 1:
                raise StoreCorrupt("fetch ids were not assigned consecutively")
            ids = list(range(first, first + len(rows)))
            db.executemany(
                "UPDATE urls SET state = ? WHERE id = ?",
                [(f.url_state.value, f.url_id) for f in batch],
            )
        return ids

    def content_seen(self, sha1s: Iterable[str]) -> dict[str, ContentRef]:
        keys = list(dict.fromkeys(sha1s))
        out: dict[str, ContentRef] = {}
        with self._lock:
            for part in chunks(keys, 900):
                # The first fetch that stored the payload (not itself a revisit) is the one
                # a revisit record refers to (WARC 1.1 §6.7.2, WARC-Refers-To).
                sql = (
                    "SELECT f.content_sha1, f.id, u.url, f.fetched_at, f.warc_file, "
                    "f.warc_offset, f.warc_length, f.warc_record_id FROM fetches f "
                    "JOIN urls u ON u.id = f.url_id WHERE f.id IN ("
                    "SELECT min(id) FROM fetches WHERE revisit_of IS NULL AND content_sha1 IN "
                    f"({','.join('?' * len(part))}) GROUP BY content_sha1)"
                )
                for sha, fid, url, at, wf, wo, wl, wid in self._db.execute(sql, part):
                    ref = WarcRef(wf, wo, wl, wid or "") if wf is not None else None
                    out[sha] = ContentRef(sha, fid, url, at, ref)
        return out

    def iter_content_sha1s(self, chunk: int = 50_000) -> Iterator[list[str]]:
        last = ""
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT DISTINCT content_sha1 FROM fetches WHERE content_sha1 > ? "
                    "ORDER BY content_sha1 LIMIT ?",
                    (last, chunk),
                ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield [r[0] for r in rows]

    def last_fetches(self, url_ids: Iterable[int]) -> dict[int, FetchRow]:
        out: dict[int, FetchRow] = {}
        with self._lock:
            for part in chunks(list(dict.fromkeys(url_ids)), 900):
                sql = (
                    f"SELECT {FETCH_COLS} FROM fetches f JOIN urls u ON u.id = f.url_id "
                    "WHERE f.id IN (SELECT max(id) FROM fetches WHERE url_id IN "
                    f"({','.join('?' * len(part))}) GROUP BY url_id)"
                )
                for r in self._db.execute(sql, part):
                    out[r[1]] = fetch_row(r)
        return out

    def iter_fetches(self, batch: int | None = None, chunk: int = 10_000) -> Iterator[FetchRow]:
        last = 0
        where = "" if batch is None else "AND f.batch = ?"
        while True:
            params: list[Any] = [last] + ([] if batch is None else [batch]) + [chunk]
            with self._lock:
                rows = self._db.execute(
                    f"SELECT {FETCH_COLS} FROM fetches f JOIN urls u ON u.id = f.url_id "
                    f"WHERE f.id > ? {where} ORDER BY f.id LIMIT ?",
                    params,
                ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            for r in rows:
                yield fetch_row(r)

    def fetch_state_counts(self, batch: int | None = None) -> dict[str, int]:
        with self._lock:
            if batch is None:
                rows = self._db.execute("SELECT state, count(*) FROM fetches GROUP BY state")
            else:
                rows = self._db.execute(
                    "SELECT state, count(*) FROM fetches WHERE batch = ? GROUP BY state", (batch,)
                )
            return dict(rows.fetchall())

    def warc_ends(self) -> dict[str, int]:
        ends: dict[str, int] = {}
        with self._lock:
            for sql in (
                "SELECT warc_file, max(warc_offset + warc_length) FROM fetches "
                "WHERE warc_file IS NOT NULL GROUP BY warc_file",
                "SELECT req_file, max(req_offset + req_length) FROM fetches "
                "WHERE req_file IS NOT NULL GROUP BY req_file",
            ):
                for name, end in self._db.execute(sql):
                    ends[name] = max(ends.get(name, 0), int(end))
        return ends

    def warc_committed(self, ends: Mapping[str, int]) -> None:
        if not ends:
            return
        with self._lock:
            self._write().executemany(
                "INSERT INTO warc_files (name, worker, committed_end) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET committed_end = excluded.committed_end",
                [(name, self._worker, end) for name, end in ends.items()],
            )

    def warc_committed_ends(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute(
                "SELECT name, committed_end FROM warc_files WHERE worker = ? OR worker IS NULL",
                (self._worker,),
            ).fetchall()
        return {name: int(end) for name, end in rows}
