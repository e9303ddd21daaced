"""The crawl's status across workers (``dustless crawl --db URL --status``), which only
``PostgresCrawlStore`` has: no ``CrawlStore`` concern, so no SQLite twin.

A base class of ``PostgresCrawlStore``; ``status`` is one exchange (``_pg_conn.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dustless.store._pg_conn import Conn, PgConnection, Read, reader
from dustless.store._rows import STATES
from dustless.store._types import (
    Batch,
    URLState,
)

__all__ = ["CrawlStatus", "PgStatus", "WorkerStatus"]

_RECENT = 60.0  # seconds: "fetches per minute"


@dataclass(frozen=True, slots=True)
class WorkerStatus:
    """One worker as ``--status`` shows it."""

    name: str
    machine: str | None
    pid: int | None
    dir: str
    started_at: float
    seen_at: float  # its last heartbeat (lease calls), wall clock
    fetches: int  # fetch rows it wrote in the batch
    last_minute: int  # of them, in the last minute
    leases: int  # hosts it holds a live lease on


@dataclass(frozen=True, slots=True)
class CrawlStatus:
    """A crawl shared by workers, seen from the DB at ``now`` (wall clock)."""

    now: float
    batch: Batch | None  # the latest batch
    workers: list[WorkerStatus]
    hosts_queued: int  # hosts with URLs queued
    urls_queued: int
    hosts_leased: int  # live leases
    leases_expired: int  # leases whose worker stopped renewing (taken over at the next claim)
    urls: dict[URLState, int]
    last_minute: int  # fetches of every worker in the last minute


class PgStatus:
    """The crawl across workers (``--status``); ``PostgresCrawlStore`` sets ``_db``."""

    _db: PgConnection

    # -- the crawl across workers --------------------------------------------------------------
    def status(self, now: float) -> CrawlStatus:
        """Workers, leases, the queue and the rate, in one exchange."""

        def send(conn: Conn) -> Read[list[list[tuple[Any, ...]]]]:
            reads = [
                reader(conn.execute("SELECT batch, started_at, batch_time, config, ended_at "
                                    "FROM crawls ORDER BY batch DESC LIMIT 1")),
                reader(conn.execute(
                    "SELECT w.name, w.machine, w.pid, w.dir, w.started_at, w.seen_at, "
                    "coalesce(f.n, 0), coalesce(f.recent, 0), coalesce(l.n, 0) FROM workers w "
                    "LEFT JOIN (SELECT worker, count(*) AS n, count(*) FILTER "
                    "(WHERE fetched_at >= %(since)s) AS recent FROM fetches "
                    "WHERE batch = (SELECT max(batch) FROM crawls) GROUP BY worker) f "
                    "ON f.worker = w.name LEFT JOIN (SELECT owner, count(*) AS n FROM host_work "
                    "WHERE owner IS NOT NULL AND lease_until >= %(now)s GROUP BY owner) l "
                    "ON l.owner = w.name ORDER BY w.name",
                    {"since": now - _RECENT, "now": now},
                )),
                reader(conn.execute(
                    "SELECT count(*) FILTER (WHERE queued > 0), coalesce(sum(queued), 0), "
                    "count(*) FILTER (WHERE owner IS NOT NULL AND lease_until >= %(now)s), "
                    "count(*) FILTER (WHERE owner IS NOT NULL AND lease_until < %(now)s) "
                    "FROM host_work",
                    {"now": now},
                )),
                reader(conn.execute("SELECT state, count(*) FROM urls GROUP BY state")),
            ]  # fmt: skip
            return lambda: [read() for read in reads]

        batch_rows, worker_rows, (work,), state_rows = self._db.exchange(send)
        workers = [
            WorkerStatus(n, m, p, d, s, seen, int(f), int(r), int(lz))
            for n, m, p, d, s, seen, f, r, lz in worker_rows
        ]
        urls = dict.fromkeys(URLState, 0)
        for state, n in state_rows:
            urls[STATES[state]] = int(n)
        return CrawlStatus(
            now=now,
            batch=Batch(*batch_rows[0]) if batch_rows else None,
            workers=workers,
            hosts_queued=int(work[0]),
            urls_queued=int(work[1]),
            hosts_leased=int(work[2]),
            leases_expired=int(work[3]),
            urls=urls,
            last_minute=sum(w.last_minute for w in workers),
        )
