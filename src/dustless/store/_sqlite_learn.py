"""The learning side of ``SQLiteStore``: rules learned during the crawl, their merges, and
the re-keying of queued and fetched URLs a new rule gives another identity (docs/learning.md).

A base class of ``SQLiteStore``, like ``_sqlite_work.py``: every method runs under the
store's lock, inside its open write transaction where it writes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence

from dustless.store._learn_types import (
    MERGE_COLS,
    RULE_COLS,
    LearnedRuleRow,
    MergeRow,
    merge_params,
    merge_row,
)
from dustless.store._rows import URL_COLS, chunks, url_row
from dustless.store._types import StoredURL

__all__ = ["SQLiteLearn"]


def _marks(n: int) -> str:
    return ",".join("?" * n)


class SQLiteLearn:
    """Learned rules and merges; ``SQLiteStore`` sets the connection."""

    _db: sqlite3.Connection
    _lock: threading.RLock
    _worker: str

    def _write(self) -> sqlite3.Connection:  # pragma: no cover - SQLiteStore's
        raise NotImplementedError

    # -- rules -------------------------------------------------------------------------------
    def add_learned_rules(self, rules: Sequence[LearnedRuleRow]) -> list[int]:
        ids: list[int] = []
        with self._lock:
            db = self._write()
            for r in rules:
                # Another worker may have learned the same rule for the host: one row, its id.
                db.execute(
                    "INSERT INTO learned_rules (host, element, spec, support, pairs, differ, "
                    "evidence, learned_at, learned_fetches, worker) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (host, spec) DO NOTHING",
                    (
                        r.host,
                        r.element,
                        r.spec,
                        r.support,
                        r.pairs,
                        r.differ,
                        r.evidence,
                        r.learned_at,
                        r.learned_fetches,
                        r.worker if r.worker is not None else self._worker,
                    ),
                )
                (rid,) = db.execute(
                    "SELECT id FROM learned_rules WHERE host = ? AND spec = ?", (r.host, r.spec)
                ).fetchone()
                ids.append(int(rid))
        return ids

    def retract_learned_rules(self, retractions: Sequence[tuple[int, float, str]]) -> None:
        if retractions:
            with self._lock:
                self._write().executemany(
                    "UPDATE learned_rules SET retracted_at = coalesce(retracted_at, ?), "
                    "reason = coalesce(reason, ?) WHERE id = ?",
                    [(at, reason, rid) for rid, at, reason in retractions],
                )

    def learned_rules(self) -> list[LearnedRuleRow]:
        with self._lock:
            rows = self._db.execute(f"SELECT {RULE_COLS} FROM learned_rules ORDER BY id").fetchall()
        return [LearnedRuleRow(*r) for r in rows]

    # -- merges ------------------------------------------------------------------------------
    def add_merges(self, merges: Sequence[MergeRow]) -> None:
        if merges:
            with self._lock:
                self._write().executemany(
                    f"INSERT INTO learned_merges ({MERGE_COLS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    [merge_params(m) for m in merges],
                )

    def merges_of(self, rule_ids: Iterable[int]) -> list[MergeRow]:
        out: list[MergeRow] = []
        with self._lock:
            for part in chunks(list(dict.fromkeys(rule_ids)), 900):
                for r in self._db.execute(
                    f"SELECT {MERGE_COLS} FROM learned_merges "
                    f"WHERE rule_id IN ({_marks(len(part))}) ORDER BY rowid",
                    part,
                ):
                    out.append(merge_row(r))
        return out

    def drop_merges(self, rule_ids: Iterable[int]) -> None:
        with self._lock:
            db = self._write()
            for part in chunks(list(dict.fromkeys(rule_ids)), 900):
                db.execute(
                    f"DELETE FROM learned_merges WHERE rule_id IN ({_marks(len(part))})", part
                )

    def merge_counts(self) -> dict[int, tuple[int, int]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT rule_id, sum(checked = 0), sum(checked) FROM learned_merges "
                "GROUP BY rule_id"
            ).fetchall()
        return {int(r): (int(n), int(c)) for r, n, c in rows}

    # -- re-keying ---------------------------------------------------------------------------
    def queued_of_host(self, host: str, limit: int) -> list[StoredURL]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {URL_COLS} FROM urls WHERE state = 'queued' AND host = ? "
                "ORDER BY priority DESC, depth, id LIMIT ?",
                (host, limit),
            ).fetchall()
        return [url_row(r) for r in rows]

    def rekey_urls(self, changes: Sequence[tuple[int, str, str]]) -> list[int]:
        collided: list[int] = []
        with self._lock:
            db = self._write()
            for url_id, old, new in changes:
                # The identity's unique index is the authority: a new identity already stored
                # is a collision (the caller merges a queued row into it), never an error.
                if db.execute("SELECT 1 FROM urls WHERE identity = ?", (new,)).fetchone():
                    collided.append(url_id)
                    continue
                db.execute("UPDATE urls SET identity = ? WHERE id = ?", (new, url_id))
                # The spellings kept for the old identity now belong to the new one.
                db.execute(
                    "INSERT INTO spellings (identity, url) SELECT ?, url FROM spellings "
                    "WHERE identity = ? ON CONFLICT DO NOTHING",
                    (new, old),
                )
                db.execute("DELETE FROM spellings WHERE identity = ?", (old,))
        return collided
