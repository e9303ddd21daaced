"""The worker side of ``PostgresCrawlStore``: admission with limits that hold across
workers, host leases, robots.txt, WARC commit marks and the workers table.

Concurrency, in the DB's terms (ARCHITECTURE "Many machines"):

* **Admission** reads and writes in one transaction of two round trips. It first takes
  transaction-scoped advisory locks: one per site involved (in key order, so two workers
  never wait on each other in a cycle) and, when ``--max-pages`` or ``--max-sites`` is set,
  one for the totals. While a worker holds a site's lock no other can admit URLs to that
  site or start its party, so the counts it read stay true until it commits: the limits
  hold across workers, and a new site gets exactly one party. The URL insert still says
  ``ON CONFLICT DO NOTHING``: the identity's unique index stays the authority.
* **Leases** are taken with ``SELECT … FOR UPDATE SKIP LOCKED``: two workers leasing at once
  take different hosts and never wait for each other. A lease that ran out is taken over in
  the same statement that gives its URLs in flight back to the queue.
* Rows of ``host_work`` that a statement updates are locked in host order (the triggers
  upsert in host order, renewals and releases lock ``ORDER BY host FOR UPDATE`` first), so
  writers meet in one order. A deadlock that still happens is rolled back and replayed
  (``_pg_conn.py``).

Worker heartbeats (``workers.seen_at``) ride with the lease calls a worker makes anyway.
The big arrays (admission's identities and rows) go in binary (``%b``): psycopg's text
dumper of a list is pure Python.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from dustless.errors import DatabaseAway
from dustless.store._admit import Site, decide
from dustless.store._pg_conn import Conn, PgConnection, Read, columns, reader
from dustless.store._pg_schema import LOCK_CLASS, LOCK_MANY, LOCK_SITES, LOCK_TOTALS, lock_key
from dustless.store._rows import url_hash
from dustless.store._types import (
    AdmitResult,
    Admitted,
    AdmitURL,
    HostLease,
    Limits,
    RobotsRow,
    URLDate,
    Verdict,
    WorkerRow,
    WorkLeft,
)

__all__ = ["PgWork"]

Rows = list[tuple[Any, ...]]

# A lease taken counts one more epoch (fencing, ``_pg_schema.py`` V8) — but a lease of this
# worker's own that ran out unnoticed by anyone is renewed as it was: its URLs in flight
# stay in flight and its epoch stands. ``held``: after a lost answer (``_pg_conn``), the
# hosts this worker knows it holds; one it holds in the DB but not here is one the lost
# answer gave it, and is taken again.
_LEASE = """
WITH pick AS (
    SELECT host, owner FROM host_work
    WHERE (owner IS NULL AND queued > 0) OR (owner IS NOT NULL AND lease_until < %(now)s)
        OR (owner = %(me)s AND NOT host = ANY(%(held)s::text[]))
    ORDER BY ready_at, host LIMIT %(limit)s FOR UPDATE SKIP LOCKED
), back AS (
    UPDATE urls SET state = 'queued' WHERE state = 'in-flight'
    AND host IN (SELECT host FROM pick WHERE owner <> %(me)s) RETURNING host
), leased AS (
    UPDATE host_work w SET owner = %(me)s, lease_until = %(until)s,
        epoch = CASE WHEN pick.owner = %(me)s THEN w.epoch ELSE w.epoch + 1 END
    FROM pick WHERE w.host = pick.host RETURNING w.host, w.queued, w.ready_at, w.epoch
)
SELECT l.host, l.queued + (SELECT count(*) FROM back b WHERE b.host = l.host), l.ready_at,
    l.epoch
