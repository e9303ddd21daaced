"""Fallback spellings (``SpellingStore``, ``crawl/spellings.py``) in ``SQLiteStore``: other
spellings of an identity, kept in the order met up to a limit.

A base class of ``SQLiteStore``; the PostgreSQL twin is ``_pg_spellings.py``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from typing import Any

from dustless.store._rows import (
    MAX_PARAMS,
    URL_COLS,
    chunks,
    marks,
    url_row,
)
from dustless.store._types import (
    StoredURL,
)

__all__ = ["SQLiteSpellings"]


class SQLiteSpellings:
    """Kept spellings; ``SQLiteStore`` sets the connection."""

    _db: sqlite3.Connection
    _lock: threading.RLock

    def _write(self) -> sqlite3.Connection:  # pragma: no cover - SQLiteStore's
        raise NotImplementedError

    def add_spellings(self, pairs: Sequence[tuple[str, str]], limit: int) -> None:
        if pairs:
            with self._lock:
                self._write().executemany(
                    "INSERT INTO spellings (identity, url) SELECT ?1, ?2 WHERE (SELECT "
                    "count(*) FROM spellings WHERE identity = ?1) < ?3 ON CONFLICT DO NOTHING",
                    [(i, u, limit) for i, u in pairs],
                )

    def spelling_state(self, base: str, names: Sequence[str]) -> tuple[list[str], list[str]]:
        with self._lock:
            tried = [
                r[0]
                for r in self._db.execute(
                    f"SELECT url FROM urls WHERE identity IN ({marks(len(names))}) ORDER BY id",
                    list(names),
                )
            ]
            kept = [
                r[0]
                for r in self._db.execute(
                    "SELECT url FROM spellings WHERE identity = ? ORDER BY rowid", (base,)
                )
            ]
        return tried, kept

    def spelling_rows(self, names: Sequence[str]) -> list[tuple[StoredURL, str | None, int | None]]:
        rows: list[Any] = []
        with self._lock:
            for part in chunks(list(names), MAX_PARAMS):
                rows += self._db.execute(
                    f"SELECT {URL_COLS}, (SELECT f.state FROM fetches f WHERE f.url_id = u.id "
                    "ORDER BY f.id DESC LIMIT 1), (SELECT f.status FROM fetches f "
                    "WHERE f.url_id = u.id ORDER BY f.id DESC LIMIT 1) "
                    f"FROM urls u WHERE u.identity IN ({marks(len(part))}) ORDER BY u.id",
                    part,
                ).fetchall()
        rows.sort(key=lambda r: r[0])  # by id across the parts
        return [(url_row(r[:10]), r[10], r[11]) for r in rows]

    def spelling_bases(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT DISTINCT identity FROM spellings")]
