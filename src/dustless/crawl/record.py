"""What a crawl writes: WARC records, fetch rows, host rows — and content-seen (seed 003).

Fetch rows are kept in memory and written to the store in batches (ARCHITECTURE
"batch-shaped"); :meth:`Recorder.commit` fsyncs the WARC files first and then commits the DB,
so the DB never points at a WARC record that is not on disk (docs/storage.md, "Crash safety").

Content seen: the SHA-1 of a payload, as the WARC files store it (``--warc-bodies``): the
body as sent (content-coded) or decoded, one or the other for the whole crawl, so that a
revisit's payload digest is its first capture's. The first capture is a WARC ``response``;
a later one with the same payload is a ``revisit`` record (WARC 1.1 §6.7.2) that refers to
it, and the engine does not extract its links again. Payloads of the rows not yet committed
are looked up here; older ones in the store (``content_seen``), so memory does not grow
with the crawl. On a store other workers share, a payload this worker never saw may be
theirs: the engine asks the store about the payloads of a whole batch of pages at once
(``prefetch``) instead of trusting the local filter.

At every commit the store also learns where each WARC file's committed part ends, in the same
transaction as the rows: a resume cuts what a crash left after it (``WarcWriter(exact_ends=)``).

Without a WARC writer (``crawl --store none``, docs/crawling.md "Crawling without storing")
nothing is archived: the rows still go to the store (an in-memory one: the frontier and
URL-seen live there) and content-seen still decides which pages repeat, so the crawl reaches
the same pages; only the records and their index are not written.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from rbloom import Bloom

from dustless.fetch import FetchResult
from dustless.states import NetState
from dustless.store import (
    AS_SENT,
    CdxjIndex,
    ContentRef,
    CrawlStore,
    FetchRecord,
    HostInfo,
    RobotsRow,
    WarcRef,
    WarcWriter,
    truncation,
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


@dataclass(frozen=True, slots=True)
class _Taken:
    """Rows taken for a write: fetch rows (the first captures' ``index`` into them), host
    rows, robots.txt rows."""

    rows: list[FetchRecord]
    hosts: list[HostInfo]
    robots: list[RobotsRow]


class Recorder:
    def __init__(
        self, store: CrawlStore, warc: WarcWriter | None, batch: int, *, resumed: bool = False
    ) -> None:
        self.store = store
        self.warc = warc
        self.batch = batch
        self._rows: list[FetchRecord] = []
        self._content: dict[str, _Pending] = {}
        self._hosts: list[HostInfo] = []
        self._robots: list[RobotsRow] = []
        self._shared = store.shared
        self._known: dict[str, ContentRef | None] = {}  # prefetched answers (shared store)
        # Every payload hash stored: a Bloom "no" spares the DB lookup for a new payload
        # (most of them); a "maybe" asks the DB, so a false positive costs a query only.
        self._sha1s = Bloom(_CONTENT_CAPACITY, 0.01)
        # No writer (--store none): the payload compared is the one a WARC would have held.
        self._as_sent = warc is None or warc.bodies == AS_SENT
        # True while the engine's commit runs in its thread (``begin_commit`` … ``durable``):
        # rows are only kept then, never handed to the store (the thread owns it).
        self.busy = False
        # The CDXJ index beside the WARC files (OUTDIR/indexes), synced after every durable
        # commit (docs/archives.md); a resumed crawl's first commit catches up what a crash
        # left out. At that moment every record on disk is one the DB's commit covers.
        self.index = None if warc is None else CdxjIndex.beside(warc.directory)
        if resumed and not self._shared:
            for chunk in store.iter_content_sha1s():
                self._sha1s.update(chunk)

    # -- WARC --------------------------------------------------------------------------------

    def response(self, url: str, r: FetchResult, started: float, *, dedup: bool) -> Stored:
        """Write the request and response (or revisit) records of an answered fetch.

        ``dedup``: compare the payload with earlier ones (2xx with a body); a repeat becomes a
        ``revisit`` record.
        """
        if r.status is None:
            return _NOTHING
        as_sent = self._stores_as_sent(r)
        body = r.sent_body if as_sent else r.body
        sha1 = hashlib.sha1(body).hexdigest()
        # A cut body is no document (no content identity): it is never a revisit of, nor
        # the first capture for, a payload (WARC 1.1 §6.7.2 compares whole payloads).
        cut = truncation(r.state.value, r.error)
        dedup = dedup and cut is None
        first = self._first_capture(sha1) if dedup and body else None
        request = r.raw_request or None
        warc = self.warc
        if warc is None:  # --store none: content-seen only, no record
            if first is not None:
                return Stored(sha1, None, None, first[3], True)
            if dedup and body:
                self._content[sha1] = _Pending(url, started, "", len(self._rows))
                self._sha1s.add(sha1)
            return Stored(sha1, None, None, None, False)
        if first is not None:
            url0, when0, rid0, fetch0 = first
            refs = warc.write_revisit(
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
                as_sent=as_sent,
            )
            return Stored(sha1, refs.response, refs.request, fetch0, True)
        refs = warc.write_response(
            url,
            r.raw_response_head,
            body,
            fetched_at=started,
            request=request,
            ip=r.ip,
            payload_sha1=sha1,
            status_mime=(r.status, r.mime),  # as the fetcher read them from this head
            truncated=cut,
            as_sent=as_sent,
        )
        if dedup and body:
            self._content[sha1] = _Pending(url, started, refs.response.record_id, len(self._rows))
            self._sha1s.add(sha1)
        return Stored(sha1, refs.response, refs.request, None, False)

    def _stores_as_sent(self, r: FetchResult) -> bool:
        """As sent: the content-coded bytes, when the fetcher kept them (a body without a
        Content-Encoding is the same either way). A coded body it did not keep (a fetcher
        not told to: tests, the API) is stored decoded, its head saying so."""
        return self._as_sent and (r.wire_body is not None or not _coded(r))

    def prefetch(self, results: list[FetchResult]) -> None:
        """A shared store: ask about the payloads of a batch of pages in one round trip,
        each as ``response`` will store it (as sent or decoded)."""
        if not self._shared:
            return
        # The answers serve this batch of pages (a commit in its middle must not drop them:
        # each page would then ask on its own).
        self._known.clear()
        ask = []
        for r in results:
            body = r.sent_body if self._stores_as_sent(r) else r.body
            if body:
                sha1 = hashlib.sha1(body).hexdigest()
                if sha1 not in self._content and sha1 not in self._known:
                    ask.append(sha1)
        if ask:
            found = self.store.content_seen(ask)
            for sha1 in ask:
                self._known[sha1] = found.get(sha1)

    def _first_capture(self, sha1: str) -> tuple[str, float, str, int | None] | None:
        p = self._content.get(sha1)
        if p is not None:
            if p.index >= 0:
                self.write()  # the revisit row wants the first capture's fetch id
            return (p.url, p.fetched_at, p.record_id, p.fetch_id)
        if self._shared:
            known = (
                self._known[sha1]
                if sha1 in self._known
                else self.store.content_seen([sha1]).get(sha1)
            )
        elif sha1 not in self._sha1s:
            return None
        else:
            known = self.store.content_seen([sha1]).get(sha1)
        if known is None:
            return None
        rid = known.warc.record_id if known.warc else ""
        return (known.url, known.fetched_at, rid, known.fetch_id)

    # -- rows --------------------------------------------------------------------------------

    def fetch(self, row: FetchRecord) -> None:
        self._rows.append(row)
        if len(self._rows) >= _MAX_ROWS and not self.busy:
            self.write()

    def state(self, url_id: int, when: float, state: NetState, error: str | None = None) -> None:
        """A URL that ends without a response of its own (robots, blocked host, …)."""
        self.fetch(FetchRecord(url_id, when, state, error=error, batch=self.batch))

    def host(self, info: HostInfo) -> None:
        self._hosts.append(info)

    def robots(self, rows: list[RobotsRow]) -> None:
        self._robots += rows

    def write(self) -> None:
        """Hand the pending rows to the store (durable at the latest at the commit). The
        WARC records they point at are fsynced first, whatever the store's transactions."""
        if self._rows:
            self._flush()
        self._write(self.take())

    def _flush(self) -> None:
        if self.warc is not None:
            self.warc.flush_durable()

    def _committed_ends(self) -> None:
        """The store learns where the WARC files' committed parts end (none: nothing)."""
        if self.warc is not None:
            self.store.warc_committed(self.warc.written_ends())

    def _sync_index(self) -> None:
        if self.index is not None and self.warc is not None:
            self.index.sync(wait=False, known=self.warc.take_index())

    def take(self) -> _Taken:
        """The pending rows, taken out (``begin_commit``; rows kept from now on are the
        next write's)."""
        taken = _Taken(self._rows, self._hosts, self._robots)
        self._rows, self._hosts, self._robots = [], [], []
        return taken

    def _write(self, taken: _Taken) -> None:
        if taken.rows:
            ids = self.store.record_fetches(taken.rows)
            for p in self._content.values():
                if p.index >= 0:
                    p.fetch_id, p.index = ids[p.index], -1
        if taken.hosts:
            self.store.update_hosts(taken.hosts)
        if taken.robots:
            self.store.put_robots(taken.robots)

    def commit(self, *, send: bool = True) -> None:
        """Make everything durable: WARC fsync, then the DB commit that points at it.

        ``send=False`` (a shared store whose next exchange follows at once): the rows wait
        for that exchange, which sends them first (``PostgresCrawlStore`` defers writes)."""
        self.write()
        self._flush()
        self._committed_ends()
        if send:
            self.store.commit()
        # Lines for the records this commit covers, as the writer made them.
        self._sync_index()
        # Committed payloads are found by store.content_seen from now on.
        self._content.clear()

    # -- a commit in two halves: the engine's loop, then its commit thread -------------------

    def begin_commit(self) -> _Taken:
        """The loop's half of a commit: the pending rows taken, for ``durable`` to write.
        (Handed to the store only there, after the fsync: on a shared store any exchange
        sends the pending writes, and one may come from the loop meanwhile — a sitemap's
        entries admitted as its body streams in.)"""
        return self.take()

    def durable(self, taken: _Taken, prefetch: list[FetchResult] | None = None) -> None:
        """The commit thread's half: WARC fsync, then the rows and the DB commit that points
        at them (as ``commit``; kill -9 at any point loses nothing). ``prefetch``: the pages
        whose payloads to ask about (``prefetch``), in the exchange that sends the writes (a
        shared store: one round trip). On PostgreSQL the exchange waits here for a server
        that went away (``PgConnection``), while the engine's loop goes on fetching."""
        self._flush()
        self._write(taken)
        self._committed_ends()
        # Committed payloads are found by store.content_seen from now on.
        self._content.clear()
        if prefetch:
            self.prefetch(prefetch)
        self.store.commit()
        self._sync_index()


def _coded(r: FetchResult) -> bool:
    """Did the response name a content-coding (RFC 9110 §8.4) other than identity?"""
    value = r.header("content-encoding")
    return value is not None and value.strip().lower() not in ("", "identity")
