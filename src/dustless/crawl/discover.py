"""From links to candidates: filter, normalize, scope (no I/O).

The order follows the flow of ARCHITECTURE ("URL filter → normalizer → URL seen?"):

1. what is fetched is the link's first spelling in its ``rfc3986`` form (``resolve`` already
   returns it), less the fragment, which no server ever sees (seed 000 §3);
2. the URL filter (scheme, length, extension, trap guard, deny patterns);
3. the policy's form is the URL's identity, what URL-seen compares (ARCHITECTURE "Which URL
   the crawler fetches"): an unsafe step merges spellings but never invents a URL to fetch;
4. the party (seed 004 §2): a link inside the party's site goes to its queue one level deeper
   (breadth-first, ``--max-depth``); an outside link is a candidate seed.

What URL-seen and the limits then decide (a new party at depth 0 while the crawl has fewer
than ``--max-sites`` sites; ``--max-pages``, ``--max-pages-per-site``, ``--max-depth``) is the
crawl DB's to decide, in one batch for every worker alike (``CrawlStore.admit``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

from dustless.crawl.filter import UrlFilter
from dustless.crawl.scope import Scope, is_internal, site_of
from dustless.errors import InvalidURL
from dustless.kinds import LinkKind
from dustless.store import AdmitURL, Limits
from dustless.url import authority_of, hostname_of

__all__ = ["Candidate", "Discovery", "DiscoveryStats", "fetch_form", "link_counts"]


def link_counts(cands: Iterable[Candidate]) -> tuple[int, int]:
    """Internal and external links among ``cands``; a repeat is no link of its own."""
    internal = external = 0
    for c in cands:
        if not c.repeat:
            if c.external:
                external += 1
            else:
                internal += 1
    return internal, external


def fetch_form(url: str) -> str:
    """The URL as requested: no fragment (a client never sends it, RFC 9110 §7.1)."""
    hash_at = url.find("#")
    return url if hash_at < 0 else url[:hash_at]


class _Normalizer(Protocol):
    def normalize(self, url: str) -> str: ...


# What the caches of settled strings give for a string they do not hold (no site is empty).
_MISSING = ""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A URL that passed the filter and the scope: to be checked by URL-seen, then admitted."""

    url: str
    identity: str
    host: str  # authority: the politeness key
    site: str
    depth: int  # parent depth + 1 (a redirect target: the parent's; a given seed: 0)
    kind: LinkKind
    seed_id: int | None  # the finder's party; None for an outside link or a given seed
    external: bool = False
    given: bool = False
    # Another spelling of an identity the same page linked before: not a link of its own
    # (link counts leave it out), but admission notes it — a fallback spelling, and a learned
    # rule's merge that a retraction must be able to undo.
    repeat: bool = False

    def admit(self, parent_id: int | None, priority: int = 0) -> AdmitURL:
        """The request to the crawl DB that admits it (``CrawlStore.admit``)."""
        return AdmitURL(
            self.url,
            self.identity,
            self.host,
            self.site,
            self.depth,
            self.kind,
            self.seed_id,
            parent_id,
            self.external,
            self.given,
            priority,
        )


@dataclass(slots=True)
class DiscoveryStats:
    links: int = 0
    known: int = 0  # repeats of URL strings already settled
    internal: int = 0
    external: int = 0
    rejected: dict[str, int] = field(default_factory=dict)  # reason -> count

    def reject(self, reason: str, n: int = 1) -> None:
        self.rejected[reason] = self.rejected.get(reason, 0) + n