FROM leased l
"""
# Renewed only under the epoch this worker holds: a host it lost and took again since (its
# lease ran out, another took it over and gave it back) is renewed as the new lease.
_RENEW = """
WITH mine AS (
    SELECT w.host FROM host_work w
    JOIN unnest(%(hosts)s::text[], %(epochs)s::bigint[]) AS v(host, epoch)
        ON v.host = w.host AND v.epoch = w.epoch
    WHERE w.owner = %(me)s ORDER BY w.host FOR UPDATE OF w
)
UPDATE host_work w SET lease_until = %(until)s FROM mine WHERE w.host = mine.host
RETURNING w.host
"""
_RELEASE = """
WITH mine AS (
    SELECT host FROM host_work WHERE owner = %(me)s AND host = ANY(%(hosts)s::text[])
    ORDER BY host FOR UPDATE
)
UPDATE host_work w SET owner = NULL, lease_until = NULL, ready_at = v.ready_at
FROM mine JOIN unnest(%(hosts)s::text[], %(ready)s::float8[]) AS v(host, ready_at)
    ON v.host = mine.host
WHERE w.host = mine.host
"""
_WORK_LEFT = """
SELECT
    count(*) FILTER (WHERE (queued > 0 AND (owner IS NULL OR lease_until < %(now)s))
        OR (owner <> %(me)s AND lease_until < %(now)s)),
    count(*) FILTER (WHERE owner <> %(me)s AND lease_until >= %(now)s),
    (SELECT count(*) FROM workers WHERE seen_at >= %(since)s)
