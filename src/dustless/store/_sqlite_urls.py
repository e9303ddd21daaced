"""What ``SQLiteStore`` knows about its URL rows (``URLStore``): URLs by id and state counts,
the collection a recrawl queues, a host's sources, sitemap dates and pattern-script labels.

A base class of ``SQLiteStore``; the PostgreSQL twin is ``_pg_urls.py``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from dustless.kinds import LinkKind
from dustless.store._rows import (
    STATES,
    URL_COLS,
    chunks,
    marks,
    url_row,
)
from dustless.store._types import (
    PROBE_PREFIX,
    StoredURL,
    URLDate,
    URLLabel,
    URLState,
)

__all__ = ["SQLiteURLs"]


class SQLiteURLs:
    """URL rows read and labelled; ``SQLiteStore`` sets the connection."""

    _db: sqlite3.Connection
    _lock: threading.RLock

    def _write(self) -> sqlite3.Connection:  # pragma: no cover - SQLiteStore's
        raise NotImplementedError

    def label_urls(self, labels: Sequence[URLLabel]) -> None:
        if not labels:
            return
        with self._lock:
            self._write().executemany(
                "UPDATE urls SET page_type = ?, category = coalesce(?, category), "
                "category_id = coalesce(?, category_id), "
                "category_name = coalesce(?, category_name) WHERE identity = ?",
                [
                    (x.page_type, x.category, x.category_id, x.category_name, x.identity)
                    for x in labels
                ],
            )

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

    def collection_ids(self, kinds: Sequence[LinkKind] | None = None) -> list[int]:
        sql = (
            "SELECT id FROM urls WHERE state IN ('done', 'queued') AND substr(identity, 1, ?) != ?"
        )
        params: list[Any] = [len(PROBE_PREFIX), PROBE_PREFIX]
        if kinds is not None:
            sql += f" AND kind IN ({marks(len(kinds))})"
            params += [k.value for k in kinds]
        with self._lock:
            return [int(r[0]) for r in self._db.execute(sql + " ORDER BY id", params)]

    def count_kind(self, host: str, kind: LinkKind) -> int:
        with self._lock:
            (n,) = self._db.execute(
                "SELECT count(*) FROM urls WHERE host = ? AND kind = ?", (host, kind.value)
            ).fetchone()
        return int(n)

    def record_dates(self, dates: Sequence[URLDate]) -> int:
        if not dates:
            return 0
        with self._lock:
            db = self._write()
            before = db.total_changes
            # INSERT … SELECT by identity: the URL row's id without a round trip per URL;
            # an identity with no row selects nothing (the WHERE also settles SQLite's
            # parsing of ON CONFLICT after a SELECT).
            db.executemany(
                "INSERT INTO url_dates (url_id, batch, lastmod, changefreq, source_id) "
                "SELECT id, ?, ?, ?, ? FROM urls WHERE identity = ? "
                "ON CONFLICT (url_id, batch) DO UPDATE SET lastmod = excluded.lastmod, "
                "changefreq = excluded.changefreq, source_id = excluded.source_id",
                [(d.batch, d.lastmod, d.changefreq, d.source_id, d.identity) for d in dates],
            )
            return db.total_changes - before

    def category_names(self, url_ids: Iterable[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        with self._lock:
            for part in chunks(list(dict.fromkeys(url_ids)), 900):
                out.update(
                    self._db.execute(
                        "SELECT id, category_name FROM urls WHERE category_name IS NOT NULL "
                        f"AND category_name != '' AND id IN ({marks(len(part))})",
                        part,
                    ).fetchall()
                )
        return out