class Discovery:
    """The admission rules of one crawl; keeps the counters the limits need."""

    def __init__(
        self,
        url_filter: UrlFilter,
        identity: _Normalizer,
        *,
        scope: Scope = Scope.HOST,
        max_pages: int | None = None,
        max_pages_per_site: int | None = None,
        max_sites: int | None = None,
    ) -> None:
        self.scope = scope
        self.filter = url_filter
        # Sitemaps and feeds are named by what points at them (robots.txt, an index, a
        # <link rel="alternate">), not guessed from the path: ``.xml.gz`` and ``.rss`` are
        # what they are meant to be, so the extension list does not apply to them.
        self.source_filter: UrlFilter = replace(self.filter, deny_extensions=frozenset())
        self._norm = identity.normalize
        self.stats = DiscoveryStats()
        # URL strings whose fate is settled (stored, or refused by the filter): the same
        # string is the same URL, so a repeat skips filter, normalizer and URL-seen. Most
        # links on a page are repeats (navigation); this is the crawl's hottest shortcut.
        # Two generations bound the memory: when the young one is full it becomes the old.
        # A stored URL's string maps to its site: from another party's page the same string
        # is an outside link, a candidate seed (004 §2), which the seed table must see once
        # whichever party found the URL first; a string refused for good maps to None.
        self._known: dict[str, str | None] = {}
        self._old: dict[str, str | None] = {}
        # URL strings whose seed row exists (seed rows are never deleted): an outside link
        # to one of them, stored too, is settled for every party.
        self._seeded: set[str] = set()
        self._old_seeded: set[str] = set()
        self.known_limit = 200_000
        self.limits = Limits(
            max_depth=self.filter.max_depth,
            max_pages=max_pages,
            max_pages_per_site=max_pages_per_site,
            max_sites=max_sites,
        )

    def site_of_host(self, host: str) -> str:
        return site_of(hostname_of(host), self.scope)

    def identity(self, url: str) -> str:
        return self._norm(url)

    def settle_one(self, url: str, site: str) -> None:
        """This URL string is stored, on ``site``: skip it from now on, but as an outside
        link (another party's page) until :meth:`settle_seed` says its seed row exists."""
        known = self._known
        known[url] = site
        if len(known) > self.known_limit:
            self._old, self._known = known, {}

    def unsettle(self, url: str) -> None:
        """This URL string was settled as a repeat of a link the crawl DB then refused
        (``Admission.flush``): a later link to it is decided afresh."""
        self._known.pop(url, None)
        self._old.pop(url, None)

    def settle_seed(self, url: str) -> None:
        """This URL string has its seed row (004 §2's seed table)."""
        seeded = self._seeded
        seeded.add(url)
        if len(seeded) > self.known_limit:
            self._old_seeded, self._seeded = seeded, set()

    # -- the decisions ------------------------------------------------------------------------

    def seed(self, url: str) -> Candidate | None:
        """A given seed (in rfc3986 form): a candidate of its own party, or None if filtered."""
        url = fetch_form(url)
        if self.filter.reject(url, 0) is not None:
            return None
        try:
            identity = self._norm(url)
        except InvalidURL:
            return None
        host = authority_of(url)
        site = site_of(hostname_of(host), self.scope)
        return Candidate(url, identity, host, site, 0, LinkKind.SEED, None, given=True)

    def sources(
        self,
        urls: Iterable[str],
        kind: LinkKind,
        *,
        depth: int,
        seed_id: int | None,
        party_site: str,
    ) -> list[Candidate]:
        """Sitemaps or feeds (``kind``) to read, at ``depth``, for the party of the finder.

        The filter (less the extension list) and the normalizer as for links, but neither
        the cache of settled strings (a ``.rss`` refused as a page link is still a feed) nor
        the party boundary: a sitemap another host serves for this site (sitemaps.org
        cross-submits) or a feed on a feed service belongs to the party that found it.
        """
        out: list[Candidate] = []
        seen_here: set[str] = set()
        for raw in urls:
            url = fetch_form(raw)
            reason = self.source_filter.reject(url, 0)
            if reason is not None:
                self.stats.reject(reason)
                continue
            try:
                identity = self._norm(url)
            except InvalidURL:
                self.stats.reject("invalid")
                continue
            if identity in seen_here:
                continue
            seen_here.add(identity)
            out.append(
                Candidate(url, identity, authority_of(url), party_site, depth, kind, seed_id)
            )
        return out

    def links(
        self,
        links: Iterable[tuple[str, LinkKind]],
        *,
        depth: int,
        seed_id: int | None,
        party_site: str,
        redirect: bool = False,
    ) -> list[Candidate]:
        """``links``: ``(absolute url, kind)`` found on a page at ``depth`` of a party.

        Filters and normalizes; decides inside/outside the party. A redirect target keeps
        the depth of the URL that redirected (it is the same document). Limits are applied
        later, by the crawl DB, to the URLs that URL-seen finds new.
        """
        out: list[Candidate] = []
        stats = self.stats
        reject = self.filter.reject
        norm = self._norm
        scope = self.scope
        child_depth = depth if redirect else depth + 1
        seen_here: dict[str, str] = {}  # identity -> the page's first spelling of it
        known, old = self._known, self._old
        seeded, old_seeded = self._seeded, self._old_seeded
        no_boundary = scope is Scope.ANY
        for raw, kind in links:
            stats.links += 1
            url = fetch_form(raw)
            site = known.get(url, _MISSING)
            if site is _MISSING:
                site = old.get(url, _MISSING)
            if site is not _MISSING and (
                site is None
                or site == party_site
                or no_boundary
                or url in seeded
                or url in old_seeded
            ):
                stats.known += 1
                continue
            reason = reject(url, 0)
            if reason is not None:
                stats.reject(reason)
                known[url] = None  # the filter's verdict never changes
                continue
            try:
                identity = norm(url)
            except InvalidURL:
                stats.reject("invalid")
                continue
            if identity == url:
                # Most URLs are their own identity: one string object, not two equal ones,
                # for the caches of settled URLs and stored identities (half their memory).
                identity = url
            first = seen_here.get(identity)
            if first is None:
                seen_here[identity] = url
            elif first == url:
                continue  # the same link again
            repeat = first is not None
            host = authority_of(url)
            name = hostname_of(host)
            if is_internal(scope, party_site, name):
                stats.internal += not repeat
                out.append(
                    Candidate(
                        url, identity, host, party_site, child_depth, kind, seed_id, repeat=repeat
                    )
                )
            else:
                stats.external += not repeat
                site = site_of(name, scope)
                out.append(
                    Candidate(
                        url, identity, host, site, child_depth, kind, None, True, repeat=repeat
                    )
                )
        return out
