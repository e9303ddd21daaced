"""``PostgresCrawlStore``: one crawl DB shared by many workers, on PostgreSQL (psycopg 3).

The same ``CrawlStore`` contract as ``SQLiteStore`` and the same schema (``_pg_schema.py``
twins each SQLite migration), for crawls that outgrow one machine (ARCHITECTURE "Many
machines"): every worker opens the DB under its own name (``worker``), leases hosts, claims
URLs of its hosts only, and writes fetch rows that name it. ``shared`` is True: content seen
by another worker is asked of the DB, not of a local filter.

Each method is one short transaction and, where it can be, one round trip: many rows go as
arrays (``= ANY(%s)``, ``unnest``), ids come back with ``RETURNING``, and writes that need no
answer ride with the next exchange (``_pg_conn.py``). Fetch ids are taken from the fetches'
sequence a thousand at a time, so ``record_fetches`` knows its ids without asking. Admission,
leases, robots.txt, WARC marks and workers are in ``_pg_work.py``; the reads in
``_pg_read.py``.
"""

from __future__ import annotations

import contextlib
import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import psycopg

from dustless.errors import DatabaseAway, StoreError
from dustless.store._pg_conn import (
    Conn,
    PgConnection,
    Read,
    columns,
    display_dsn,
    reader,
    sqlite_params,
)
from dustless.store._pg_learn import PgLearn
from dustless.store._pg_read import PgReads
from dustless.store._pg_schema import (
    LOCK_BATCH,
    LOCK_CLASS,
    PG_MIGRATIONS,
    PgMigration,
    applied_version,
    migrate,
)
from dustless.store._pg_work import PgWork
from dustless.store._protocol import CrawlStore
from dustless.store._rows import (
    FETCH_COLUMNS,
    URL_COLS,
    claim_order,
    fetch_params,
    url_hash,
    url_row,
)
from dustless.store._types import (
    Batch,
    FetchRecord,
    HostInfo,
    NewSeed,
    NewURL,
    SeedRow,
    SeedUpdate,
    StoredURL,
    URLLabel,
    URLState,
    WorkLeft,
)

__all__ = ["PostgresCrawlStore"]

