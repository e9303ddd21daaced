"""From links to queue entries: filter, normalize, scope, limits (no I/O).

The order follows the flow of ARCHITECTURE ("URL filter → normalizer → URL seen?"):

1. what is fetched is the link's first spelling in its ``rfc3986`` form (``resolve`` already
   returns it), less the fragment, which no server ever sees (seed 000 §3);
2. the URL filter (scheme, length, extension, trap guard, deny patterns);
3. the policy's form is the URL's identity, what URL-seen compares (ARCHITECTURE "Which URL
   the crawler fetches"): an unsafe step merges spellings but never invents a URL to fetch;
4. the party (seed 004 §2): a link inside the party's site goes to its queue one level deeper
   (breadth-first, ``--max-depth``); an outside link is a candidate seed, crawled as a new
   party at depth 0 while the crawl has fewer than ``--max-sites`` sites;
5. ``--max-pages`` and ``--max-pages-per-site`` count URLs admitted to the queue.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

from dustless.crawl.config import CrawlConfig
from dustless.crawl.filter import UrlFilter
from dustless.crawl.scope import Scope, is_internal, site_of
from dustless.errors import InvalidURL

__all__ = ["Candidate", "Discovery", "DiscoveryStats", "authority_of", "fetch_form", "hostname_of"]


def fetch_form(url: str) -> str:
    """The URL as requested: no fragment (a client never sends it, RFC 9110 §7.1)."""
    hash_at = url.find("#")
    return url if hash_at < 0 else url[:hash_at]


def authority_of(url: str) -> str:
    """``host[:port]`` of an absolute URL in rfc3986 form (lowercase host, default port
    removed): the politeness key of the frontier, one queue per web server."""
    start = url.find("://") + 3
    end = len(url)
    for sep in "/?#":
        pos = url.find(sep, start)
        if 0 <= pos < end:
            end = pos
    auth = url[start:end]
    at = auth.rfind("@")
    return auth[at + 1 :] if at >= 0 else auth


def hostname_of(authority: str) -> str:
    if authority.startswith("["):
        return authority[: authority.find("]") + 1]
    colon = authority.rfind(":")
    return authority[:colon] if colon >= 0 else authority


class _Normalizer(Protocol):
    def normalize(self, url: str) -> str: ...


@dataclass(frozen=True, slots=True)
class Candidate:
    """A URL that passed the filter and the scope: to be checked by URL-seen, then admitted."""

    url: str
    identity: str
    host: str  # authority: the politeness key
    site: str
    depth: int  # in the party it joins; 0 for the seed of a new party
    kind: str  # a, f, h (004 Table 13), s (seed), r (redirect target)
    seed_id: int | None  # the party; None until a new party's seed row exists
    external: bool = False
    new_site: bool = False


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

    def __init__(self, config: CrawlConfig, identity: _Normalizer) -> None:
        self.config = config
        self.scope: Scope = config.scope
        self.filter: UrlFilter = config.url_filter()
        self._norm = identity.normalize
        self.stats = DiscoveryStats()
        # URL strings whose fate is settled (stored, or refused by the filter): the same
        # string is the same URL, so a repeat skips filter, normalizer and URL-seen. Most
        # links on a page are repeats (navigation); this is the crawl's hottest shortcut.
        # Two generations bound the memory: when the young one is full it becomes the old.
        self._known: dict[str, None] = {}
        self._old: dict[str, None] = {}
        self.known_limit = 200_000
        self.parties: dict[str, int] = {}  # site -> seed id of its party (-1: being created)
        self.site_pages: dict[str, int] = {}  # site -> URLs admitted
        self.total_pages = 0

    # -- counters (rebuilt from the store on resume) ------------------------------------------

    def add_party(self, site: str, seed_id: int) -> None:
        if self.parties.get(site, -1) == -1:
            self.parties[site] = seed_id

    def count(self, site: str, n: int = 1) -> None:
        self.site_pages[site] = self.site_pages.get(site, 0) + n
        self.total_pages += n

    def site_of_host(self, host: str) -> str:
        return site_of(hostname_of(host), self.scope)

    def identity(self, url: str) -> str:
        return self._norm(url)

    def settle(self, urls: Iterable[str]) -> None:
        """These URL strings are stored (or refused for good): skip them from now on."""
        known = self._known
        for url in urls:
            known[url] = None
        if len(known) > self.known_limit:
            self._old, self._known = known, {}

    def _room(self, site: str) -> str | None:
        c = self.config
        if c.max_pages is not None and self.total_pages >= c.max_pages:
            return "max-pages"
        if c.max_pages_per_site is not None and self.site_pages.get(site, 0) >= (
            c.max_pages_per_site
        ):
            return "max-pages-per-site"
        return None

    def _sites_full(self) -> bool:
        m = self.config.max_sites
        return m is not None and len(self.parties) >= m

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
        return Candidate(url, identity, host, site, 0, "s", None, True)

    def links(
        self,
        links: Iterable[tuple[str, str]],
        *,
        depth: int,
        seed_id: int | None,
        party_site: str,
        redirect: bool = False,
    ) -> list[Candidate]:
        """``links``: ``(absolute url, kind)`` found on a page at ``depth`` of a party.

        Filters and normalizes; decides inside/outside the party. A redirect target keeps
        the depth of the URL that redirected (it is the same document). Limits are applied
        later, by :meth:`admit`, to the URLs that URL-seen finds new.
        """
        out: list[Candidate] = []
        stats = self.stats
        reject = self.filter.reject
        norm = self._norm
        scope = self.scope
        child_depth = depth if redirect else depth + 1
        seen_here: set[str] = set()
        known, old = self._known, self._old
        for raw, kind in links:
            stats.links += 1
            url = fetch_form(raw)
            if url in known or url in old:
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
            if identity in seen_here:
                continue
            seen_here.add(identity)
            host = authority_of(url)
            name = hostname_of(host)
            if is_internal(scope, party_site, name):
                stats.internal += 1
                out.append(Candidate(url, identity, host, party_site, child_depth, kind, seed_id))
            else:
                stats.external += 1
                site = site_of(name, scope)
                out.append(Candidate(url, identity, host, site, child_depth, kind, None, True))
        return out

    def admit(self, candidates: Iterable[Candidate]) -> list[Candidate]:
        """Apply depth, ``--max-sites`` and the page limits to new URLs, in order, and count
        the admitted ones. An outside link to a site not crawled yet becomes the seed of a
        new party at depth 0 (004 §2); one to a site already crawled joins that party one
        level deeper, so a chain of cross-links cannot reset the depth limit (trap guard)."""
        out: list[Candidate] = []
        stats = self.stats
        max_depth = self.filter.max_depth
        for c in candidates:
            if c.external:
                known = self.parties.get(c.site)
                if known is None:
                    if self._sites_full():
                        stats.reject("max-sites")
                        continue
                    c = replace(c, depth=0, kind="s", new_site=True)
                else:
                    c = replace(c, seed_id=known if known >= 0 else None)
            if c.depth > max_depth:
                stats.reject("depth")
                continue
            full = self._room(c.site)
            if full is not None:
                stats.reject(full)
                continue
            if c.new_site:
                self.parties[c.site] = -1  # reserved; the engine stores the seed row
            self.count(c.site)
            out.append(c)
        return out
