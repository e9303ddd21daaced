"""The read queries of the crawl DB: URLs by id and state, fetches, contents, WARC ends.

A base class of ``SQLiteStore`` (``_sqlite.py`` keeps the connection, the migrations and the
writes): these methods only read, under the store's lock, and never open a transaction.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from dustless.store._rows import FETCH_COLS, STATES, URL_COLS, chunks, fetch_row, url_row
from dustless.store._types import ContentRef, FetchRow, StoredURL, URLState, WarcRef

__all__ = ["SQLiteReads"]


class SQLiteReads:
    """Read-only queries over ``urls`` and ``fetches``; ``SQLiteStore`` sets the connection."""

    _db: sqlite3.Connection
    _lock: threading.RLock

    def urls_by_id(self, ids: Iterable[int]) -> dict[int, StoredURL]:
        out: dict[int, StoredURL] = {}
        with self._lock:
            for part in chunks(list(dict.fromkeys(ids)), 900):
                sql = f"SELECT {URL_COLS} FROM urls WHERE id IN ({','.join('?' * len(part))})"
                for r in self._db.execute(sql, part):
                    out[r[0]] = url_row(r)
        return out

    def url_counts(self) -> dict[URLState, int]:
        with self._lock:
            rows = self._db.execute("SELECT state, count(*) FROM urls GROUP BY state").fetchall()
        counts = dict.fromkeys(URLState, 0)
        for state, n in rows:
            counts[STATES[state]] = n
        return counts

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
