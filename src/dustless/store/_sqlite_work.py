"""The crawl's work in ``SQLiteStore`` (``WorkStore``): batches, URL-seen, admission with its
limits, claims, host leases and the workers table (ARCHITECTURE "Many machines").

A base class of ``SQLiteStore`` (``_sqlite.py`` keeps the connection and the migrations); the
PostgreSQL twin is ``_pg_work.py``. Every method runs under the store's lock, inside its
open write transaction where it writes, so a batch of admissions or a lease is one statement
group and becomes durable with the engine's commit.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from dustless.kinds import LinkKind
from dustless.store._admit import Site as _Site
from dustless.store._admit import decide
from dustless.store._rows import MAX_PARAMS, URL_COLS, chunks, claim_order, marks, url_hash, url_row
from dustless.store._types import (
    AdmitResult,
    Admitted,
    AdmitURL,
    Batch,
    HostLease,
    Limits,
    NewURL,
    StoredURL,
    URLState,
    Verdict,
    WorkerRow,
    WorkLeft,
)

__all__ = ["SQLiteWork"]


class SQLiteWork:
    """Admission, leases, robots.txt and workers; ``SQLiteStore`` sets the connection."""

    _db: sqlite3.Connection
    _lock: threading.RLock
    _worker: str
    _batch: int | None

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
                sql = f"SELECT identity FROM urls WHERE identity IN ({marks(len(part))})"
                known.update(r[0] for r in db.execute(sql, part))
            names = list(dict.fromkeys(u.site for u in urls))
            sites: dict[str, _Site] = {}
            for part in chunks(names, 900):
                sql = f"SELECT site, seed_id, pages FROM sites WHERE site IN ({marks(len(part))})"
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
            sql = f"SELECT identity, id FROM seeds WHERE identity IN ({marks(len(part))})"
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
                    f"AND host IN ({marks(len(part))})",
                    part,
                )
            out: list[HostLease] = []
            for part in chunks(hosts, 900):
                out += [
                    HostLease(h, q, r)
                    for h, q, r in db.execute(
                        f"UPDATE host_work SET owner = ?, lease_until = ? "
                        f"WHERE host IN ({marks(len(part))}) RETURNING host, queued, ready_at",
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
                        f"AND host IN ({marks(len(part))}) RETURNING host",
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

    # -- batches and URLs ----------------------------------------------------------------------

    def start_batch(self, config: str, now: float, batch_time: float | None = None) -> Batch:
        with self._lock:
            db = self._write()
            (last,) = db.execute("SELECT coalesce(max(batch), 0) FROM crawls").fetchone()
            number = int(last) + 1
            bt = now if batch_time is None else batch_time
            db.execute(
                "INSERT INTO crawls (batch, started_at, batch_time, config) VALUES (?, ?, ?, ?)",
                (number, now, bt, config),
            )
            self._batch = number
            return Batch(number, now, bt, config)

    def resume_batch(self) -> Batch | None:
        with self._lock:
            row = self._db.execute(
                "SELECT batch, started_at, batch_time, config, ended_at FROM crawls "
                "ORDER BY batch DESC LIMIT 1"
            ).fetchone()
            if row is None or row[4] is not None:
                return None
            self._write().execute(
                "UPDATE crawls SET resumes = resumes + 1 WHERE batch = ?", (row[0],)
            )
            self._batch = row[0]
            return Batch(*row)

    def end_batch(self, number: int, now: float) -> None:
        with self._lock:
            self._write().execute(
                "UPDATE crawls SET ended_at = coalesce(ended_at, ?) WHERE batch = ?", (now, number)
            )

    def batches(self) -> list[Batch]:
        with self._lock:
            rows = self._db.execute(
                "SELECT batch, started_at, batch_time, config, ended_at FROM crawls ORDER BY batch"
            ).fetchall()
        return [Batch(*r) for r in rows]

    def add_urls(self, batch: Sequence[NewURL]) -> list[bool]:
        if not batch:
            return []
        inserted: set[str] = set()
        with self._lock:
            db = self._write()
            # Multi-row INSERT … ON CONFLICT DO NOTHING RETURNING: one statement per ~3000
            # URLs, and RETURNING names exactly the identities that were new.
            for part in chunks(batch, MAX_PARAMS // 9):
                sql = (
                    "INSERT INTO urls (url, identity, host, depth, kind, seed_id, parent_id, "
                    "priority, state) VALUES "
                    + ",".join(["(?,?,?,?,?,?,?,?,?)"] * len(part))
                    + " ON CONFLICT (identity) DO NOTHING RETURNING identity"
                )
                params: list[Any] = []
                for u in part:
                    params += (
                        u.url,
                        u.identity,
                        u.host,
                        u.depth,
                        u.kind.value,
                        u.seed_id,
                        u.parent_id,
                        u.priority,
                        u.state.value,
                    )
                inserted.update(r[0] for r in db.execute(sql, params))
            # The first occurrence of a new identity in the batch is the inserted one.
            result = []
            for u in batch:
                if u.identity in inserted:
                    inserted.discard(u.identity)
                    result.append(True)
                else:
                    result.append(False)
        return result

    def contains_identities(self, identities: Iterable[str]) -> set[str]:
        ids = list(dict.fromkeys(identities))
        found: set[str] = set()
        with self._lock:
            for part in chunks(ids, 900):
                sql = f"SELECT identity FROM urls WHERE identity IN ({','.join('?' * len(part))})"
                found.update(r[0] for r in self._db.execute(sql, part))
        return found

    def iter_identities(self, chunk: int = 50_000) -> Iterator[list[str]]:
        last = 0
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT id, identity FROM urls WHERE id > ? ORDER BY id LIMIT ?", (last, chunk)
                ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield [r[1] for r in rows]

    def claim_queued(
        self, limit: int, *, hosts: Sequence[str] | None = None, per_host: int | None = None
    ) -> list[StoredURL]:
        if limit <= 0:
            return []
        pick = (
            "SELECT id FROM urls WHERE state = 'queued'{where} "
            "ORDER BY priority DESC, depth, id LIMIT ?"
        )
        # One UPDATE … RETURNING per host (or one in all): the claim is a single statement,
        # so two workers sharing the DB can never claim the same URL.
        claim = f"UPDATE urls SET state = 'in-flight' WHERE id IN ({pick}) RETURNING {URL_COLS}"
        rows: list[StoredURL] = []
        with self._lock:
            db = self._write()
            if hosts is None:
                rows = [url_row(r) for r in db.execute(claim.format(where=""), (limit,))]
                rows.sort(key=claim_order)
            else:
                each = limit if per_host is None else per_host
                for host in hosts:
                    want = min(each, limit - len(rows))
                    if want <= 0:
                        break
                    got = [
                        url_row(r)
                        for r in db.execute(claim.format(where=" AND host = ?"), (host, want))
                    ]
                    got.sort(key=claim_order)
                    rows += got
        return rows

    def queued(self, after_id: int = 0, limit: int = 1000) -> list[StoredURL]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {URL_COLS} FROM urls WHERE state = 'queued' AND id > ? "
                "ORDER BY id LIMIT ?",
                (after_id, limit),
            ).fetchall()
        return [url_row(r) for r in rows]

    def set_url_state(self, ids: Sequence[int], state: URLState) -> None:
        with self._lock:
            db = self._write()
            for part in chunks(list(ids), 900):
                db.execute(
                    f"UPDATE urls SET state = ? WHERE id IN ({','.join('?' * len(part))})",
                    [state.value, *part],
                )
