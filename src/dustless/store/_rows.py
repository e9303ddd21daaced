"""Conversions between the store's values and SQL rows (shared by the SQL stores)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Any

from dustless.kinds import LinkKind
from dustless.store._types import FetchRecord, FetchRow, StoredURL, URLState, WarcRef

__all__ = [
    "FETCH_COLS",
    "FETCH_COLUMNS",
    "FETCH_INSERT",
    "MAX_PARAMS",
    "STATES",
    "URL_COLS",
    "chunks",
    "claim_order",
    "fetch_params",
    "fetch_row",
    "marks",
    "url_hash",
    "url_row",
]

# SQLite ≥ 3.32 allows 32766 host parameters per statement; stay well below it.
MAX_PARAMS = 30_000
URL_COLS = "id, url, identity, host, depth, kind, seed_id, parent_id, priority, state"
FETCH_COLS = (
    "f.id, f.url_id, u.url, u.host, u.depth, u.kind, u.seed_id, f.batch, f.fetched_at, "
    "f.state, f.status, f.mime, f.size_raw, f.size_stored, f.elapsed, f.content_sha1, "
    "f.revisit_of, f.links_h, f.links_a, f.links_f, f.links_internal, f.links_external, "
    "f.location, f.warc_file, f.warc_offset, f.warc_length, f.warc_record_id, f.error, "
    "f.connect_time, f.ttfb, f.etag, f.last_modified, f.req_file, f.req_offset, f.req_length, "
    "f.links_before, f.links_after, f.source_state"
)
STATES = {s.value: s for s in URLState}
KINDS = {k.value: k for k in LinkKind}


def url_hash(identity: str) -> int:
    """004's URL hash: the first 8 bytes of SHA-1 as a signed 64-bit integer (fits INTEGER)."""
    return int.from_bytes(hashlib.sha1(identity.encode("utf-8")).digest()[:8], "big", signed=True)


def url_row(r: Sequence[Any]) -> StoredURL:
    return StoredURL(r[0], r[1], r[2], r[3], r[4], KINDS[r[5]], r[6], r[7], r[8], STATES[r[9]])


def fetch_row(r: Sequence[Any]) -> FetchRow:
    warc = WarcRef(r[23], r[24], r[25], r[26] or "") if r[23] is not None else None
    req = WarcRef(r[32], r[33], r[34]) if r[32] is not None else None
    return FetchRow(*r[:23], warc, r[27], *r[28:32], req, r[35], r[36], r[37])  # type: ignore[call-arg]


def claim_order(u: StoredURL) -> tuple[int, int, int]:
    return (-u.priority, u.depth, u.id)


def marks(n: int) -> str:
    """``?,?,…``: ``n`` SQLite parameter marks, for ``IN (…)``."""
    return ",".join("?" * n)


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


# The columns ``fetch_params`` gives values for, in its order (both stores insert by it).
FETCH_COLUMNS = (
    "url_id", "batch", "fetched_at", "state", "status", "mime", "size_raw", "size_stored",
    "elapsed", "connect_time", "ttfb", "content_sha1", "revisit_of", "links_h", "links_a",
    "links_f", "links_internal", "links_external", "location", "etag", "last_modified",
    "warc_file", "warc_offset", "warc_length", "warc_record_id", "req_file", "req_offset",
    "req_length", "error", "links_before", "links_after", "worker", "content_fp",
    "source_state", "canonical",
)  # fmt: skip
FETCH_INSERT = (
    f"INSERT INTO fetches ({', '.join(FETCH_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(FETCH_COLUMNS))})"
)


def fetch_params(f: FetchRecord, batch: int, worker: str | None) -> tuple[Any, ...]:
    """The FETCH_INSERT parameters of one fetch."""
    w, q = f.warc, f.warc_request
    return (
        f.url_id, batch, f.fetched_at, f.state.value, f.status, f.mime, f.size_raw, f.size_stored,
        f.elapsed, f.connect_time, f.ttfb, f.content_sha1, f.revisit_of, f.links_h, f.links_a,
        f.links_f, f.links_internal, f.links_external, f.location, f.etag, f.last_modified,
        w.file if w else None, w.offset if w else None, w.length if w else None,
        w.record_id if w else None, q.file if q else None, q.offset if q else None,
        q.length if q else None, f.error, f.links_before, f.links_after, worker, f.content_fp,
        f.source_state,
        f.canonical,
    )  # fmt: skip
