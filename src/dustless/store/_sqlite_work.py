"""The worker side of ``SQLiteStore``: admission with its limits, host leases, robots.txt,
WARC commit marks and the workers table (ARCHITECTURE "Many machines").

A base class of ``SQLiteStore`` (``_sqlite.py`` keeps the connection, the migrations and the
URL and fetch writes). Every method runs under the store's lock, inside its open write
transaction where it writes, so a batch of admissions or a lease is one statement group and
becomes durable with the engine's commit.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from dustless.kinds import LinkKind
from dustless.store._admit import Site as _Site
from dustless.store._admit import decide
from dustless.store._rows import MAX_PARAMS, URL_COLS, chunks, url_hash, url_row
from dustless.store._types import (
    PROBE_PREFIX,
    AdmitResult,
    Admitted,
    AdmitURL,
    HostLease,
    Limits,
    RobotsRow,
    StoredURL,
    URLDate,
    Verdict,
    WorkerRow,
    WorkLeft,
)

__all__ = ["SQLiteWork"]


def _marks(n: int) -> str:
    return ",".join("?" * n)


class SQLiteWork:
    """Admission, leases, robots.txt and workers; ``SQLiteStore`` sets the connection."""

    _db: sqlite3.Connection
    _lock: threading.RLock
    _worker: str

    def _write(self) -> sqlite3.Connection:  # pragma: no cover - SQLiteStore's
        raise NotImplementedError

    # -- admission ---------------------------------------------------------------------------
    def admit(self, urls: Sequence[AdmitURL], limits: Limits, batch: int) -> AdmitResult:
        if not urls:
            return AdmitResult([], 0)
        with self._lock:
            db = self._write()
            seed_ids, added = self._candidate_seeds(db, urls, batch)
            identities = list(dict.fromkeys(u.identity for u in urls))
            known: set[str] = set()
            for part in chunks(identities, 900):
                sql = f"SELECT identity FROM urls WHERE identity IN ({_marks(len(part))})"
                known.update(r[0] for r in db.execute(sql, part))
            names = list(dict.fromkeys(u.site for u in urls))
            sites: dict[str, _Site] = {}
            for part in chunks(names, 900):
                sql = f"SELECT site, seed_id, pages FROM sites WHERE site IN ({_marks(len(part))})"
                for site, seed_id, pages in db.execute(sql, part):
                    sites[site] = _Site(seed_id, pages)
            total = n_sites = 0
            if limits.max_pages is not None or limits.max_sites is not None:
                total, n_sites = db.execute(
                    "SELECT coalesce(sum(pages), 0), count(*) FROM sites"
                ).fetchone()
            before = {name: s.pages for name, s in sites.items()}
            verdicts, rows = decide(
                urls,
                limits,
                known=known,
                seed_ids=seed_ids,
                sites=sites,
                total=total,
                n_sites=n_sites,
            )
            ids = self._insert_urls(db, rows)
            db.executemany(
                "INSERT INTO sites (site, seed_id, pages) VALUES (?, ?, ?) "
                "ON CONFLICT (site) DO UPDATE SET pages = pages + excluded.pages",
                [
                    (name, s.seed_id, s.pages - before.get(name, 0))
                    for name, s in sites.items()
                    if s.pages != before.get(name, 0) or s.new
                ],
            )
        row_of = iter(ids)
        out = [
            Admitted(v.verdict, next(row_of), v.seed_id, v.depth)
            if v.verdict is Verdict.QUEUED
            else v
            for v in verdicts
        ]
        return AdmitResult(out, added)

    def _candidate_seeds(
        self, db: sqlite3.Connection, urls: Sequence[AdmitURL], batch: int
    ) -> tuple[dict[str, int], int]:
        """004 §2: every outside link is a candidate seed; one not known yet becomes a seed
        row (the seed table is their authority). Returns each one's seed id, and how many
        rows were new."""
        cands = list({u.identity: u for u in urls if u.external or u.given}.values())
        if not cands:
            return {}, 0
        (before,) = db.execute("SELECT count(*) FROM seeds").fetchone()
        db.executemany(
            "INSERT INTO seeds (url, identity, url_hash, host, discovered_from, created_batch) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (identity) DO NOTHING",
            [(u.url, u.identity, url_hash(u.identity), u.host, u.parent_id, batch) for u in cands],
        )
        (after,) = db.execute("SELECT count(*) FROM seeds").fetchone()
        ids: dict[str, int] = {}
        for part in chunks([u.identity for u in cands], 900):
            sql = f"SELECT identity, id FROM seeds WHERE identity IN ({_marks(len(part))})"
            ids.update((identity, int(i)) for identity, i in db.execute(sql, part))
        return ids, int(after) - int(before)

    @staticmethod
    def _insert_urls(
        db: sqlite3.Connection, rows: Sequence[tuple[AdmitURL, int | None, int, LinkKind]]
    ) -> list[int]:
        ids: dict[str, int] = {}
        for part in chunks(rows, MAX_PARAMS // 9):
            sql = (
                "INSERT INTO urls (url, identity, host, depth, kind, seed_id, parent_id, "
                "priority, state) VALUES "
                + ",".join(["(?,?,?,?,?,?,?,?,'queued')"] * len(part))
                + " RETURNING identity, id"
            )
            params: list[Any] = []
            for u, seed_id, depth, kind in part:
                params += (
                    u.url,
                    u.identity,
                    u.host,
                    depth,
                    kind.value,
                    seed_id,
                    u.parent_id,
                    u.priority,
                )
            ids.update(db.execute(sql, params).fetchall())
        return [ids[u.identity] for u, *_ in rows]

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

    # -- URL sources (sitemaps, feeds) ---------------------------------------------------------
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

    # -- leases ------------------------------------------------------------------------------
    def lease_hosts(self, limit: int, *, now: float, ttl: float) -> list[HostLease]:
        if limit <= 0:
            return []
        me = self._worker
        with self._lock:
            db = self._write()
            # Free hosts with work, and hosts whose owner let the lease run out (it died, or
            # stalled): those may hold its in-flight URLs even with nothing queued.
            rows = db.execute(
                "SELECT host, owner FROM host_work "
                "WHERE (owner IS NULL AND queued > 0) OR (owner IS NOT NULL AND lease_until < ?) "
                "ORDER BY ready_at, host LIMIT ?",
                (now, limit),
            ).fetchall()
            if not rows:
                return []
            hosts = [h for h, _ in rows]
            taken_over = [h for h, owner in rows if owner is not None]
            for part in chunks(taken_over, 900):
                # What the last owner had claimed is fetched again, once, by the new one.
                db.execute(
                    "UPDATE urls SET state = 'queued' WHERE state = 'in-flight' "
                    f"AND host IN ({_marks(len(part))})",
                    part,
                )
            out: list[HostLease] = []
            for part in chunks(hosts, 900):
                out += [
                    HostLease(h, q, r)
                    for h, q, r in db.execute(
                        f"UPDATE host_work SET owner = ?, lease_until = ? "
                        f"WHERE host IN ({_marks(len(part))}) RETURNING host, queued, ready_at",
                        [me, now + ttl, *part],
                    )
                ]
            return out

    def renew_leases(self, hosts: Sequence[str], *, now: float, ttl: float) -> set[str]:
        me = self._worker
        kept: set[str] = set()
        with self._lock:
            db = self._write()
            db.execute("UPDATE workers SET seen_at = ? WHERE name = ?", (now, me))
            for part in chunks(list(hosts), 900):
                kept.update(
                    r[0]
                    for r in db.execute(
                        f"UPDATE host_work SET lease_until = ? WHERE owner = ? "
                        f"AND host IN ({_marks(len(part))}) RETURNING host",
                        [now + ttl, me, *part],
                    )
                )
        return kept

    def release_hosts(self, ready_at: Mapping[str, float]) -> None:
        if not ready_at:
            return
        with self._lock:
            self._write().executemany(
                "UPDATE host_work SET owner = NULL, lease_until = NULL, ready_at = ? "
                "WHERE host = ? AND owner = ?",
                [(when, host, self._worker) for host, when in ready_at.items()],
            )

    def expect_work_left(self, now: float, alive_within: float | None = None) -> None:
        return  # one process, no network: work_left asks when asked

    def work_left(self, now: float, alive_within: float | None = None) -> WorkLeft:
        me = self._worker
        with self._lock:
            # This worker's live leases are its own business (``HostTable`` holds them).
            queued, elsewhere = self._db.execute(
                "SELECT "
                "coalesce(sum((queued > 0 AND (owner IS NULL OR lease_until < ?)) "
                "OR (owner IS NOT NULL AND owner != ? AND lease_until < ?)), 0), "
                "coalesce(sum(owner IS NOT NULL AND owner != ? AND lease_until >= ?), 0) "
                "FROM host_work WHERE queued > 0 OR owner IS NOT NULL",
                (now, me, now, me, now),
            ).fetchone()
            alive = 0
            if alive_within is not None:
                (alive,) = self._db.execute(
                    "SELECT count(*) FROM workers WHERE seen_at >= ?", (now - alive_within,)
                ).fetchone()
        return WorkLeft(int(queued), int(elsewhere), int(alive))

    def requeue_in_flight(self) -> int:
        me = self._worker
        with self._lock:
            db = self._write()
            cur = db.execute(
                "UPDATE urls SET state = 'queued' WHERE state = 'in-flight' AND host IN "
                "(SELECT host FROM host_work WHERE owner = ? OR owner IS NULL)",
                (me,),
            )
            db.execute(
                "UPDATE host_work SET owner = NULL, lease_until = NULL WHERE owner = ?", (me,)
            )
            return cur.rowcount

    # -- robots.txt ----------------------------------------------------------------------------
    def robots(self, origins: Iterable[str]) -> dict[str, RobotsRow]:
        out: dict[str, RobotsRow] = {}
        with self._lock:
            for part in chunks(list(dict.fromkeys(origins)), 900):
                for origin, status, body, at in self._db.execute(
                    "SELECT origin, status, body, fetched_at FROM robots "
                    f"WHERE origin IN ({_marks(len(part))})",
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

    # -- WARC commit marks -----------------------------------------------------------------------
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

    # -- workers ---------------------------------------------------------------------------------
    def register_worker(self, directory: str, now: float) -> None:
        import os
        import socket

        with self._lock:
            self._write().execute(
                "INSERT INTO workers (name, dir, machine, pid, started_at, seen_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET dir = excluded.dir, "
                "machine = excluded.machine, pid = excluded.pid, seen_at = excluded.seen_at",
                (self._worker, directory, socket.gethostname(), os.getpid(), now, now),
            )

    def workers(self) -> list[WorkerRow]:
        with self._lock:
            rows = self._db.execute(
                "SELECT name, dir, machine, pid, started_at, seen_at FROM workers ORDER BY name"
            ).fetchall()
        return [WorkerRow(*r) for r in rows]

    # -- fallback spellings (crawl/spellings.py) --------------------------------------------------
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
                    f"SELECT url FROM urls WHERE identity IN ({_marks(len(names))}) ORDER BY id",
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
                    f"FROM urls u WHERE u.identity IN ({_marks(len(part))}) ORDER BY u.id",
                    part,
                ).fetchall()
        rows.sort(key=lambda r: r[0])  # by id across the parts
        return [(url_row(r[:10]), r[10], r[11]) for r in rows]

    def spelling_bases(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT DISTINCT identity FROM spellings")]

    def collection_ids(self, kinds: Sequence[LinkKind] | None = None) -> list[int]:
        sql = (
            "SELECT id FROM urls WHERE state IN ('done', 'queued') AND substr(identity, 1, ?) != ?"
        )
        params: list[Any] = [len(PROBE_PREFIX), PROBE_PREFIX]
        if kinds is not None:
            sql += f" AND kind IN ({_marks(len(kinds))})"
            params += [k.value for k in kinds]
        with self._lock:
            return [int(r[0]) for r in self._db.execute(sql + " ORDER BY id", params)]

    def has_seeds(self) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM seeds LIMIT 1").fetchone() is not None

    def category_names(self, url_ids: Iterable[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        with self._lock:
            for part in chunks(list(dict.fromkeys(url_ids)), 900):
                out.update(
                    self._db.execute(
                        "SELECT id, category_name FROM urls WHERE category_name IS NOT NULL "
                        f"AND category_name != '' AND id IN ({_marks(len(part))})",
                        part,
                    ).fetchall()
                )
        return out
