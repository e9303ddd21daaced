"""A site's script (seed 002 Fig. 6 ``<site>``) and a set of them (one or more files).

Both are site rules for the normalizer's ``site-rules`` step: ``apply(url) -> str``,
the identity when nothing applies. Both filter a page's links as §3.4.1 does: on a scripted
site only links that match a pattern are followed (Table 2: 88 % of links removed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from dustless.errors import ScriptError
from dustless.url import split_authority, split_lenient

from ._learned import LearnedRule
from ._patterns import AddrType, Match, PageType, UrlPattern, keep_port

__all__ = [
    "FilterResult",
    "KeptLink",
    "RuleSet",
    "SiteScript",
    "SupportsURL",
    "check_identity",
]

# Enough for every rule of a site to fire a few times; a URL that has not settled by then is
# caught in rules that undo each other, and is left alone (which keeps ``apply`` idempotent).
_MAX_ROUNDS = 32
_RANK = {
    "hostRedirect": 0,
    "dropParam": 1,
    "fixParam": 1,
    "queryToPath": 2,  # after the parameters that never matter: the query form's own is left
    "stripPrefix": 2,
    "substitute": 2,
    "normalize": 3,
    "addSlash": 4,
}


class SupportsURL(Protocol):
    """Anything with a ``url`` (``dustless.extract.Link`` is one)."""

    @property
    def url(self) -> str: ...


@dataclass(frozen=True, slots=True)
class KeptLink:
    """A link that survived filtering: as found (``source``) and where to go (``url``)."""

    source: str
    url: str
    match: Match | None


class FilterResult(NamedTuple):
    """The links of one page after filtering; ``before``/``after`` are Table 2's columns."""

    kept: tuple[KeptLink, ...]
    dropped: tuple[str, ...]

    @property
    def before(self) -> int:
        return len(self.kept) + len(self.dropped)

    @property
    def after(self) -> int:
        return len(self.kept)

    @property
    def urls(self) -> tuple[str, ...]:
        """The distinct URLs to follow, in page order (rewriting merges some, Fig. 3)."""
        return tuple(dict.fromkeys(k.url for k in self.kept))


def _settle(step: Callable[[str], str], url: str) -> str:
    seen = {url}
    current = url
    for _ in range(_MAX_ROUNDS):
        nxt = step(current)
        if nxt == current:
            return current
        if nxt in seen:
            return url
        seen.add(nxt)
        current = nxt
    return url


def _filter(
    links: Iterable[str | SupportsURL], match: Callable[[str], Match | None], scripted: bool
) -> FilterResult:
    kept: list[KeptLink] = []
    dropped: list[str] = []
    for link in links:
        source = link if isinstance(link, str) else link.url
        m = match(source)
        if m is not None:
            kept.append(KeptLink(source, m.target, m))
        elif scripted or not split_lenient(source).is_absolute:
            # §3.4.1: on a scripted site a link no pattern names is not collected; and a
            # javascript link no pattern turns into a URL cannot be followed anywhere.
            dropped.append(source)
        else:
            kept.append(KeptLink(source, source, None))
    return FilterResult(tuple(kept), tuple(dropped))


def check_identity(value: str) -> str:
    host = value.strip().lower()
    if not host or any(c in host for c in "/?#@ \t\r\n"):
        raise ScriptError(f"identity {value!r} is not a host name; expected e.g. www.web.com")
    return host


@dataclass(frozen=True, slots=True)
class SiteScript:
    """One ``<site>``: its hosts (``<identity>``), URL patterns and learned rules.

    An identity without a port covers the host on every port; with one, that port only.
    A site is *scripted* when it has at least one pattern: then its pages' links are
    filtered. Patterns are tried in file order and the first match wins.
    """

    title: str
    identities: tuple[str, ...]
    patterns: tuple[UrlPattern, ...] = ()
    rules: tuple[LearnedRule, ...] = ()
    # URL sources in a crawl (``<site sitemaps="true" feeds="false">``): read this site's
    # sitemaps / feeds or not, over the crawl's flags; ``None`` leaves the flags in force.
    sitemaps: bool | None = None
    feeds: bool | None = None
    line: int | None = field(default=None, compare=False)
    _ordered: tuple[LearnedRule, ...] = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        # Host first (the new host's rules then apply), parameters while the query is still a
        # query, substrings after them (a substitution may fold "?id=" into the path), slashes
        # last. Within a kind, file order.
        ordered = sorted(self.rules, key=lambda r: _RANK[r.element])
        object.__setattr__(self, "_ordered", tuple(ordered))
        if not self.title.strip():
            raise ScriptError("site has an empty title; expected <site title=…>")
        if not self.identities:
            raise ScriptError(f"site {self.title!r} has no identity; expected <identity value=…>")
        object.__setattr__(self, "identities", tuple(check_identity(i) for i in self.identities))

    @property
    def scripted(self) -> bool:
        return bool(self.patterns)

    def covers(self, url: str) -> bool:
        """Whether ``url`` is on one of this site's hosts."""
        parts = split_lenient(url)
        if not parts.is_absolute:
            return False
        host, port = parts.host, parts.port
        for identity in self.identities:
            ihost, iport = split_authority(identity)
            if ihost == host and iport in (None, port):
                return True
        return False

    def match(self, text: str) -> Match | None:
        """The first pattern's match for a URL, a ``javascript:`` link or an onclick text."""
        for pattern in self.patterns:
            m = pattern.match(text)
            if m is not None:
                return m
        return None

    def page_type(self, url: str) -> PageType:
        m = self.match(url)
        return PageType.OTHER if m is None else m.page_type

    def rewrite(self, text: str) -> str | None:
        """``targetAddr`` for the first matching pattern, or ``None``."""
        m = self.match(text)
        return None if m is None else m.target

    def javascript_links(self, text: str) -> tuple[Match, ...]:
        """Every call of a javascript pattern in ``text`` (href, onclick or script, Fig. 8)."""
        return tuple(
            m
            for p in self.patterns
            if p.original_type is AddrType.JAVASCRIPT
            for m in p.search(text)
        )

    def filter_links(self, links: Iterable[str | SupportsURL]) -> FilterResult:
        """Links of one of this site's pages: matching ones rewritten, others dropped."""
        return _filter(links, self.match, self.scripted)

    def _step(self, url: str) -> str:
        target = self.rewrite(url)
        if target is not None and target != url:
            return target
        if self.rules and self.covers(url):
            for rule in self._ordered:
                new = rule.apply(url)
                if new != url:
                    return new
        return url

    def apply(self, url: str) -> str:
        """The normalizer's site rule: rewrite until nothing changes; never raises."""
        return _settle(self._step, url)


