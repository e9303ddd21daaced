"""What a crawl writes: WARC records, fetch rows, host rows — and content-seen (seed 003).

Fetch rows are kept in memory and written to the store in batches (ARCHITECTURE
"batch-shaped"); :meth:`Recorder.commit` fsyncs the WARC files first and then commits the DB,
so the DB never points at a WARC record that is not on disk (issue 4 "Crash safety").

Content seen: the SHA-1 of a payload. The first capture is a WARC ``response``; a later one
with the same payload is a ``revisit`` record (WARC 1.1 §6.7.2) that refers to it, and the
engine does not extract its links again. Payloads of the rows not yet committed are looked up
here; older ones in the store (``content_seen``), so memory does not grow with the crawl.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from rbloom import Bloom

from dustless.fetch import FetchResult
from dustless.store import (
    CdxjIndex,
    CrawlStore,
    FetchRecord,
    HostInfo,
    WarcRef,
    WarcWriter,
    durable_commit,
)

__all__ = ["Recorder", "Stored"]

_MAX_ROWS = 2000  # pending fetch rows that force a write (not a commit)
_CONTENT_CAPACITY = 10_000_000  # payloads before the Bloom filter's error rate grows


@dataclass(slots=True)
class _Pending:
    """A payload first stored since the last commit."""

    url: str
    fetched_at: float
    record_id: str
    index: int  # position in the pending rows; -1 once written
    fetch_id: int | None = None  # known once written


@dataclass(frozen=True, slots=True)
class Stored:
    """Where a response went: its WARC records, its payload hash, and whether it repeats."""

    sha1: str | None
    response: WarcRef | None
    request: WarcRef | None
    revisit_of: int | None  # fetch id of the first capture (None if unknown or not a revisit)
    revisit: bool


_NOTHING = Stored(None, None, None, None, False)


class Recorder:
    def __init__(
        self, store: CrawlStore, warc: WarcWriter, batch: int, *, resumed: bool = False
    ) -> None:
        self.store = store
        self.warc = warc
        self.batch = batch
        self._rows: list[FetchRecord] = []
        self._content: dict[str, _Pending] = {}
        self._hosts: list[HostInfo] = []
        # Every payload hash stored: a Bloom "no" spares the DB lookup for a new payload
        # (most of them); a "maybe" asks the DB, so a false positive costs a query only.
        self._sha1s = Bloom(_CONTENT_CAPACITY, 0.01)
        # [cdxj] The CDXJ index beside the WARC files (OUTDIR/indexes), synced after every
        # durable commit; a resumed crawl's first commit catches up what a crash left out.
        self.index = CdxjIndex.beside(warc.directory)
        if resumed:
            for (sha1,) in store.query(
                "SELECT DISTINCT content_sha1 FROM fetches WHERE content_sha1 IS NOT NULL"
            ):
                self._sha1s.add(sha1)

    # -- WARC --------------------------------------------------------------------------------

    def response(self, url: str, r: FetchResult, started: float, *, dedup: bool) -> Stored:
        """Write the request and response (or revisit) records of an answered fetch.

        ``dedup``: compare the payload with earlier ones (2xx with a body); a repeat becomes a
        ``revisit`` record.
        """
        if r.status is None:
            return _NOTHING
        body = r.body
        sha1 = hashlib.sha1(body).hexdigest()
        first = self._first_capture(sha1) if dedup and body else None
        request = r.raw_request or None
        if first is not None:
            url0, when0, rid0, fetch0 = first
            refs = self.warc.write_revisit(
                url,
                r.raw_response_head,
                sha1,
                fetched_at=started,
                refers_to_uri=url0,
                refers_to_date=when0,
                refers_to_id=rid0 or None,
                request=request,
                ip=r.ip,
                payload_len=len(body),
            )
            return Stored(sha1, refs.response, refs.request, fetch0, True)
        refs = self.warc.write_response(
            url,
            r.raw_response_head,
            body,
            fetched_at=started,
            request=request,
            ip=r.ip,
            payload_sha1=sha1,
        )
        if dedup and body:
            self._content[sha1] = _Pending(url, started, refs.response.record_id, len(self._rows))
            self._sha1s.add(sha1)
        return Stored(sha1, refs.response, refs.request, None, False)

    def _first_capture(self, sha1: str) -> tuple[str, float, str, int | None] | None:
        p = self._content.get(sha1)
        if p is not None:
            if p.index >= 0:
                self.write()  # the revisit row wants the first capture's fetch id
            return (p.url, p.fetched_at, p.record_id, p.fetch_id)
        if sha1 not in self._sha1s:
            return None
        known = self.store.content_seen([sha1]).get(sha1)
        if known is None:
            return None
        rid = known.warc.record_id if known.warc else ""
        return (known.url, known.fetched_at, rid, known.fetch_id)

    # -- rows --------------------------------------------------------------------------------

    def fetch(self, row: FetchRecord) -> None:
        self._rows.append(row)
        if len(self._rows) >= _MAX_ROWS:
            self.write()

    def state(self, url_id: int, when: float, state: str, error: str | None = None) -> None:
        """A URL that ends without a response of its own (robots, blocked host, …)."""
        self.fetch(FetchRecord(url_id, when, state, error=error, batch=self.batch))

    def host(self, info: HostInfo) -> None:
        self._hosts.append(info)

    def write(self) -> None:
        """Hand the pending rows to the store's open transaction (not yet durable)."""
        if self._rows:
            ids = self.store.record_fetches(self._rows)
            for p in self._content.values():
                if p.index >= 0:
                    p.fetch_id, p.index = ids[p.index], -1
            self._rows = []
        if self._hosts:
            self.store.update_hosts(self._hosts)
            self._hosts = []

    def commit(self) -> None:
        """Make everything durable: WARC fsync, then the DB commit."""
        self.write()
        durable_commit(self.store, self.warc)
        self.index.sync(wait=False)  # [cdxj] after the commit: lines for what is on disk
        # Committed payloads are found by store.content_seen from now on.
        self._content.clear()