_ID_BLOCK = 1000  # fetch ids taken from the sequence at once
_BATCH_COLS = "batch, started_at, batch_time, config, ended_at"
# The PostgreSQL type of each fetch column, for one ``unnest`` per column; the columns are
# ``_rows.FETCH_COLUMNS`` (``fetch_params``' order) after the id taken from the sequence.
_FETCH_TYPES = {
    "id": "bigint", "url_id": "bigint", "batch": "int", "fetched_at": "float8",
    "state": "text", "status": "int", "mime": "text", "size_raw": "bigint",
    "size_stored": "bigint", "elapsed": "float8", "connect_time": "float8", "ttfb": "float8",
    "content_sha1": "text", "revisit_of": "bigint", "links_h": "int", "links_a": "int",
    "links_f": "int", "links_internal": "int", "links_external": "int", "location": "text",
    "etag": "text", "last_modified": "text", "warc_file": "text", "warc_offset": "bigint",
    "warc_length": "bigint", "warc_record_id": "text", "req_file": "text",
    "req_offset": "bigint", "req_length": "bigint", "error": "text", "links_before": "int",
    "links_after": "int", "worker": "text", "content_fp": "bytea", "source_state": "text",
    "canonical": "text",
}  # fmt: skip
_FETCH_COLS = ("id", *FETCH_COLUMNS)
# What a server sent (MIME, Location, ETag, Last-Modified) and error messages, by position.
_FREE_TEXT = tuple(
    i for i, n in enumerate(_FETCH_COLS)
    if n in ("mime", "location", "etag", "last_modified", "error", "canonical")
)  # fmt: skip
# Arrays go in binary (``%b``): psycopg's text dumper of a list is pure Python, and a
# second of crawling writes a few thousand rows.
# Fencing (``_pg_schema.py`` V8): a row fetched under a host's lease names the host and the
# lease's epoch (two more columns), and is written only while that lease is still the
# host's, checked in the statement that writes it. The lease rows are locked (FOR SHARE, in
# host order) until the commit, so a takeover (``FOR UPDATE SKIP LOCKED``) cannot slip in
# between the check and the commit. A row without a host (no lease: one process, a probe)
# is not fenced.
_FENCE = (
    "(v.fence_host IS NULL OR (v.fence_host, v.fence_epoch) IN (SELECT host, epoch "
    "FROM host_work WHERE owner = %(me)s AND host = ANY(%(fenced)s::text[]) "
    "ORDER BY host FOR SHARE))"
)
_FETCH_INSERT = (
    f"INSERT INTO fetches ({', '.join(_FETCH_COLS)}) SELECT "
    + ", ".join(f"v.{c}" for c in _FETCH_COLS)
    + " FROM unnest("
    + ", ".join(f"%({c})b::{_FETCH_TYPES[c]}[]" for c in _FETCH_COLS)
    + ", %(fence_host)b::text[], %(fence_epoch)b::bigint[]) AS v("
    + ", ".join(_FETCH_COLS)
    + f", fence_host, fence_epoch) WHERE {_FENCE} ON CONFLICT (id) DO NOTHING"
)
_STATE_UPDATE = (
    "UPDATE urls u SET state = v.s FROM unnest(%(ids)b::bigint[], %(states)b::text[], "
    "%(fence_host)b::text[], %(fence_epoch)b::bigint[]) AS v(id, s, fence_host, fence_epoch) "
    f"WHERE u.id = v.id AND {_FENCE}"
)
_URL_INSERT = (
    "INSERT INTO urls (url, identity, host, depth, kind, seed_id, parent_id, priority, state) "
    "SELECT * FROM unnest(%b::text[], %b::text[], %b::text[], %b::int[], %b::text[], "
    "%b::bigint[], %b::bigint[], %b::int[], %b::text[]) "
    "ON CONFLICT (identity) DO NOTHING RETURNING identity, id"
)
_CLAIM_HOSTS = (
    f"UPDATE urls SET state = 'in-flight' WHERE id IN ("
    "SELECT c.id FROM unnest(%(hosts)s::text[]) WITH ORDINALITY AS h(host, n) "
    "CROSS JOIN LATERAL (SELECT id, priority, depth FROM urls u "
    "WHERE u.state = 'queued' AND u.host = h.host ORDER BY priority DESC, depth, id "
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


def _text(value: str | None) -> str | None:
    # PostgreSQL's text cannot hold NUL (SQLite's can): a server's header may.
    return value.replace("\x00", "\ufffd") if value is not None and "\x00" in value else value


class PostgresCrawlStore(PgReads, PgWork, PgLearn):
    """The ``CrawlStore`` on PostgreSQL. ``PostgresCrawlStore("postgresql://…", worker="w1")``.

    Opening migrates the schema (under an advisory lock: workers may start together).
    """

    def __init__(
        self,
        dsn: str,
        *,
        worker: str = "local",
        migrations: Sequence[PgMigration] = PG_MIGRATIONS,
        connect_timeout: float = 10.0,
        read_only: bool = False,
    ) -> None:
        self._db = PgConnection(dsn, connect_timeout=connect_timeout, name=worker)
        self._worker = worker
        self._batch: int | None = None
        self._fetch_ids: deque[int] = deque()
        # Fencing: the epoch of each lease held, and the host and lease epoch of each URL
        # claimed and not recorded yet (what its fetch row is written under).
        self._epochs: dict[str, int] = {}
        self._claims: dict[int, tuple[str, int | None]] = {}
        self._left: WorkLeft | None = None
        # Hosts a claim was sent for whose answer was lost (``claim_queued``); whether a lease
        # round's was (``PgWork.lease_hosts``).
        self._lost_claims: set[str] = set()
        self._lost_lease = False
        try:
            # ``read_only`` (``--status``): the schema as it is, never migrated (0: none).
            self.schema_version = (
                applied_version(self._db.conn) if read_only else migrate(self._db.conn, migrations)
            )
        except psycopg.Error as exc:
            self._db.close()
            raise self._db.translate(exc) from None
        except BaseException:
            self._db.close()
            raise

    # -- plumbing ----------------------------------------------------------------------------
    @property
    def worker(self) -> str:
        return self._worker

    @property
    def shared(self) -> bool:
        return True  # other workers write the same crawl at the same time

    @property
    def round_trips(self) -> int:
        """Network round trips to the server so far (the benchmark's cost per page)."""
        return self._db.round_trips

    @property
    def where(self) -> str:
        """``host:port/dbname``: the DB as messages name it (never with a password)."""
        return display_dsn(self._db.dsn)

    def watch_outages(self, hook: Callable[[float | None], None]) -> None:
        self._db.on_outage = hook

    def maybe_away(self) -> bool:
        return self._db.maybe_away()

    def reach(self) -> None:
        self._db.reach()

    def impatient(self) -> contextlib.AbstractContextManager[None]:
        return self._db.impatient()

    def commit(self) -> None:
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> PostgresCrawlStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- batches ------------------------------------------------------------------------------
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

    # -- URLs ---------------------------------------------------------------------------------
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
        params = {"hosts": list(order), "each": each, "limit": limit}
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
        for i in ids:
            self._claims.pop(i, None)
        if ids:
            self._db.defer(
                "UPDATE urls SET state = %s WHERE id = ANY(%s::bigint[])", (state.value, list(ids))
            )

    def label_urls(self, labels: Sequence[URLLabel]) -> None:
        if not labels:
            return
        # One row per identity (an UPDATE … FROM touches a row once), folded in order as
        # SQLite applies them one by one: the last page type, and of the category fields
        # the last one given (a None adds nothing, ``URLLabel``).
        folded: dict[str, tuple[str, str | None, str | None, str | None]] = {}
        for x in labels:
            _, c, ci, cn = folded.get(x.identity, (x.page_type, None, None, None))
            folded[x.identity] = (
                x.page_type,
                c if x.category is None else x.category,
                ci if x.category_id is None else x.category_id,
                cn if x.category_name is None else x.category_name,
            )
        rows = [(identity, *fields) for identity, fields in folded.items()]
        self._db.defer(
            "UPDATE urls u SET page_type = v.pt, category = coalesce(v.c, u.category), "
            "category_id = coalesce(v.ci, u.category_id), "
            "category_name = coalesce(v.cn, u.category_name) "
            "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[]) "
            "AS v(identity, pt, c, ci, cn) WHERE u.identity = v.identity",
            columns(rows, 5),
        )

    # -- fetches ------------------------------------------------------------------------------
    def record_fetches(self, batch: Sequence[FetchRecord]) -> list[int]:
        if not batch:
            return []
        if self._batch is None:
            ((current,),) = self._db.rows("SELECT max(batch) FROM crawls")
            self._batch = current
        ids = self._take_ids(len(batch))
        rows = []
        for fid, f in zip(ids, batch, strict=True):
            number = f.batch if f.batch is not None else self._batch
            if number is None:
                raise StoreError("record_fetches before start_batch: no batch is open")
            row = [fid, *fetch_params(f, number, self._worker)]
            for i in _FREE_TEXT:
                row[i] = _text(row[i])
            rows.append(row)
        # The URL rows' states: the last fetch of a URL in the batch decides (as in order).
        states = {f.url_id: f.url_state.value for f in batch}
        # Each row under the lease its URL was claimed under (fencing: ``_FENCE``).
        fence: dict[int, tuple[str | None, int | None]] = {}
        for url_id in states:
            claim = self._claims.pop(url_id, None)
            fence[url_id] = (None, None) if claim is None or claim[1] is None else claim
        hosts = [fence[f.url_id][0] for f in batch]
        epochs = [fence[f.url_id][1] for f in batch]
        fenced = sorted({h for h, _ in fence.values() if h is not None})
        # The WARC records these rows point at were fsynced before this call (the Recorder
        # writes them first), so the rows may be committed with the next exchange.
        self._db.defer(
            _FETCH_INSERT,
            {
                **dict(zip(_FETCH_COLS, columns(rows, len(_FETCH_COLS)), strict=True)),
                "fence_host": hosts,
                "fence_epoch": epochs,
                "me": self._worker,
                "fenced": fenced,
            },
        )
        self._db.defer(
            _STATE_UPDATE,
            {
                "ids": list(states),
                "states": list(states.values()),
                "fence_host": [fence[i][0] for i in states],
                "fence_epoch": [fence[i][1] for i in states],
                "me": self._worker,
                "fenced": fenced,
            },
        )
        return ids

    def _take_ids(self, n: int) -> list[int]:
        """``n`` fetch ids from the fetches' sequence (a block at a time: no round trip per
        commit). A block left unused by a stopped worker is a gap, as in any sequence."""
        pool = self._fetch_ids
        if len(pool) < n:
            want = max(_ID_BLOCK, n - len(pool))
            pool.extend(
                int(r[0])
                for r in self._db.rows(
                    "SELECT nextval(pg_get_serial_sequence('fetches', 'id')) "
                    "FROM generate_series(1, %s) ORDER BY 1",
                    (want,),
                )
            )
        return [pool.popleft() for _ in range(n)]

    # -- hosts and seeds ----------------------------------------------------------------------
    def update_hosts(self, batch: Sequence[HostInfo]) -> None:
        if not batch:
            return
        last = {h.name: h for h in batch}
        rows = [
            (h.name, h.ip, h.robots_state, h.robots_fetched_at, h.crawl_delay,
             json.dumps(list(h.sitemaps)))
            for _, h in sorted(last.items())
        ]  # fmt: skip
        self._db.defer(
            "INSERT INTO hosts (name, ip, robots_state, robots_fetched_at, crawl_delay, sitemaps) "
            "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::float8[], "
            "%s::float8[], %s::text[]) ON CONFLICT (name) DO UPDATE SET ip = excluded.ip, "
            "robots_state = excluded.robots_state, "
            "robots_fetched_at = excluded.robots_fetched_at, "
            "crawl_delay = excluded.crawl_delay, sitemaps = excluded.sitemaps",
            columns(rows, 6),
        )

    def hosts(self, names: Iterable[str] | None = None) -> dict[str, HostInfo]:
        cols = "name, ip, robots_state, robots_fetched_at, crawl_delay, sitemaps"
        if names is None:
            rows = self._db.rows(f"SELECT {cols} FROM hosts")
        else:
            wanted = list(dict.fromkeys(names))
            rows = self._db.rows(
                f"SELECT {cols} FROM hosts WHERE name = ANY(%s::text[])", (wanted,)
            )
        return {r[0]: HostInfo(r[0], r[1], r[2], r[3], r[4], tuple(json.loads(r[5]))) for r in rows}

    def add_seeds(self, batch: Sequence[NewSeed]) -> list[tuple[int, bool]]:
        if not batch:
            return []
        rows = [
            (s.url, s.identity, url_hash(s.identity), s.host, s.discovered_from,
             s.created_batch if s.created_batch is not None else self._batch)
            for s in batch
        ]  # fmt: skip

        def send(conn: Conn) -> Read[tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]]:
            new = reader(
                conn.execute(
                    "INSERT INTO seeds (url, identity, url_hash, host, discovered_from, "
                    "created_batch) SELECT * FROM unnest(%s::text[], %s::text[], %s::bigint[], "
                    "%s::text[], %s::bigint[], %s::int[]) ON CONFLICT (identity) DO NOTHING "
                    "RETURNING identity",
                    columns(rows, 6),
                )
            )
            every = reader(
                conn.execute(
                    "SELECT identity, id FROM seeds WHERE identity = ANY(%s::text[])",
                    ([s.identity for s in batch],),
                )
            )
            return lambda: (new(), every())

        new_rows, id_rows = self._db.exchange(send)
        inserted = {r[0] for r in new_rows}
        ids = {identity: int(i) for identity, i in id_rows}
        out = []
        for s in batch:
            out.append((ids[s.identity], s.identity in inserted))
            inserted.discard(s.identity)
        return out

    def update_seeds(self, batch: Sequence[SeedUpdate]) -> None:
        if not batch:
            return
        merged: dict[int, list[Any]] = {}
        for s in batch:  # in order, as SQLite applies them: a later value wins, None keeps
            row = merged.setdefault(s.id, [None, None, None])
            for i, value in enumerate((s.content_sha1, s.state, s.party_seconds)):
                if value is not None:
                    row[i] = value
        rows = [(sid, *vals) for sid, vals in sorted(merged.items())]
        self._db.defer(
            "UPDATE seeds s SET content_sha1 = coalesce(v.c, s.content_sha1), "
            "state = coalesce(v.st, s.state), party_seconds = coalesce(v.p, s.party_seconds) "
            "FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::float8[]) AS v(id, c, st, p) "
            "WHERE s.id = v.id",
            columns(rows, 4),
        )

    def seeds(self) -> list[SeedRow]:
        rows = self._db.rows(
            "SELECT id, url, identity, url_hash, host, content_sha1, state, party_seconds, "
            "discovered_from, created_batch FROM seeds ORDER BY id"
        )
        return [SeedRow(*r) for r in rows]

    # -- inspection ---------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """SQL on this crawl DB, for tests and debugging (not part of ``CrawlStore``: the
        readers of ``analysis`` go through ``CrawlReader``); ``?`` marks parameters as in
        SQLite's (outside quoted literals)."""
        if not params:
            return self._db.rows(sql)
        return self._db.rows(sqlite_params(sql), list(params))


def _is_a_crawl_store(store: PostgresCrawlStore) -> CrawlStore:
    return store  # mypy proves PostgresCrawlStore implements the protocol
