"""Fallback spellings: a merge may cost requests, never a page someone linked correctly.

The crawler fetches the first spelling it met of an identity (ARCHITECTURE "Which URL the
crawler fetches"). Under an unsafe step that spelling may be one the server does not know:
on a case-sensitive (Unix) server ``/pubs/X.HTML`` is a 404 while ``/pubs/x.html`` is the
page, and ``lowercase-path`` gives both one identity (seed 000 §4.1). URL-seen then drops
the correct spelling, and the page is lost.

So the crawl keeps the other spellings it meets of each identity — at most
:data:`MAX_SPELLINGS`, in the order met, in the ``spellings`` table (resume-safe) — and when
the spelling it fetched ends without a document (a 4xx or 5xx answer, or a network state
without an answer) it fetches the next distinct one, until ``spelling_tries`` spellings of
the identity have been fetched. Each fallback is a URL row of its own, under the derived
identity ``IDENTITY spelling-N`` (a space never occurs in a normalized URL, as with
``crawl/redirect.py``'s ``redirect-N``), queued and fetched like any URL and recorded as a
fetch. A spelling met only after the fetch failed is tried then. Redirect targets are
spellings too: they are discovered like links.

Spellings are noted in the admission batches (a candidate whose identity is stored, or
already pending, is another spelling of it); a failed fetch asks the store once for what was
tried and what is kept (``CrawlStore.spelling_state``). The fallbacks to queue are returned
(``crawl/_orders.py``'s ``Fallback``), for the admission: this module never calls it.
"""

from __future__ import annotations

from collections.abc import Iterable

from dustless.crawl._orders import Fallback
from dustless.crawl.discover import Candidate, Discovery
from dustless.frontier import QueuedURL
from dustless.states import NetState
from dustless.store import CrawlStore, StoredURL
from dustless.url import authority_of

_RESUME_BATCH = 1000  # identities whose spellings a resume reads at once

__all__ = ["MAX_SPELLINGS", "Spellings", "base_of", "no_document", "spelling_identity"]

MAX_SPELLINGS = 8
_MARK = " spelling-"
# Network states in which no answer arrived (004 Fig. 3): the spelling may be at fault.
# Gates (robots, filtered) and noIP (the host has no address) are not the spelling's fault.
_NO_ANSWER = frozenset(
    {
        NetState.NULL,
        NetState.Conn,
        NetState.cErr,
        NetState.cTim,
        NetState.hSht,
        NetState.hNpr,
        NetState.hTim,
        NetState.hErr,
    }
)


def spelling_identity(base: str, n: int) -> str:
    """The identity of the ``n``-th fallback spelling of ``base``."""
    return f"{base}{_MARK}{n}"


def base_of(identity: str) -> tuple[str, int]:
    """``(base identity, fallbacks before this one)``; a plain identity is fallback 0."""
    head, sep, tail = identity.rpartition(_MARK)
    if sep and tail.isdigit():
        return head, int(tail)
    return identity, 0


def no_document(state: NetState, status: int | None) -> bool:
    """A fetch that ended without a document, so that another spelling may have one."""
    if state is NetState.soft404:
        return True  # a 200 that says "not found" (crawl/soft404.py)
    if status is not None:
        return status >= 400
    return state in _NO_ANSWER


