"""The read queries of ``PostgresCrawlStore``: URLs by id and state, fetches, contents, WARC
ends — and the crawl's status across workers (``dustless crawl --db URL --status``).

A base class of ``PostgresCrawlStore``; each method is one exchange (``_pg_conn.py``), which
also carries this worker's pending writes, so a read sees them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from dustless.kinds import LinkKind
from dustless.store._pg_conn import Conn, PgConnection, Read, reader
from dustless.store._rows import FETCH_COLS, STATES, URL_COLS, fetch_row, url_row
from dustless.store._types import (
    PROBE_PREFIX,
    Batch,
    ContentRef,
    FetchRow,
    StoredURL,
    URLState,
    WarcRef,
)

__all__ = ["CrawlStatus", "PgReads", "WorkerStatus"]

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


class PgReads:
    """Read-only queries; ``PostgresCrawlStore`` sets ``_db``."""

    _db: PgConnection

    def urls_by_id(self, ids: Iterable[int]) -> dict[int, StoredURL]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        rows = self._db.rows(f"SELECT {URL_COLS} FROM urls WHERE id = ANY(%s::bigint[])", (wanted,))
        return {int(r[0]): url_row(r) for r in rows}

    def url_counts(self) -> dict[URLState, int]:
        counts = dict.fromkeys(URLState, 0)
        for state, n in self._db.rows("SELECT state, count(*) FROM urls GROUP BY state"):
            counts[STATES[state]] = int(n)
        return counts

    def content_seen(self, sha1s: Iterable[str]) -> dict[str, ContentRef]:
        keys = list(dict.fromkeys(sha1s))
        if not keys:
            return {}
        # The first fetch that stored the payload (not itself a revisit) is the one a
        # revisit record refers to (WARC 1.1 §6.7.2, WARC-Refers-To). One index probe per
        # key (LATERAL … LIMIT 1): a plan with ``= ANY(…)`` made while the table was small
        # scans it whole, and the session keeps that plan (in some crawls the most of the
        # server's time: ``bench/crawl_scale.py --skip-scale --statements``).
        rows = self._db.rows(
            "SELECT s.sha1, f.id, u.url, f.fetched_at, f.warc_file, f.warc_offset, "
            "f.warc_length, f.warc_record_id FROM unnest(%s::text[]) AS s(sha1) "
            "CROSS JOIN LATERAL (SELECT * FROM fetches x WHERE x.content_sha1 = s.sha1 "
            "AND x.revisit_of IS NULL ORDER BY x.id LIMIT 1) AS f "
            "JOIN urls u ON u.id = f.url_id",
            (keys,),
        )
        out: dict[str, ContentRef] = {}
        for sha, fid, url, at, wf, wo, wl, wid in rows:
            ref = WarcRef(wf, wo, wl, wid or "") if wf is not None else None
            out[sha] = ContentRef(sha, int(fid), url, at, ref)
        return out

    def iter_content_sha1s(self, chunk: int = 50_000) -> Iterator[list[str]]:
        last = ""
        while rows := self._db.rows(
            "SELECT DISTINCT content_sha1 FROM fetches WHERE content_sha1 > %s "
            "ORDER BY content_sha1 LIMIT %s",
            (last, chunk),
        ):
            last = rows[-1][0]
            yield [r[0] for r in rows]

    def last_fetches(self, url_ids: Iterable[int]) -> dict[int, FetchRow]:
        ids = list(dict.fromkeys(url_ids))
        if not ids:
            return {}
        rows = self._db.rows(  # one index probe per URL, as in content_seen
            f"SELECT {FETCH_COLS} FROM unnest(%s::bigint[]) AS s(id) "
            "CROSS JOIN LATERAL (SELECT * FROM fetches x WHERE x.url_id = s.id "
            "ORDER BY x.id DESC LIMIT 1) AS f JOIN urls u ON u.id = f.url_id",
            (ids,),
        )
        return {int(r[1]): fetch_row(r) for r in rows}

    def iter_fetches(self, batch: int | None = None, chunk: int = 10_000) -> Iterator[FetchRow]:
        last = 0
        where = "" if batch is None else "AND f.batch = %s"
        while True:
            params: list[Any] = [last] + ([] if batch is None else [batch]) + [chunk]
            rows = self._db.rows(
                f"SELECT {FETCH_COLS} FROM fetches f JOIN urls u ON u.id = f.url_id "
                f"WHERE f.id > %s {where} ORDER BY f.id LIMIT %s",
                params,
            )
            if not rows:
                return
            last = rows[-1][0]
            for r in rows:
                yield fetch_row(r)

    def fetch_state_counts(self, batch: int | None = None) -> dict[str, int]:
        if batch is None:
            rows = self._db.rows("SELECT state, count(*) FROM fetches GROUP BY state")
        else:
            rows = self._db.rows(
                "SELECT state, count(*) FROM fetches WHERE batch = %s GROUP BY state", (batch,)
            )
        return {state: int(n) for state, n in rows}

    def warc_ends(self) -> dict[str, int]:
        rows = self._db.rows(
            "SELECT name, max(e) FROM ("
            "SELECT warc_file AS name, warc_offset + warc_length AS e FROM fetches "
            "WHERE warc_file IS NOT NULL UNION ALL "
            "SELECT req_file, req_offset + req_length FROM fetches WHERE req_file IS NOT NULL"
            ") AS ends GROUP BY name"
        )
        return {name: int(end) for name, end in rows}

    def collection_ids(self, kinds: Sequence[LinkKind] | None = None) -> list[int]:
        sql = (
            "SELECT id FROM urls WHERE state IN ('done', 'queued') "
            "AND substr(identity, 1, %s) <> %s"
        )
        params: list[Any] = [len(PROBE_PREFIX), PROBE_PREFIX]
        if kinds is not None:
            sql += " AND kind = ANY(%s::text[])"
            params.append([k.value for k in kinds])
        return [int(r[0]) for r in self._db.rows(sql + " ORDER BY id", params)]

    def count_kind(self, host: str, kind: LinkKind) -> int:
        ((n,),) = self._db.rows(
            "SELECT count(*) FROM urls WHERE host = %s AND kind = %s", (host, kind.value)
        )
        return int(n)

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
