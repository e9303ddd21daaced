"""Hosts, robots.txt, seeds and parties (``SiteStore``) in ``SQLiteStore`` (seed 004 §2).

A base class of ``SQLiteStore``; the PostgreSQL twin is ``_pg_sites.py``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence

from dustless.store._admit import Site as _Site
from dustless.store._rows import (
    chunks,
    marks,
    url_hash,
)
from dustless.store._types import (
    HostInfo,
    NewSeed,
    RobotsRow,
    SeedRow,
    SeedUpdate,
)

__all__ = ["SQLiteSites"]


class SQLiteSites:
    """Hosts, robots.txt, seeds and sites; ``SQLiteStore`` sets the connection."""

    _db: sqlite3.Connection
    _lock: threading.RLock
    _batch: int | None

    def _write(self) -> sqlite3.Connection:  # pragma: no cover - SQLiteStore's
        raise NotImplementedError

    def update_hosts(self, batch: Sequence[HostInfo]) -> None:
        if not batch:
            return
        with self._lock:
            self._write().executemany(
                "INSERT OR REPLACE INTO hosts (name, ip, robots_state, robots_fetched_at, "
                "crawl_delay, sitemaps) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        h.name,
                        h.ip,
                        h.robots_state,
                        h.robots_fetched_at,
                        h.crawl_delay,
                        json.dumps(list(h.sitemaps)),
                    )
                    for h in batch
                ],
            )

    def hosts(self, names: Iterable[str] | None = None) -> dict[str, HostInfo]:
        cols = "name, ip, robots_state, robots_fetched_at, crawl_delay, sitemaps"
        with self._lock:
            if names is None:
                rows = self._db.execute(f"SELECT {cols} FROM hosts").fetchall()
            else:
                rows = []
                for part in chunks(list(dict.fromkeys(names)), 900):
                    marks = ",".join("?" * len(part))
                    rows += self._db.execute(
                        f"SELECT {cols} FROM hosts WHERE name IN ({marks})", part
                    ).fetchall()
        return {r[0]: HostInfo(r[0], r[1], r[2], r[3], r[4], tuple(json.loads(r[5]))) for r in rows}

    def add_seeds(self, batch: Sequence[NewSeed]) -> list[tuple[int, bool]]:
        out: list[tuple[int, bool]] = []
        with self._lock:
            db = self._write()
            for s in batch:
                cur = db.execute(
                    "INSERT INTO seeds (url, identity, url_hash, host, discovered_from, "
                    "created_batch) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (identity) DO NOTHING",
                    (
                        s.url,
                        s.identity,
                        url_hash(s.identity),
                        s.host,
                        s.discovered_from,
                        s.created_batch if s.created_batch is not None else self._batch,
                    ),
                )
                if cur.rowcount == 1:
                    out.append((int(cur.lastrowid or 0), True))
                else:
                    (sid,) = db.execute(
                        "SELECT id FROM seeds WHERE identity = ?", (s.identity,)
                    ).fetchone()
                    out.append((int(sid), False))
        return out

    def update_seeds(self, batch: Sequence[SeedUpdate]) -> None:
        with self._lock:
            self._write().executemany(
                "UPDATE seeds SET content_sha1 = coalesce(?, content_sha1), "
                "state = coalesce(?, state), party_seconds = coalesce(?, party_seconds) "
                "WHERE id = ?",
                [(s.content_sha1, s.state, s.party_seconds, s.id) for s in batch],
            )

    def seeds(self) -> list[SeedRow]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, url, identity, url_hash, host, content_sha1, state, party_seconds, "
                "discovered_from, created_batch FROM seeds ORDER BY id"
            ).fetchall()
        return [SeedRow(*r) for r in rows]

    def robots(self, origins: Iterable[str]) -> dict[str, RobotsRow]:
        out: dict[str, RobotsRow] = {}
        with self._lock:
            for part in chunks(list(dict.fromkeys(origins)), 900):
                for origin, status, body, at in self._db.execute(
                    "SELECT origin, status, body, fetched_at FROM robots "
                    f"WHERE origin IN ({marks(len(part))})",
                    part,
                ):
                    out[origin] = RobotsRow(origin, status, bytes(body), at)
        return out

    def put_robots(self, rows: Sequence[RobotsRow]) -> None:
        if not rows:
            return
        with self._lock:
            self._write().executemany(
                "INSERT INTO robots (origin, status, body, fetched_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (origin) DO UPDATE SET status = excluded.status, "
                "body = excluded.body, fetched_at = excluded.fetched_at",
                [(r.origin, r.status, r.body, r.fetched_at) for r in rows],
            )

    def has_seeds(self) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM seeds LIMIT 1").fetchone() is not None

    def rebuild_sites(self, site_of_host: Callable[[str], str]) -> int:
        with self._lock:
            if self._db.execute("SELECT 1 FROM sites LIMIT 1").fetchone() is not None:
                return 0
            db = self._write()
            sites: dict[str, _Site] = {}
            # A party exists where a seed's URL was admitted (queued or fetched), 004 §2.
            for seed_id, host in db.execute(
                "SELECT DISTINCT u.seed_id, u.host FROM urls u "
                "JOIN seeds s ON s.identity = u.identity ORDER BY u.id"
            ):
                sites.setdefault(site_of_host(host), _Site(seed_id, 0))
            for host, n in db.execute(
                "SELECT host, count(*) FROM urls WHERE state != 'skipped' GROUP BY host"
            ):
                sites.setdefault(site_of_host(host), _Site(None, 0)).pages += n
            db.executemany(
                "INSERT INTO sites (site, seed_id, pages) VALUES (?, ?, ?)",
                [(name, s.seed_id, s.pages) for name, s in sites.items()],
            )
            return len(sites)
