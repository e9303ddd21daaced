"""Admission: links found on pages (and the given seeds) become queued URLs, in batches.

The I/O half of discovery (``crawl/discover.py`` is the pure half). Candidates are gathered
here as pages are handled, and :meth:`Admission.flush` hands them to the crawl DB in one call
(``CrawlStore.admit``: candidate seeds, URL-seen by the identity's unique index, new parties,
``--max-depth``, ``--max-pages``, ``--max-pages-per-site``, ``--max-sites``) — a round trip per
flush, not per page, and limits that hold across workers. The engine flushes before every
commit (at least once a second) and whenever it runs out of ready work, so a URL waits at most
that long before it can be claimed.

URL-seen, locally: a URL string already settled never gets here (``Discovery``'s cache of
strings), and an identity this worker saw stored, or has pending, is dropped at once (a
bounded positive cache: exact, because a stored identity is never deleted). What is left is
checked by the DB's unique index — the authority — in the batch. An outside link is a
candidate seed as well (004 §2): it is dropped only once its seed row is known to exist too,
so the seed table holds every outside link of the crawl whichever worker (or party) stored
the URL first — with one process or many, the same seeds.

With ``--script`` the labels of seed 002 §3.4 go with the rows, and the urgent ones are claimed
at once, ahead of the host's window (§3.4.2).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

from dustless.crawl._orders import Fallback, Order, Readmit, Rekey
from dustless.crawl.discover import Candidate, Discovery
from dustless.crawl.hosts import HostTable
from dustless.crawl.progress import RunCounters
from dustless.crawl.scripted import URGENT, Label, ScriptedPages, urgent_hosts

if TYPE_CHECKING:
    from dustless.crawl.learn import Learning
    from dustless.crawl.spellings import Spellings
from dustless.errors import DatabaseAway
from dustless.frontier import QueuedURL
from dustless.kinds import LinkKind
from dustless.store import PROBE_PREFIX, AdmitURL, CrawlStore, NewURL, URLLabel, Verdict
from dustless.url import authority_of

__all__ = ["Admission"]

_KNOWN_LIMIT = 200_000  # identities remembered as stored, per generation
_FLUSH_AT = 5_000  # pending candidates that force a flush
MAX_PROBE_HOPS = 5  # redirects followed from a form in evaluate --fetch (RFC 9309 §2.3.1.2's)


class Admission:
    """Gathers what pages reveal and admits it in batches, for one batch of one crawl."""

    def __init__(
        self,
        store: CrawlStore,
        discovery: Discovery,
        hosts: HostTable,
        stats: RunCounters,
        *,
        batch: int,
        scripted: ScriptedPages | None,
        spellings: Spellings | None = None,
        learning: Learning | None = None,
    ) -> None:
        self.store = store
        self.discovery = discovery
        self.hosts = hosts
        self.stats = stats
        self.batch = batch
        self.scripted = scripted
        self._pending: list[AdmitURL] = []
        self._pending_ids: dict[str, int] = {}  # identity -> its (first) entry in _pending
        # URL strings settled as repeats of an identity still pending (``Discovery``'s cache):
        # if the crawl DB refuses the identity (``--max-depth``, a page limit), they are
        # unsettled, so that a later link to it by a shorter path is not skipped as a repeat.
        self._settled_by: dict[str, list[str]] = {}
        self._labels: dict[str, Label] = {}
        # Identities known to be stored, two generations (the young one becomes the old
        # when full): most links of a page point to pages seen long ago.
        self._known: set[str] = set()
        self._old: set[str] = set()
        # Identities known to have a seed row (never deleted either), and the candidate
        # seeds pending: an outside link is dropped only when both its rows are known.
        self._seeds: set[str] = set()
        self._old_seeds: set[str] = set()
        self._pending_seeds: set[str] = set()
        self.spellings = spellings  # fallback spellings (crawl/spellings.py)
        # Learning while crawling (crawl/learn.py): told of the links URL-seen drops on a
        # host with learned rules (a rule's merges, kept so that a retraction can undo them).
        # Neither calls back: what they decide for the admission comes as orders (``apply``).
        self.learning = learning

    def seed(self, seeds: Iterable[str]) -> None:
        """Given seeds (a fresh crawl): seed rows, parties, and their URLs queued."""
        for url in seeds:
            c = self.discovery.seed(url)
            if c is not None:
                self._add(c.admit(None))
        self.flush()

    def discover(
        self,
        candidates: list[Candidate],
        item: QueuedURL,
        labels: dict[str, Label] | None = None,
    ) -> None:
        """Candidates found at ``item`` (``Discovery.links``): the new ones wait for the flush."""
        known, old, pending = self._known, self._old, self._pending_ids
        seeds, old_seeds, pending_seeds = self._seeds, self._old_seeds, self._pending_seeds
        spellings: list[tuple[str, str]] = []
        touched = self.learning.live.touched if self.learning is not None else ()
        merged: list[AdmitURL] = []
        for c in candidates:
            identity = c.identity
            stored = identity in known or identity in old
            at: int | None = None
            if c.external:
                seeded = stored and (identity in seeds or identity in old_seeds)
                settled = seeded or identity in pending_seeds
            else:
                seeded = False
                settled = stored or identity in pending
                if not stored and settled and c.depth < self._pending[pending[identity]].depth:
                    # A shorter path to a link still waiting: it goes in at the least depth
                    # found, or ``--max-depth`` may refuse the page a shorter path reaches.
                    settled, at = False, pending[identity]
            if c.repeat or settled:
                self.discovery.settle_one(c.url, c.site)
                if seeded:
                    self.discovery.settle_seed(c.url)
                if not stored:
                    self._settled_by.setdefault(identity, []).append(c.url)
                spellings.append((identity, c.url))  # another spelling of a known identity
                if touched and authority_of(identity) in touched:
                    merged.append(c.admit(item.url_id))  # maybe a learned rule's merge
                continue
            label = labels.get(c.url) if labels else None
            u = c.admit(item.url_id, 0 if label is None else label.priority)
            if at is None:
                self._add(u)
            else:
                self._pending[at] = u
            if label is not None:
                self._labels[c.url] = label
        if spellings and self.spellings is not None:
            self.apply(self.spellings.note(spellings))
        if merged and self.learning is not None:
            for u in self.learning.merged(merged):
                self._add(u)  # a merge due a check: admitted under its own identity
        urgent = labels is not None and any(lb.priority >= URGENT for lb in labels.values())
        if urgent or len(self._pending) >= _FLUSH_AT:
            # Seed 002 §3.4.2: a list page's detail pages are fetched before the next list
            # page, so they are admitted (and claimed) now, not at the next commit.
            self.flush()

    def probe_redirects(self, candidates: list[Candidate], item: QueuedURL) -> None:
        """``evaluate --fetch`` (crawl/probe.py): a redirect's target is requested too, as a
        probe row of its own, up to ``MAX_PROBE_HOPS`` hops; links are not followed."""
        hop = item.depth + 1
        rows = [
            NewURL(c.url, PROBE_PREFIX + c.url, c.host, hop, LinkKind.REDIRECT, None, item.url_id)
            for c in candidates
            if c.kind is LinkKind.REDIRECT and hop <= MAX_PROBE_HOPS
        ]
        for row, ok in zip(rows, self.store.add_urls(rows), strict=True):
            if ok:
                self.hosts.queued(row.host)

    def same_document(self, c: Candidate, item: QueuedURL) -> None:
        """A redirect target under a derived identity (``crawl/redirect.py``)."""
        self._add(c.admit(item.url_id))

    def apply(self, orders: Iterable[Order]) -> None:
        """What spellings and learning decided (``crawl/_orders.py``), in their order."""
        for order in orders:
            if isinstance(order, Fallback):
                self.same_document(order.candidate, order.item)
            elif isinstance(order, Readmit):
                self.readmit(order.urls)
            elif isinstance(order, Rekey):
                self.rekey(order.hosts, order.identity)
            else:
                self.forget(order.identities)

    def rekey(self, hosts: Collection[str], identity: Callable[[AdmitURL], str | None]) -> int:
        """A learned rule changed the identities on ``hosts``: the links waiting here for
        the next flush take theirs (``identity``; None keeps one), so the crawl DB sees a
        link that the rule makes a repeat as one — otherwise a page's links found just
        before the rule was learned were admitted, and fetched, under their old identity.
        How many changed."""
        changed = 0
        pending = self._pending
        for i, u in enumerate(pending):
            if u.host in hosts and not u.given:
                new = identity(u)
                if new is not None and new != u.identity:
                    pending[i] = dataclasses.replace(u, identity=new)
                    changed += 1
        if changed:
            self._pending_ids = {}
            for i, u in enumerate(pending):
                self._pending_ids.setdefault(u.identity, i)
            self._pending_seeds = {u.identity for u in pending if u.external or u.given}
        return changed

    def readmit(self, urls: Iterable[AdmitURL]) -> None:
        """URLs a retracted rule had merged: admitted again with the next flush."""
        for u in urls:
            self._add(u)

    def _add(self, u: AdmitURL) -> None:
        self._pending_ids.setdefault(u.identity, len(self._pending))
        self._pending.append(u)
        if u.external or u.given:
            self._pending_seeds.add(u.identity)

    def flush(self) -> int:
        """Admit what is pending (one ``CrawlStore.admit``); how many URLs were queued."""
        if self.spellings is not None:
            self.spellings.flush()
        pending = self._pending
        if not pending:
            return 0
        ids, seeds = self._pending_ids, self._pending_seeds
        self._pending, self._pending_ids, self._pending_seeds = [], {}, set()
        labels, self._labels = self._labels, {}
        settled_by, self._settled_by = self._settled_by, {}
        try:
            result = self.store.admit(pending, self.discovery.limits, self.batch)
        except DatabaseAway:
            # Nothing admitted (the engine's loop does not wait for the DB): all of it
            # stays pending, for the next flush once the DB is reached.
            self._pending, self._pending_ids, self._pending_seeds = pending, ids, seeds
            self._labels, self._settled_by = labels, settled_by
            raise
        stats, d, hosts = self.stats, self.discovery, self.hosts
        stats.seeds_added += result.seeds_added
        queued = 0
        stored: list[str] = []
        seeded: list[str] = []
        seen_again: list[tuple[str, str]] = []
        rows: list[tuple[AdmitURL, bool]] = []
        touched = self.learning.live.touched if self.learning is not None else ()
        merged: list[AdmitURL] = []
        for u, a in zip(pending, result.admitted, strict=True):
            verdict = a.verdict
            if u.external or u.given:  # the store wrote its seed row, whatever the verdict
                seeded.append(u.identity)
            if verdict is Verdict.QUEUED:
                queued += 1
                hosts.queued(u.host)
                stored.append(u.identity)
                d.settle_one(u.url, u.site)
                if u.external or u.given:
                    d.settle_seed(u.url)
                if not u.given:
                    stats.discovered += 1
            elif verdict is Verdict.KNOWN:
                stored.append(u.identity)
                d.settle_one(u.url, u.site)
                if u.external or u.given:
                    d.settle_seed(u.url)
                seen_again.append((u.identity, u.url))
                if touched and authority_of(u.identity) in touched:
                    merged.append(u)
            else:
                d.stats.reject(verdict.value)
                for url in settled_by.get(u.identity, ()):
                    d.unsettle(url)
            rows.append((u, verdict is Verdict.QUEUED))
        self._remember(stored)
        self._remember_seeds(seeded)
        if seen_again and self.spellings is not None:
            self.apply(self.spellings.note(seen_again))
        if merged and self.learning is not None:
            for m in self.learning.merged(merged):
                self._add(m)  # a merge due a check: admitted with the next flush
        if labels and self.scripted is not None:
            self._label(rows, labels)
        return queued

    def _label(self, rows: list[tuple[AdmitURL, bool]], labels: dict[str, Label]) -> None:
        """Seed 002 §3.4.2: store the new URLs' labels; claim detail pages at once."""
        self.store.label_urls(
            [labels[u.url].url_label(u.identity) for u, ok in rows if ok and u.url in labels]
        )
        self.hosts.claim_now(urgent_hosts([(u.host, u.priority) for u, ok in rows if ok]))

    def label(self, label: URLLabel) -> None:
        self.store.label_urls([label])

    def forget(self, identities: Iterable[str]) -> None:
        """Identities no longer stored (a spelling that held one under a learned host alias
        gave it up, crawl/learn.py): a link to them is admitted again, not dropped."""
        for identity in identities:
            self._known.discard(identity)
            self._old.discard(identity)

    def _remember(self, identities: list[str]) -> None:
        known = self._known
        known.update(identities)
        if len(known) > _KNOWN_LIMIT:
            self._old, self._known = known, set()

    def _remember_seeds(self, identities: list[str]) -> None:
        seeds = self._seeds
        seeds.update(identities)
        if len(seeds) > _KNOWN_LIMIT:
            self._old_seeds, self._seeds = seeds, set()

    @property
    def pending(self) -> int:
        return len(self._pending)
