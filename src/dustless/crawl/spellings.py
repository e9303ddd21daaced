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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dustless.crawl.discover import Candidate, Discovery, authority_of
from dustless.frontier import QueuedURL
from dustless.store import SQLiteStore

if TYPE_CHECKING:
    from dustless.crawl.admission import Admission

__all__ = ["MAX_SPELLINGS", "Spellings", "no_document", "spelling_identity"]

MAX_SPELLINGS = 8
_MARK = " spelling-"
# Network states in which no answer arrived (004 Fig. 3): the spelling may be at fault.
# Gates (robots, filtered) and noIP (the host has no address) are not the spelling's fault.
_NO_ANSWER = frozenset({"NULL", "Conn", "cErr", "cTim", "hSht", "hNpr", "hTim", "hErr"})


def spelling_identity(base: str, n: int) -> str:
    """The identity of the ``n``-th fallback spelling of ``base``."""
    return f"{base}{_MARK}{n}"


def base_of(identity: str) -> tuple[str, int]:
    """``(base identity, fallbacks before this one)``; a plain identity is fallback 0."""
    head, sep, tail = identity.rpartition(_MARK)
    if sep and tail.isdigit():
        return head, int(tail)
    return identity, 0


def no_document(state: str, status: int | None) -> bool:
    """A fetch that ended without a document, so that another spelling may have one."""
    if status is not None:
        return status >= 400
    return state in _NO_ANSWER


class Spellings:
    """The spellings of one crawl: noted at discovery, tried when a fetch gives nothing."""

    def __init__(self, store: SQLiteStore, discovery: Discovery, tries: int) -> None:
        self.store = store
        self.discovery = discovery
        self.tries = tries
        # Identities whose every spelling so far failed, with the item of the last one: a
        # spelling met later is queued at once. Rebuilt from the DB by ``resume``.
        self.waiting: dict[str, QueuedURL] = {}
        self.fallbacks = 0  # fallback URLs queued (a figure for tests and progress)
        self.admission: Admission | None = None  # queues the fallbacks (set by the engine)

    @property
    def enabled(self) -> bool:
        return self.tries > 1

    # -- discovery ----------------------------------------------------------------------------

    def note(self, known: Sequence[Candidate]) -> None:
        """Spellings of identities already stored (URL-seen said "seen"): kept; one that an
        identity whose fetches all failed was waiting for is queued at once."""
        if not self.enabled or not known:
            return
        self.store.add_spellings([(c.identity, c.url) for c in known], MAX_SPELLINGS)
        for c in known:
            item = self.waiting.get(c.identity)
            if item is not None:
                self._queue(item, self._next(item, c.identity))

    def _queue(self, item: QueuedURL, cand: Candidate | None) -> None:
        if cand is not None and self.admission is not None:
            self.fallbacks += 1
            self.admission.admit(self.discovery.admit([cand]), item.url_id, {})

    # -- a fetch ended ----------------------------------------------------------------------

    def fetched(self, item: QueuedURL, state: str, status: int | None) -> None:
        """``item``'s fetch ended: if it gave no document, queue the next spelling."""
        if not self.enabled or not no_document(state, status):
            return
        row = self.store.urls_by_id([item.url_id]).get(item.url_id)
        if row is not None:
            self._queue(item, self._next(item, base_of(row.identity)[0]))

    def _next(self, item: QueuedURL, base: str) -> Candidate | None:
        tried = self._tried(base)
        if len(tried) >= self.tries:
            self.waiting.pop(base, None)
            return None
        for (url,) in self.store.query(
            "SELECT url FROM spellings WHERE identity = ? ORDER BY rowid", (base,)
        ):
            if url not in tried:
                self.waiting.pop(base, None)
                d = self.discovery
                return Candidate(
                    url,
                    spelling_identity(base, len(tried)),
                    authority_of(url),
                    d.site_of_host(authority_of(url)),
                    item.depth,
                    item.kind if item.kind in ("a", "f", "h", "s", "r") else "a",
                    item.seed_id or None,
                )
        self.waiting[base] = item  # a spelling met later is tried then
        return None

    def _tried(self, base: str) -> list[str]:
        """The spellings of ``base`` fetched or queued so far (its rows, base first)."""
        names = [base] + [spelling_identity(base, n) for n in range(1, self.tries)]
        marks = ",".join("?" * len(names))
        rows = self.store.query(f"SELECT url FROM urls WHERE identity IN ({marks})", names)
        return [r[0] for r in rows]

    # -- resume -----------------------------------------------------------------------------

    def resume(self) -> None:
        """After a restart: identities with spellings whose fetched ones all failed and
        that have none queued get their next spelling queued (or wait for one)."""
        if not self.enabled:
            return
        bases = [r[0] for r in self.store.query("SELECT DISTINCT identity FROM spellings")]
        for base in bases:
            names = [base] + [spelling_identity(base, n) for n in range(1, self.tries)]
            marks = ",".join("?" * len(names))
            rows = self.store.query(
                "SELECT u.id, u.url, u.host, u.depth, u.kind, u.seed_id, u.state, "
                "(SELECT f.state || ' ' || coalesce(f.status, '') FROM fetches f "
                " WHERE f.url_id = u.id ORDER BY f.id DESC LIMIT 1) "
                f"FROM urls u WHERE u.identity IN ({marks}) ORDER BY u.id",
                names,
            )
            if not rows or any(r[6] != "done" or r[7] is None for r in rows):
                continue  # still queued, or never fetched: nothing to decide yet
            last = rows[-1]
            if not all(no_document(*_state(r[7])) for r in rows):
                continue
            item = QueuedURL(
                last[1], last[2], last[3], seed_id=last[5] or 0, kind=last[4], url_id=last[0]
            )
            self._queue(item, self._next(item, base))


def _state(text: str) -> tuple[str, int | None]:
    state, _, status = text.partition(" ")
    return state, int(status) if status else None
