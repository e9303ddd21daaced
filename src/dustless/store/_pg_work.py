"""The crawl's work in ``PostgresCrawlStore`` (``WorkStore``): batches, URL-seen, admission
with limits that hold across workers, claims, host leases and the workers table. The SQLite
twin is ``_sqlite_work.py``.

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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from dustless.errors import DatabaseAway
from dustless.store._admit import Site, decide
from dustless.store._pg_conn import Conn, PgConnection, Read, Rows, columns, reader
from dustless.store._pg_fetches import defer_states, take_fences
from dustless.store._pg_schema import (
    LOCK_BATCH,
    LOCK_CLASS,
    LOCK_MANY,
    LOCK_SITES,
    LOCK_TOTALS,
    lock_key,
)
from dustless.store._rows import URL_COLS, claim_order, url_hash, url_row
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

__all__ = ["PgWork"]

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


_BATCH_COLS = "batch, started_at, batch_time, config, ended_at"


_URL_INSERT = (
    "INSERT INTO urls (url, identity, host, depth, kind, seed_id, parent_id, priority, state) "
    "SELECT * FROM unnest(%b::text[], %b::text[], %b::text[], %b::int[], %b::text[], "
    "%b::bigint[], %b::bigint[], %b::int[], %b::text[]) "
    "ON CONFLICT (identity) DO NOTHING RETURNING identity, id"
)


# Never of a host another worker leases (``host_work.owner``): a worker that stalled past
# its lease may still hold a host in memory until its renewal is answered, and must not take
# the queued URLs of a host another worker took over.
_CLAIM_HOSTS = (
    f"UPDATE urls SET state = 'in-flight' WHERE id IN ("
    "SELECT c.id FROM unnest(%(hosts)s::text[]) WITH ORDINALITY AS h(host, n) "
    "CROSS JOIN LATERAL (SELECT id, priority, depth FROM urls u "
    "WHERE u.state = 'queued' AND u.host = h.host AND NOT EXISTS (SELECT 1 FROM host_work w "
    "WHERE w.host = h.host AND w.owner <> %(me)s) ORDER BY priority DESC, depth, id "
    "LIMIT %(each)s FOR UPDATE SKIP LOCKED) c "
    "ORDER BY h.n, c.priority DESC, c.depth, c.id LIMIT %(limit)s) "
    f"RETURNING {URL_COLS}"
)


# The claim replayed after a lost connection whose commit may have gone through (``_pg_conn``):
# the URLs of these hosts in flight that this worker does not know of are the ones the lost
# answer held (a host's URLs are claimed by its lease holder only).
_CLAIM_HOSTS_REPLAY = _CLAIM_HOSTS.replace(
    "u.state = 'queued'",
    "(u.state = 'queued' OR (u.state = 'in-flight' AND NOT u.id = ANY(%(mine)s::bigint[])))",
)


# The URLs a claim whose answer was lost took (a ``DatabaseAway`` after it was sent: the
# engine's loop does not wait for the server, ``_pg_conn``): in flight, of hosts this worker
# still leases, yet unknown to it. Read before the next claim's own (which would add more).
_CLAIMED_LOST = (
    f"SELECT {URL_COLS} FROM urls WHERE state = 'in-flight' AND host = ANY(%(lost)s::text[]) "
    "AND NOT id = ANY(%(mine)s::bigint[]) "
    "AND host IN (SELECT host FROM host_work WHERE owner = %(me)s)"
)


_CLAIM_ANY = (
    "UPDATE urls SET state = 'in-flight' WHERE id IN (SELECT id FROM urls "
    "WHERE state = 'queued' ORDER BY priority DESC, depth, id LIMIT %s FOR UPDATE SKIP LOCKED) "
    f"RETURNING {URL_COLS}"
)


class PgWork:
    """Admission, leases, robots.txt and workers; ``PostgresCrawlStore`` sets ``_db``."""

    _db: PgConnection
    _worker: str
    _batch: int | None
    _lost_claims: set[str]  # hosts whose claim's answer was lost (``claim_queued``)
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

    # -- batches and URLs ----------------------------------------------------------------------
    def start_batch(self, config: str, now: float, batch_time: float | None = None) -> Batch:
        bt = now if batch_time is None else batch_time

        def send(conn: Conn) -> Read[list[tuple[Any, ...]]]:
            # Two workers starting at once must not both take max + 1.
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, LOCK_BATCH))
            return reader(
                conn.execute(
                    "INSERT INTO crawls (batch, started_at, batch_time, config) "
                    "SELECT coalesce(max(batch), 0) + 1, %s, %s, %s FROM crawls RETURNING batch",
                    (now, bt, config),
                )
            )

        ((number,),) = self._db.exchange(send)
        self._batch = int(number)
        return Batch(int(number), now, bt, config)

    def start_or_join(
        self, config: str, now: float, *, may_start: bool = True
    ) -> tuple[Batch, bool] | None:
        """The open batch, joined (``True``: a resume of it is counted), or the first batch
        when the DB has none and ``may_start`` (``False``) — decided under one lock, so
        workers started together all join the one batch the first of them opened. ``None``:
        nothing to join (the last batch has ended, or there is none and none may start)."""

        def send(conn: Conn) -> Read[list[tuple[Any, ...]]]:
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, LOCK_BATCH))
            return reader(
                conn.execute(
                    "WITH last AS (SELECT batch FROM crawls ORDER BY batch DESC LIMIT 1), "
                    "joined AS (UPDATE crawls SET resumes = resumes + 1 WHERE batch = "
                    "(SELECT batch FROM last) AND ended_at IS NULL "
                    f"RETURNING {_BATCH_COLS}), "
                    "started AS (INSERT INTO crawls (batch, started_at, batch_time, config) "
                    "SELECT 1, %s, %s, %s WHERE %s AND NOT EXISTS (SELECT 1 FROM last) "
                    f"RETURNING {_BATCH_COLS}) "
                    "SELECT *, true FROM joined UNION ALL SELECT *, false FROM started",
                    (now, now, config, may_start),
                )
            )

        rows = self._db.exchange(send)
        if not rows:
            return None
        ((*row, joined),) = rows
        batch = Batch(*row)
        self._batch = batch.number
        return batch, bool(joined)

    def resume_batch(self) -> Batch | None:
        rows = self._db.rows(
            "UPDATE crawls SET resumes = resumes + 1 WHERE batch = (SELECT max(batch) "
            f"FROM crawls) AND ended_at IS NULL RETURNING {_BATCH_COLS}"
        )
        if not rows:
            return None
        self._batch = int(rows[0][0])
        return Batch(*rows[0])

    def end_batch(self, number: int, now: float) -> None:
        self._db.defer(
            "UPDATE crawls SET ended_at = coalesce(ended_at, %s) WHERE batch = %s", (now, number)
        )

    def batches(self) -> list[Batch]:
        return [Batch(*r) for r in self._db.rows(f"SELECT {_BATCH_COLS} FROM crawls ORDER BY 1")]

    def add_urls(self, batch: Sequence[NewURL]) -> list[bool]:
        if not batch:
            return []
        rows = [
            (u.url, u.identity, u.host, u.depth, u.kind.value, u.seed_id, u.parent_id,
             u.priority, u.state.value)
            for u in batch
        ]  # fmt: skip
        inserted = {r[0] for r in self._db.rows(_URL_INSERT, columns(rows, 9))}
        result = []
        for u in batch:  # the first occurrence of a new identity is the inserted one
            result.append(u.identity in inserted)
            inserted.discard(u.identity)
        return result

    def contains_identities(self, identities: Iterable[str]) -> set[str]:
        ids = list(dict.fromkeys(identities))
        if not ids:
            return set()
        rows = self._db.rows("SELECT identity FROM urls WHERE identity = ANY(%b::text[])", (ids,))
        return {r[0] for r in rows}

    def iter_identities(self, chunk: int = 50_000) -> Iterator[list[str]]:
        last = 0
        while rows := self._db.rows(
            "SELECT id, identity FROM urls WHERE id > %s ORDER BY id LIMIT %s", (last, chunk)
        ):
            last = rows[-1][0]
            yield [r[1] for r in rows]

    def claim_queued(
        self, limit: int, *, hosts: Sequence[str] | None = None, per_host: int | None = None
    ) -> list[StoredURL]:
        if limit <= 0:
            return []
        if hosts is None:
            got = [url_row(r) for r in self._db.rows(_CLAIM_ANY, (limit,))]
            return sorted(got, key=claim_order)
        order = {h: i for i, h in reversed(list(enumerate(hosts)))}
        if not order:
            return []
        each = limit if per_host is None else per_host
        params = {"hosts": list(order), "each": each, "limit": limit, "me": self._worker}
        claims = self._claims
        lost = sorted(self._lost_claims)

        def send(conn: Conn) -> Read[list[tuple[Any, ...]]]:
            found: Read[list[tuple[Any, ...]]] = list
            if lost:
                mine = [i for i, (h, _) in claims.items() if h in self._lost_claims]
                found = reader(
                    conn.execute(_CLAIMED_LOST, {"lost": lost, "mine": mine, "me": self._worker})
                )
            # One statement for every host: a LATERAL index scan per host, the rows locked
            # (SKIP LOCKED) as they are read, so two claims never take the same URL.
            if not self._db.replaying:
                claimed = reader(conn.execute(_CLAIM_HOSTS, params))
            else:
                mine = [i for i, (h, _) in claims.items() if h in order]
                claimed = reader(conn.execute(_CLAIM_HOSTS_REPLAY, {**params, "mine": mine}))
            return lambda: found() + claimed()

        try:
            got = [url_row(r) for r in self._db.exchange(send)]
        except DatabaseAway as exc:
            if exc.sent:  # it may have been committed: the next claim reads what it took
                self._lost_claims.update(order)
            raise
        self._lost_claims.clear()
        for u in got:
            claims[u.id] = (u.host, self._epochs.get(u.host))
            order.setdefault(u.host, len(order))  # a lost claim's host, after the asked
        return sorted(got, key=lambda u: (order[u.host], *claim_order(u)))

    def queued(self, after_id: int = 0, limit: int = 1000) -> list[StoredURL]:
        rows = self._db.rows(
            f"SELECT {URL_COLS} FROM urls WHERE state = 'queued' AND id > %s ORDER BY id LIMIT %s",
            (after_id, limit),
        )
        return [url_row(r) for r in rows]

    def set_url_state(self, ids: Sequence[int], state: URLState) -> None:
        if ids:
            fence = take_fences(self._claims, ids)
            defer_states(self._db, self._worker, fence, dict.fromkeys(ids, state.value))