FROM host_work WHERE queued > 0 OR owner IS NOT NULL
"""
_HEARTBEAT = "UPDATE workers SET seen_at = greatest(seen_at, %s) WHERE name = %s"


def _work_left(rows: Rows) -> WorkLeft:
    ((queued, elsewhere, alive),) = rows
    return WorkLeft(int(queued), int(elsewhere), int(alive))


class PgWork:
    """Admission, leases, robots.txt and workers; ``PostgresCrawlStore`` sets ``_db``."""

    _db: PgConnection
    _worker: str
    _epochs: dict[str, int]
    _claims: dict[int, tuple[str, int | None]]
    _left: WorkLeft | None  # what the last rider read (``expect_work_left``)
    _lost_lease: bool  # a lease round's answer was lost (``lease_hosts``)

    # -- admission ---------------------------------------------------------------------------
    def admit(self, urls: Sequence[AdmitURL], limits: Limits, batch: int) -> AdmitResult:
        if not urls:
            return AdmitResult([], 0)
        cands = list({u.identity: u for u in urls if u.external or u.given}.values())
        identities = list(dict.fromkeys(u.identity for u in urls))
        names = list(dict.fromkeys(u.site for u in urls))
        totals = limits.max_pages is not None or limits.max_sites is not None
        seed_rows = [
            (u.url, u.identity, url_hash(u.identity), u.host, u.parent_id, batch) for u in cands
        ]

        def send(conn: Conn) -> Read[AdmitResult]:
            if totals:
                conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, LOCK_TOTALS))
            conn.execute(LOCK_MANY, (LOCK_SITES, sorted({lock_key(s) for s in names})))
            # 004 §2: every outside link is a candidate seed; a new one becomes a seed row.
            new_seeds = conn.execute(
                "INSERT INTO seeds (url, identity, url_hash, host, discovered_from, "
                "created_batch) SELECT * FROM unnest(%b::text[], %b::text[], %b::bigint[], "
                "%b::text[], %b::bigint[], %b::int[]) ON CONFLICT (identity) DO NOTHING "
                "RETURNING 1",
                columns(seed_rows, 6),
            )
            seed_ids = conn.execute(
                "SELECT identity, id FROM seeds WHERE identity = ANY(%b::text[])",
                ([u.identity for u in cands],),
            )
            known = conn.execute(
                "SELECT identity FROM urls WHERE identity = ANY(%b::text[])", (identities,)
            )
            total = (
                conn.execute("SELECT coalesce(sum(pages), 0), count(*) FROM sites")
                if totals
                else None
            )
            sites = conn.execute(
                "SELECT site, seed_id, pages FROM sites WHERE site = ANY(%s::text[])", (names,)
            )
            # What the decision needs, read under the locks: the middle of the transaction.
            parties = {s: Site(seed_id, int(p)) for s, seed_id, p in self._db.flush(sites)}
            n_pages, n_sites = (0, 0) if total is None else total.fetchall()[0]
            before = {name: s.pages for name, s in parties.items()}
            verdicts, rows = decide(
                urls,
                limits,
                known={r[0] for r in known.fetchall()},
                seed_ids={identity: int(i) for identity, i in seed_ids.fetchall()},
                sites=parties,
                total=int(n_pages),
                n_sites=int(n_sites),
            )
            url_rows = [
                (u.url, u.identity, u.host, depth, kind.value, seed_id, u.parent_id, u.priority)
                for u, seed_id, depth, kind in rows
            ]
            inserted = conn.execute(
                "INSERT INTO urls (url, identity, host, depth, kind, seed_id, parent_id, "
                "priority, state) SELECT *, 'queued' FROM unnest(%b::text[], %b::text[], "
                "%b::text[], %b::int[], %b::text[], %b::bigint[], %b::bigint[], %b::int[]) "
                "ON CONFLICT (identity) DO NOTHING RETURNING identity, id",
                columns(url_rows, 8),
            )
            site_rows = sorted(
                (name, s.seed_id, s.pages - before.get(name, 0))
                for name, s in parties.items()
                if s.pages != before.get(name, 0) or s.new
            )
            conn.execute(
                "INSERT INTO sites AS s (site, seed_id, pages) SELECT * FROM "
                "unnest(%s::text[], %s::bigint[], %s::bigint[]) "
                "ON CONFLICT (site) DO UPDATE SET pages = s.pages + excluded.pages",
                columns(site_rows, 3),
            )

            def read() -> AdmitResult:
                ids = {identity: int(i) for identity, i in inserted.fetchall()}
                out: list[Admitted] = []
                for v, u in zip(verdicts, urls, strict=True):
                    if v.verdict is not Verdict.QUEUED:
                        out.append(v)
                    elif u.identity in ids:
                        out.append(Admitted(v.verdict, ids.pop(u.identity), v.seed_id, v.depth))
                    else:  # another worker stored it meanwhile (a URL of another site)
                        out.append(Admitted(Verdict.KNOWN))
                return AdmitResult(out, len(new_seeds.fetchall()))

            return read

        return self._db.exchange(send, writes_last=True)

    def rebuild_sites(self, site_of_host: Callable[[str], str]) -> int:
        if self._db.rows("SELECT 1 FROM sites LIMIT 1"):
            return 0

        def send(conn: Conn) -> Read[tuple[Rows, Rows]]:
            parties = reader(
                conn.execute(
                    "SELECT u.seed_id, u.host FROM urls u "
                    "JOIN seeds s ON s.identity = u.identity ORDER BY u.id"
                )
            )
            counts = reader(
                conn.execute(
                    "SELECT host, count(*) FROM urls WHERE state <> 'skipped' GROUP BY host"
                )
            )
            return lambda: (parties(), counts())

        party_rows, count_rows = self._db.exchange(send)
        sites: dict[str, Site] = {}
        # A party exists where a seed's URL was admitted (queued or fetched), 004 §2.
        for seed_id, host in party_rows:
            sites.setdefault(site_of_host(host), Site(seed_id, 0))
        for host, n in count_rows:
            sites.setdefault(site_of_host(host), Site(None, 0)).pages += int(n)
        rows = sorted((name, s.seed_id, s.pages) for name, s in sites.items())
        self._db.rows(
            "INSERT INTO sites (site, seed_id, pages) SELECT * FROM "
            "unnest(%s::text[], %s::bigint[], %s::bigint[]) ON CONFLICT (site) DO NOTHING",
            columns(rows, 3),
        )
        return len(sites)

    # -- URL sources (sitemaps, feeds) ---------------------------------------------------------
    def record_dates(self, dates: Sequence[URLDate]) -> int:
        if not dates:
            return 0
        # One row per URL and batch, the last reading of the batch (an upsert may not touch
        # a row twice in one statement, so the readings are reduced here first).
        last = {(d.identity, d.batch): d for d in dates}
        rows = sorted(last.values(), key=lambda d: (d.identity, d.batch))

        def send(conn: Conn) -> Read[Rows]:
            return reader(
                conn.execute(
                    "INSERT INTO url_dates AS d (url_id, batch, lastmod, changefreq, source_id) "
                    "SELECT u.id, v.batch, v.lastmod, v.changefreq, v.source_id FROM unnest("
                    "%s::text[], %s::int[], %s::float8[], %s::text[], %s::bigint[]) "
                    "AS v(identity, batch, lastmod, changefreq, source_id) "
                    "JOIN urls u ON u.identity = v.identity ORDER BY u.id, v.batch "
                    "ON CONFLICT (url_id, batch) DO UPDATE SET lastmod = excluded.lastmod, "
                    "changefreq = excluded.changefreq, source_id = excluded.source_id "
                    "RETURNING (SELECT identity FROM urls WHERE id = d.url_id)",
                    columns(
                        [(d.identity, d.batch, d.lastmod, d.changefreq, d.source_id) for d in rows],
                        5,
                    ),
                )
            )

        held = {r[0] for r in self._db.exchange(send)}
        # As SQLite counts them: every reading of a URL the crawl holds wrote a row.
        return sum(1 for d in dates if d.identity in held)

    # -- leases ------------------------------------------------------------------------------
    def lease_hosts(self, limit: int, *, now: float, ttl: float) -> list[HostLease]:
        if limit <= 0:
            return []
        me = self._worker
        epochs = self._epochs

        def send(conn: Conn) -> Read[Rows]:
            conn.execute(_HEARTBEAT, (now, me))
            # A replay, or a lease round whose answer was lost (``DatabaseAway``): the hosts
            # leased to this worker it does not know of are those the lost answer held.
            lost = self._db.replaying or self._lost_lease
            held = list(epochs) if lost else None
            return reader(
                conn.execute(
                    _LEASE,
                    {"now": now, "limit": limit, "me": me, "until": now + ttl, "held": held},
                )
            )

        try:
            rows = self._db.exchange(send)
        except DatabaseAway as exc:
            self._lost_lease = self._lost_lease or exc.sent
            raise
        self._lost_lease = False
        for h, _q, _r, epoch in rows:
            epochs[h] = int(epoch)
        return [HostLease(h, int(q), float(r)) for h, q, r, _e in rows]

    def renew_leases(self, hosts: Sequence[str], *, now: float, ttl: float) -> set[str]:
        me = self._worker
        epochs = self._epochs
        names = [h for h in hosts if h in epochs]

        def send(conn: Conn) -> Read[Rows]:
            conn.execute(_HEARTBEAT, (now, me))
            return reader(
                conn.execute(
                    _RENEW,
                    {
                        "me": me,
                        "hosts": names,
                        "epochs": [epochs[h] for h in names],
                        "until": now + ttl,
                    },
                )
            )

        kept = {r[0] for r in self._db.exchange(send)}
        for host in hosts:
            if host not in kept:
                epochs.pop(host, None)  # lost: what was claimed under it is refused
        return kept

    def release_hosts(self, ready_at: Mapping[str, float]) -> None:
        if ready_at:
            for host in ready_at:
                self._epochs.pop(host, None)
            self._db.defer(
                _RELEASE,
                {"me": self._worker, "hosts": list(ready_at), "ready": list(ready_at.values())},
            )

    def expect_work_left(self, now: float, alive_within: float | None = None) -> None:
        self._left = None

        def heard(rows: Rows) -> None:
            self._left = _work_left(rows)

        self._db.ride(self._ask_work_left(now, alive_within), heard)

    def work_left(self, now: float, alive_within: float | None = None) -> WorkLeft:
        left, self._left = self._left, None
        if left is not None:
            return left  # read at the end of the last exchange (``expect_work_left``)
        self._db.unride()  # no exchange came: this one sends the writes, as the rider would
        return _work_left(self._db.exchange(self._ask_work_left(now, alive_within)))

    def _ask_work_left(
        self, now: float, alive_within: float | None
    ) -> Callable[[Conn], Read[Rows]]:
        me = self._worker
        since = None if alive_within is None else now - alive_within

        def send(conn: Conn) -> Read[Rows]:
            conn.execute(_HEARTBEAT, (now, me))
            return reader(conn.execute(_WORK_LEFT, {"me": me, "now": now, "since": since}))

        return send

    def requeue_in_flight(self) -> int:
        me = self._worker

        def send(conn: Conn) -> Read[Rows]:
            back = reader(
                conn.execute(
                    "WITH back AS (UPDATE urls SET state = 'queued' WHERE state = 'in-flight' "
                    "AND host IN (SELECT host FROM host_work WHERE owner = %s OR owner IS NULL) "
                    "RETURNING 1) SELECT count(*) FROM back",
                    (me,),
                )
            )
            conn.execute(
                "UPDATE host_work SET owner = NULL, lease_until = NULL WHERE host IN "
                "(SELECT host FROM host_work WHERE owner = %s ORDER BY host FOR UPDATE)",
                (me,),
            )
            return back

        ((n,),) = self._db.exchange(send)
        self._epochs.clear()
        self._claims.clear()
        return int(n)

    # -- robots.txt ----------------------------------------------------------------------------
    def robots(self, origins: Iterable[str]) -> dict[str, RobotsRow]:
        wanted = list(dict.fromkeys(origins))
        if not wanted:
            return {}
        rows = self._db.rows(
            "SELECT origin, status, body, fetched_at FROM robots WHERE origin = ANY(%s::text[])",
            (wanted,),
        )
        return {o: RobotsRow(o, s, bytes(b), at) for o, s, b, at in rows}

    def put_robots(self, rows: Sequence[RobotsRow]) -> None:
        if not rows:
            return
        last = sorted({r.origin: r for r in rows}.items())
        self._db.defer(
            "INSERT INTO robots (origin, status, body, fetched_at) SELECT * FROM "
            "unnest(%s::text[], %s::int[], %s::bytea[], %s::float8[]) ON CONFLICT (origin) "
            "DO UPDATE SET status = excluded.status, body = excluded.body, "
            "fetched_at = excluded.fetched_at",
            columns([(r.origin, r.status, r.body, r.fetched_at) for _, r in last], 4),
        )

    # -- WARC commit marks -----------------------------------------------------------------------
    def warc_committed(self, ends: Mapping[str, int]) -> None:
        if not ends:
            return
        names = sorted(ends)
        self._db.defer(
            "INSERT INTO warc_files (name, worker, committed_end) SELECT v.name, %s, v.e FROM "
            "unnest(%s::text[], %s::bigint[]) AS v(name, e) "
            "ON CONFLICT (name) DO UPDATE SET committed_end = excluded.committed_end",
            (self._worker, names, [ends[n] for n in names]),
        )

    def warc_committed_ends(self) -> dict[str, int]:
        rows = self._db.rows(
            "SELECT name, committed_end FROM warc_files WHERE worker = %s OR worker IS NULL",
            (self._worker,),
        )
        return {name: int(end) for name, end in rows}

    # -- workers ---------------------------------------------------------------------------------
    def register_worker(self, directory: str, now: float) -> None:
        self._db.rows(
            "INSERT INTO workers (name, dir, machine, pid, started_at, seen_at) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (name) DO UPDATE SET dir = excluded.dir, "
            "machine = excluded.machine, pid = excluded.pid, seen_at = excluded.seen_at",
            (self._worker, directory, socket.gethostname(), os.getpid(), now, now),
        )

    def workers(self) -> list[WorkerRow]:
        rows = self._db.rows(
            "SELECT name, dir, machine, pid, started_at, seen_at FROM workers ORDER BY name"
        )
        return [WorkerRow(*r) for r in rows]

    def has_seeds(self) -> bool:
        return bool(self._db.rows("SELECT 1 FROM seeds LIMIT 1"))

    def category_names(self, url_ids: Iterable[int]) -> dict[int, str]:
        ids = list(dict.fromkeys(url_ids))
        if not ids:
            return {}
        rows = self._db.rows(
            "SELECT id, category_name FROM urls WHERE category_name IS NOT NULL "
            "AND category_name <> '' AND id = ANY(%s::bigint[])",
            (ids,),
        )
        return {int(i): name for i, name in rows}