class Spellings:
    """The spellings of one crawl: noted at admission, tried when a fetch gives nothing."""

    def __init__(self, store: CrawlStore, discovery: Discovery, tries: int) -> None:
        self.store = store
        self.discovery = discovery
        self.tries = tries
        # Identities whose every spelling so far failed, with the item of the last one: a
        # spelling met later is queued at once. Rebuilt from the DB by ``resume``.
        self.waiting: dict[str, QueuedURL] = {}
        self.fallbacks = 0  # fallback URLs queued (a figure for tests and progress)
        self._pending: list[tuple[str, str]] = []

    @property
    def enabled(self) -> bool:
        return self.tries > 1

    def _names(self, base: str) -> list[str]:
        return [base] + [spelling_identity(base, n) for n in range(1, self.tries)]

    # -- admission ------------------------------------------------------------------------------

    def note(self, pairs: Iterable[tuple[str, str]]) -> list[Fallback]:
        """``(identity, url)`` spellings of identities already stored or pending (URL-seen
        said "seen"): kept (written with the next admission batch, :meth:`flush`); one that
        an identity whose fetches all failed waits for is returned, to be queued at once."""
        out: list[Fallback] = []
        if not self.enabled:
            return out
        fresh = [(i, u) for i, u in pairs if " " not in i]  # derived identities: none
        self._pending += fresh
        for identity, _ in fresh:
            item = self.waiting.get(identity)
            if item is not None:
                self.flush()
                self._queue(out, item, self._next(item, identity))
        return out

    def flush(self) -> None:
        """Store the spellings noted since the last call (one batch)."""
        if self._pending:
            pairs, self._pending = self._pending, []
            self.store.add_spellings(pairs, MAX_SPELLINGS)

    def _queue(self, out: list[Fallback], item: QueuedURL, cand: Candidate | None) -> None:
        if cand is not None:
            self.fallbacks += 1
            out.append(Fallback(cand, item))

    # -- a fetch ended ----------------------------------------------------------------------

    def fetched(self, item: QueuedURL, state: NetState, status: int | None) -> list[Fallback]:
        """``item``'s fetch ended: if it gave no document, the next spelling to queue."""
        out: list[Fallback] = []
        if self.enabled and item.identity and no_document(state, status):
            base, _ = base_of(item.identity)
            if " " not in base:  # a redirect's derived identity has no spellings of its own
                self._queue(out, item, self._next(item, base))
        return out

    def _next(self, item: QueuedURL, base: str) -> Candidate | None:
        self.flush()
        tried, kept = self.store.spelling_state(base, self._names(base))
        if len(tried) >= self.tries:
            self.waiting.pop(base, None)
            return None
        for url in kept:
            if url not in tried:
                self.waiting.pop(base, None)
                host = authority_of(url)
                return Candidate(
                    url,
                    spelling_identity(base, len(tried)),
                    host,
                    self.discovery.site_of_host(host),
                    item.depth,
                    item.kind,
                    item.seed_id or None,
                )
        self.waiting[base] = item  # a spelling met later is tried then
        return None

    # -- resume -----------------------------------------------------------------------------

    def resume(self) -> list[Fallback]:
        """After a restart: identities with spellings whose fetched ones all failed and
        that have none queued get their next spelling (returned, to queue) or wait for one."""
        out: list[Fallback] = []
        if not self.enabled:
            return out
        bases = self.store.spelling_bases()
        for start in range(0, len(bases), _RESUME_BATCH):
            # The rows of many identities in one read (a shared store: one round trip, not
            # one an identity), then each identity's own, in id order.
            part = bases[start : start + _RESUME_BATCH]
            owner = {name: base for base in part for name in self._names(base)}
            rows_of: dict[str, list[tuple[StoredURL, str | None, int | None]]] = {}
            for row in self.store.spelling_rows(list(owner)):
                rows_of.setdefault(owner[row[0].identity], []).append(row)
            for base in part:
                self._resume_one(out, base, rows_of.get(base, []))
        return out

    def _resume_one(
        self,
        out: list[Fallback],
        base: str,
        rows: list[tuple[StoredURL, str | None, int | None]],
    ) -> None:
        if not rows or any(u.state.value != "done" or s is None for u, s, _ in rows):
            return  # still queued, or never fetched: nothing to decide yet
        if not all(no_document(NetState(s), status) for _, s, status in rows if s):
            return
        last = rows[-1][0]
        item = QueuedURL(
            last.url,
            last.host,
            last.depth,
            seed_id=last.seed_id or 0,
            kind=last.kind,
            url_id=last.id,
            identity=last.identity,
        )
        self._queue(out, item, self._next(item, base))
