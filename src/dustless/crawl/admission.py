"""Admission: links found on a page (or the given seeds) become seed rows and queued URLs.

The I/O half of discovery (``crawl/discover.py`` is the pure half): candidates that URL-seen
finds new pass ``Discovery.admit`` (depth, ``--max-sites``, page limits), and are stored as
``urls`` rows in state ``queued``; outside links are candidate seeds (seed 004 §2), stored in
the seed table, their authority. With ``--script`` the labels of seed 002 §3.4 go with the rows,
and the urgent ones are claimed at once, ahead of the host's window (§3.4.2).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from dustless.crawl.discover import Candidate, Discovery
from dustless.crawl.progress import CrawlStats
from dustless.crawl.scripted import Label, ScriptedPages
from dustless.crawl.window import Window

if TYPE_CHECKING:
    from dustless.crawl.spellings import Spellings
from dustless.frontier import QueuedURL
from dustless.store import NewSeed, NewURL, SQLiteStore, UrlSeen

__all__ = ["Admission"]


class Admission:
    """Stores what ``Discovery`` admits, for one batch of one crawl."""

    def __init__(
        self,
        store: SQLiteStore,
        seen: UrlSeen,
        discovery: Discovery,
        window: Window,
        stats: CrawlStats,
        *,
        batch: int,
        scripted: ScriptedPages | None,
    ) -> None:
        self.store = store
        self.seen = seen
        self.discovery = discovery
        self.window = window
        self.stats = stats
        self.batch = batch
        self.scripted = scripted
        self.spellings: Spellings | None = None  # fallback spellings (crawl/spellings.py)

    def seed(self, seeds: Iterable[str]) -> None:
        """Given seeds (a fresh crawl): seed rows, parties, and their URLs queued."""
        for url in seeds:
            c = self.discovery.seed(url)
            if c is None:
                continue
            [(seed_id, _)] = self.store.add_seeds(
                [NewSeed(c.url, c.identity, c.host, None, self.batch)]
            )
            self.discovery.add_party(c.site, seed_id)
            row = NewURL(c.url, c.identity, c.host, 0, "s", seed_id, None)
            [ok] = self.store.add_urls([row])
            self.seen.add([c.identity])
            if ok:
                self.discovery.count(c.site)
                self.window.queued(c.host)

    def discover(
        self,
        found: list[tuple[str, str]],
        item: QueuedURL,
        *,
        redirect: bool,
        labels: dict[str, Label] | None = None,
    ) -> tuple[int, int]:
        """Links ``(url, kind)`` found at ``item``: the new ones queued; returns the numbers
        of internal and external links among those the filter kept."""
        d = self.discovery
        party_site = d.site_of_host(item.host)
        cands = d.links(
            found,
            depth=item.depth,
            seed_id=item.seed_id or None,
            party_site=party_site,
            redirect=redirect,
        )
        if not cands:
            return 0, 0
        external = [c for c in cands if c.external]
        seed_ids = self.add_seeds(external, item.url_id) if external else {}
        known = self.seen.seen([c.identity for c in cands])
        if self.spellings is not None:  # another spelling of a stored identity: kept
            self.spellings.note([c for c, k in zip(cands, known, strict=True) if k])
        fresh = [c for c, k in zip(cands, known, strict=True) if not k]
        admitted = d.admit(fresh)
        self.admit(admitted, item.url_id, seed_ids, labels)
        d.settle([c.url for c, k in zip(cands, known, strict=True) if k])
        d.settle([c.url for c in admitted])
        return len(cands) - len(external), len(external)

    def add_seeds(self, cands: list[Candidate], parent_id: int | None) -> dict[str, int]:
        """004 §2: every outside link is a candidate seed; one not known yet becomes a seed
        row (the seed table is their authority). Returns the seed id of each identity."""
        ids = self.store.add_seeds(
            [NewSeed(c.url, c.identity, c.host, parent_id, self.batch) for c in cands]
        )
        out = {}
        for c, (seed_id, inserted) in zip(cands, ids, strict=True):
            out[c.identity] = seed_id
            if inserted:
                self.stats.seeds_added += 1
        return out

    def admit(
        self,
        admitted: list[Candidate],
        parent_id: int | None,
        seed_ids: dict[str, int],
        labels: dict[str, Label] | None = None,
    ) -> None:
        """Admitted candidates stored as queued URLs (new parties get their seed rows)."""
        if not admitted:
            return
        d = self.discovery
        rows = []
        for c in admitted:
            seed_id = c.seed_id
            if c.new_site:
                seed_id = seed_ids.get(c.identity)
                if seed_id is None:  # a redirect's target, say: not seen as a link
                    [(seed_id, _)] = self.store.add_seeds(
                        [NewSeed(c.url, c.identity, c.host, parent_id, self.batch)]
                    )
                d.add_party(c.site, seed_id)
            elif seed_id is None:
                seed_id = d.parties.get(c.site)
            row = NewURL(c.url, c.identity, c.host, c.depth, c.kind, seed_id, parent_id)
            label = labels.get(c.url) if labels else None
            rows.append(row if label is None else label.row(row))
        inserted = self.store.add_urls(rows)
        self.seen.add(r.identity for r in rows)
        window = self.window
        for row, ok in zip(rows, inserted, strict=True):
            if ok:
                window.queued(row.host)
                self.stats.discovered += 1
            else:
                d.count(d.site_of_host(row.host), -1)
        if labels and self.scripted is not None:  # seed 002 §3.4.2: detail pages first
            window.take(self.scripted.admitted(rows, inserted, labels, window.frontier))
