"""Every fetch kept (``FetchStore``) in ``PostgresCrawlStore``: fetch rows and the URL states
they set, fenced by the lease they were fetched under; payloads seen (003), the fetches
read back, and where each WARC file's committed part ends.

A base class of ``PostgresCrawlStore``; the SQLite twin is ``_sqlite_fetches.py``. Fetch ids
are taken from the fetches' sequence a thousand at a time, so ``record_fetches`` knows its
ids without asking.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from dustless.errors import StoreError
from dustless.store._pg_conn import (
    PgConnection,
    columns,
)
from dustless.store._rows import (
    FETCH_COLS,
    FETCH_COLUMNS,
    fetch_params,
    fetch_row,
)
from dustless.store._types import (
    ContentRef,
    FetchRecord,
    FetchRow,
    WarcRef,
)

__all__ = ["PgFetches", "defer_states", "take_fences"]


_ID_BLOCK = 1000  # fetch ids taken from the sequence at once


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


def _text(value: str | None) -> str | None:
    # PostgreSQL's text cannot hold NUL (SQLite's can): a server's header may.
    return value.replace("\x00", "\ufffd") if value is not None and "\x00" in value else value


def take_fences(
    claims: dict[int, tuple[str, int | None]], ids: Iterable[int]
) -> dict[int, tuple[str | None, int | None]]:
    """Each URL's lease it was claimed under, ``(host, epoch)``, or ``(None, None)`` for a URL
    no lease covers; their claims end here (taken out of ``claims``)."""
    fence: dict[int, tuple[str | None, int | None]] = {}
    for url_id in ids:
        claim = claims.pop(url_id, None)
        fence[url_id] = (None, None) if claim is None or claim[1] is None else claim
    return fence


def _fenced(fence: Mapping[int, tuple[str | None, int | None]]) -> list[str]:
    return sorted({h for h, _ in fence.values() if h is not None})


def defer_states(
    db: PgConnection,
    me: str,
    fence: Mapping[int, tuple[str | None, int | None]],
    states: Mapping[int, str],
) -> None:
    """URL states written with the next exchange, each under the lease its URL was claimed
    under (``_FENCE``): a worker that lost a host — a stall past its lease — changes nothing
    its new holder has since claimed or fetched, whether it records a fetch or gives its
    window back to the queue before it has heard of the loss (issue 24: a stall, then a
    restart that failed its renewal, then its window "given back" over the new holder's
    fetched rows, which were then fetched again)."""
    db.defer(
        _STATE_UPDATE,
        {
            "ids": list(states),
            "states": list(states.values()),
            "fence_host": [fence[i][0] for i in states],
            "fence_epoch": [fence[i][1] for i in states],
            "me": me,
            "fenced": _fenced(fence),
        },
    )


class PgFetches:
    """Fetch rows and WARC marks; ``PostgresCrawlStore`` sets ``_db``."""

    _db: PgConnection
    _worker: str
    _batch: int | None
    _claims: dict[int, tuple[str, int | None]]
    _fetch_ids: deque[int]

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
        fence = take_fences(self._claims, states)
        # The WARC records these rows point at were fsynced before this call (the Recorder
        # writes them first), so the rows may be committed with the next exchange.
        self._db.defer(
            _FETCH_INSERT,
            {
                **dict(zip(_FETCH_COLS, columns(rows, len(_FETCH_COLS)), strict=True)),
                "fence_host": [fence[f.url_id][0] for f in batch],
                "fence_epoch": [fence[f.url_id][1] for f in batch],
                "me": self._worker,
                "fenced": _fenced(fence),
            },
        )
        defer_states(self._db, self._worker, fence, states)
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