def _pattern_host(pattern: UrlPattern) -> str | None:
    if pattern.original_type is not AddrType.URL:
        return None
    return split_lenient(pattern.original).host


@dataclass(frozen=True, slots=True)
class RuleSet:
    """All the scripts and learned rules in force (``--script`` is repeatable).

    Sites keep their order; several sites may name the same host (a hand-written script
    and a learned file): all of them apply.
    """

    sites: tuple[SiteScript, ...] = ()
    _by_host: Mapping[str, tuple[SiteScript, ...]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )
    _js_sites: tuple[SiteScript, ...] = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        index: dict[str, list[SiteScript]] = {}
        for site in self.sites:
            hosts = {split_authority(i)[0] for i in site.identities}
            hosts |= {h for p in site.patterns if (h := _pattern_host(p))}
            for host in hosts:
                index.setdefault(host, []).append(site)
        object.__setattr__(self, "_by_host", {h: tuple(s) for h, s in index.items()})
        js = tuple(
            s for s in self.sites if any(p.original_type is AddrType.JAVASCRIPT for p in s.patterns)
        )
        object.__setattr__(self, "_js_sites", js)

    def __add__(self, other: RuleSet) -> RuleSet:
        return RuleSet(self.sites + other.sites)

    def _candidates(self, text: str) -> tuple[SiteScript, ...]:
        parts = split_lenient(text)
        if parts.is_absolute:
            return self._by_host.get(parts.host, ())
        return self._js_sites

    def sites_for(self, url: str) -> tuple[SiteScript, ...]:
        """The sites whose identity covers ``url``."""
        return tuple(s for s in self._candidates(url) if s.covers(url))

    def sources_for(self, url: str) -> tuple[bool | None, bool | None]:
        """``(sitemaps, feeds)`` as the first site covering ``url`` that says each; ``None``
        where no site says (the crawl's flags decide)."""
        sitemaps = feeds = None
        for s in self.sites_for(url):
            if sitemaps is None:
                sitemaps = s.sitemaps
            if feeds is None:
                feeds = s.feeds
        return sitemaps, feeds

    @property
    def chooses_sources(self) -> bool:
        """Does any site choose whether its sitemaps or feeds are read?"""
        return any(s.sitemaps is not None or s.feeds is not None for s in self.sites)

    def is_scripted(self, url: str) -> bool:
        """Whether ``url`` is on a site with patterns (its links get filtered)."""
        return any(s.scripted for s in self.sites_for(url))

    def match(self, text: str) -> Match | None:
        """The first match among all sites (for a javascript text: all javascript patterns)."""
        for site in self._candidates(text):
            m = site.match(text)
            if m is not None:
                return m
        return None

    def javascript_links(self, text: str, page_url: str | None = None) -> tuple[Match, ...]:
        """Calls in ``text`` that a script turns into URLs; with ``page_url``, that site's."""
        if page_url is None:
            return tuple(m for s in self._js_sites for m in s.javascript_links(text))
        # The page's port carries over to a target on its host (docs: "Ports").
        sites = self.sites_for(page_url)
        return tuple(keep_port(m, page_url) for s in sites for m in s.javascript_links(text))

    def filter_links(self, page_url: str, links: Iterable[str | SupportsURL]) -> FilterResult:
        """§3.4.1 URL filtering for the links found on ``page_url``.

        A javascript link is read with the scripts of the page's own site; an absolute URL
        with any site's patterns. On a scripted page, links no pattern matches are dropped;
        elsewhere they are kept as they are.
        """
        page_sites = self.sites_for(page_url)
        scripted = any(s.scripted for s in page_sites)

        def match(text: str) -> Match | None:
            if split_lenient(text).is_absolute:
                return self.match(text)
            for site in page_sites:
                m = site.match(text)
                if m is not None:
                    return keep_port(m, page_url)
            return None

        return _filter(links, match, scripted)

    def _step(self, url: str) -> str:
        for site in self._candidates(url):
            new = site._step(url)
            if new != url:
                return new
        return url

    def apply(self, url: str) -> str:
        """The normalizer's site rule for every site here; idempotent, never raises."""
        return _settle(self._step, url)
