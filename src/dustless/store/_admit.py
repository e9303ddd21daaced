"""The pure half of admission (seed 004 §2), shared by the SQL stores: which found URLs
become queued rows, which parties they start or join, and which limits refuse them.

A store reads what the decision needs (known identities, the seed rows, the sites involved
and the totals) in the transaction that holds the limits, calls :func:`decide`, and writes
its rows — ``_sqlite_work.py`` and ``_pg_work.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dustless.kinds import LinkKind
from dustless.store._types import Admitted, AdmitURL, Limits, Verdict

__all__ = ["Site", "decide"]


class Site:
    __slots__ = ("new", "pages", "seed_id")

    def __init__(self, seed_id: int | None, pages: int, new: bool = False) -> None:
        self.seed_id = seed_id
        self.pages = pages
        self.new = new


def decide(
    urls: Sequence[AdmitURL],
    limits: Limits,
    *,
    known: set[str],
    seed_ids: Mapping[str, int],
    sites: dict[str, Site],
    total: int,
    n_sites: int,
) -> tuple[list[Admitted], list[tuple[AdmitURL, int | None, int, LinkKind]]]:
    """The pure part of ``admit`` (seed 004 §2), in the order the URLs were found.

    ``known``: identities already stored; ``seed_ids``: the seed row of every outside link and
    given seed; ``sites``: the parties of the sites involved (changed in place: new parties,
    pages); ``total``/``n_sites``: URLs admitted and parties so far. Returns the verdicts and
    the rows to insert as ``(url, seed_id, depth, kind)``.
    """
    out: list[Admitted] = []
    rows: list[tuple[AdmitURL, int | None, int, LinkKind]] = []
    taken: set[str] = set()
    for u in urls:
        if u.identity in known or u.identity in taken:
            out.append(Admitted(Verdict.KNOWN))
            continue
        site = sites.get(u.site)
        depth, kind, seed_id = u.depth, u.kind, u.seed_id
        if u.given:
            seed_id, depth, kind = seed_ids[u.identity], 0, LinkKind.SEED
        elif u.external:
            if site is None:
                if limits.max_sites is not None and n_sites >= limits.max_sites:
                    out.append(Admitted(Verdict.MAX_SITES))
                    continue
                # An outside link to a site not crawled yet: the seed of a new party, at
                # depth 0 (004 §2). One to a site with a party joins it one level deeper,
                # so a chain of cross-links cannot reset the depth limit (trap guard).
                seed_id, depth, kind = seed_ids[u.identity], 0, LinkKind.SEED
            else:
                seed_id = site.seed_id
        if not u.given:
            verdict = _limit(limits, depth, total, site)
            if verdict is not None:
                out.append(Admitted(verdict))
                continue
        if site is None:  # a new party (or an internal link of a crawl stored without sites)
            site = sites[u.site] = Site(seed_id, 0, new=True)
            n_sites += 1
        site.pages += 1
        total += 1
        taken.add(u.identity)
        rows.append((u, seed_id, depth, kind))
        out.append(Admitted(Verdict.QUEUED, None, seed_id, depth))
    return out, rows


def _limit(limits: Limits, depth: int, total: int, site: Site | None) -> Verdict | None:
    if limits.max_depth is not None and depth > limits.max_depth:
        return Verdict.DEPTH
    if limits.max_pages is not None and total >= limits.max_pages:
        return Verdict.MAX_PAGES
    per_site = limits.max_pages_per_site
    if per_site is not None and site is not None and site.pages >= per_site:
        return Verdict.MAX_PAGES_PER_SITE
    return None
