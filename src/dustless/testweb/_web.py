"""A whole generated web: its sites by host name, seeds and truth (pure).

Which personalities a web has depends on its profile (docs/testweb.md): ``clean`` only plain sites,
``dirty`` every aliasing personality plus the pattern-script sites of seed 002, ``hostile``
only traps and misbehaviour, ``mixed`` all of them; ``canonical`` is ``dirty`` with every
site declaring its canonical URLs, plus the misconfigured sites of ``_canonical.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from urllib.parse import urlsplit

from dustless.testweb._canonical import misconfigured_sites
from dustless.testweb._core import Outcome, Page, Profile, Site, WebConfig, origin
from dustless.testweb._dbsites import ProductSite, WebComSite
from dustless.testweb._personality import (
    APACHE,
    DYNAMIC,
    HOSTILE,
    IIS,
    JSP,
    LINKS,
    PHP,
    PLAIN,
    TEMPLATED,
    Personality,
    Www,
)
from dustless.testweb._sitemaps import sitemap_sites
from dustless.testweb._sites import GeneratedSite

__all__ = ["NO_RESOURCE", "TruthRow", "Web", "build_web", "truth_kind", "truth_rid"]

#: The truth's resource id of an answer that is no resource: a 404, an error, a redirect, a
#: soft 404, robots.txt. Each is its own non-resource, never one shared id (two broken links
#: are not "the same page").
NO_RESOURCE = "-"


def truth_rid(out: Outcome) -> str:
    return out.rid if out.resource else NO_RESOURCE


def truth_kind(out: Outcome) -> str:
    """The truth's fourth column (``real`` profile): what the answer is. ``doc`` (a document),
    ``trap``, ``soft404`` (a 200 saying "not found"), ``notfound`` (a 4xx), ``redirect>URL``
    (where it leads), ``robots``, ``error`` (5xx or no answer)."""
    if out.trap:
        return "trap"
    if out.resource:
        return "doc"
    if out.rid.startswith(("redirect>", "soft404", "robots")):
        return out.rid
    if out.location is not None:
        return "redirect>" + out.location
    return "notfound" if 400 <= out.status < 500 else "error"


_DIRTY = (IIS, APACHE, PHP, JSP, LINKS)
_MIXED = (PLAIN, IIS, APACHE, PHP, JSP, LINKS, HOSTILE)
_WWW = (Www.ALIAS, Www.NONE, Www.DIFFERENT, Www.REDIRECT)
_FIELD = (IIS, APACHE, PHP, JSP, LINKS, DYNAMIC, TEMPLATED)
# Field: the IIS and dynamic sites get www twins that link to their own host name, the PHP
# site an unrelated www site beside it, the templated site none (seven sites, the order here).
_WWW_FIELD = (Www.ALIAS_LINKS, Www.NONE, Www.DIFFERENT, Www.REDIRECT, Www.ALIAS)


@dataclasses.dataclass(frozen=True, slots=True)
class TruthRow:
    """One line of the truth file: ``url<TAB>status<TAB>resource-id`` (``-``: no resource)."""

    url: str
    status: int
    rid: str
    #: what the answer is (``truth_kind``); written as a fourth column when not empty
    kind: str = ""

    def line(self) -> str:
        tail = f"\t{self.kind}" if self.kind else ""
        return f"{self.url}\t{self.status}\t{self.rid}{tail}\n"


class Web:
    """Every site of one configuration, and the answers to any request."""

    def __init__(self, cfg: WebConfig, sites: list[Site]) -> None:
        self.cfg = cfg
        self.sites = sites
        self.by_host: dict[str, Site] = {}
        for site in sites:
            for host in site.hosts:
                self.by_host[host] = site
        self.hosts = tuple(self.by_host)
        self.seeds = tuple(seed for site in sites for seed in site.seeds)
        self.pages_by_rid: dict[str, Page] = {p.rid: p for s in sites for p in s.pages()}
        #: the truth has a fourth column, each answer's kind (``real`` profile)
        self.kinds = cfg.profile is Profile.REAL

    def route(self, host: str, path: str, query: str) -> Outcome | None:
        """The answer for ``host``; None when no site has that name."""
        site = self.by_host.get(host)
        return None if site is None else site.route(host, path, query)

    def address_of(self, host: str) -> str:
        site = self.by_host.get(host)
        return site.address if site is not None else self.cfg.addresses[0]

    def resolve_args(self) -> list[str]:
        """``--resolve NAME:IP`` arguments that reach every host (curl-style)."""
        addresses = self.cfg.addresses
        if len(addresses) == 1:
            out = ["--resolve", f"*.test:{addresses[0]}"]
            out += [
                a
                for h in self.hosts
                if not h.endswith(".test")
                for a in ("--resolve", f"{h}:{addresses[0]}")
            ]
            return out
        return [a for h in self.hosts for a in ("--resolve", f"{h}:{self.address_of(h)}")]

    def initial_truth(self) -> Iterator[TruthRow]:
        """Every canonical URL, then every spelling any page links to, each once."""
        seen: set[str] = set()
        for site in self.sites:
            for page in site.pages():
                if page.url not in seen:
                    seen.add(page.url)
                    yield TruthRow(page.url, 200, page.rid, "doc" if self.kinds else "")
        for site in self.sites:
            for page in site.pages():
                for link in page.links:
                    if not link.crawlable or link.target in seen:
                        continue
                    parts = urlsplit(link.target)
                    out = self.route(parts.hostname or "", parts.path or "/", parts.query)
                    if out is None:
                        continue
                    seen.add(link.target)
                    kind = truth_kind(out) if self.kinds else ""
                    yield TruthRow(link.target, out.status, truth_rid(out), kind)

    def rates(self) -> Iterator[tuple[str, int, int]]:
        """(resource-id, period in days (0: never changes), phase) for every page."""
        for page in self.pages_by_rid.values():
            yield page.rid, page.period, page.phase


def _personalities(profile: Profile) -> tuple[Personality, ...]:
    if profile is Profile.CLEAN:
        return (PLAIN,)
    if profile in (Profile.DIRTY, Profile.CANONICAL):
        return _DIRTY
    if profile is Profile.HOSTILE:
        return (HOSTILE,)
    if profile is Profile.FIELD:
        return _FIELD
    return _MIXED


def build_web(cfg: WebConfig) -> Web:
    """Generate the web ``cfg`` describes; deterministic in ``cfg``."""
    if cfg.profile is Profile.SITEMAPS:
        return Web(cfg, sitemap_sites(cfg))
    if cfg.profile is Profile.REAL:
        from dustless.testweb._real import real_sites  # reads the corpus: only when asked

        return Web(cfg, real_sites(cfg))
    kinds = _personalities(cfg.profile)
    n = max(1, cfg.sites)
    names = [f"site{i}" for i in range(1, n + 1)]
    hosts = [f"{name}.test" for name in names]
    homes = [origin(h, cfg.port) + "/" for h in hosts]
    sites: list[Site] = []
    hostile_count = 0
    dirty = (Profile.DIRTY, Profile.MIXED, Profile.CANONICAL)
    for i, (name, host) in enumerate(zip(names, hosts, strict=True)):
        personality = kinds[i % len(kinds)]
        www = Www.NONE
        if cfg.profile in dirty and not personality.hostile:
            www = _WWW[(i // len(kinds) + i) % len(_WWW)]
        elif cfg.profile is Profile.FIELD and personality.style != "templated":
            www = _WWW_FIELD[(i // len(kinds) + i) % len(_WWW_FIELD)]
        neighbours = tuple(homes[(i + k) % n] for k in (1, 2) if (i + k) % n != i)
        address = cfg.addresses[i % len(cfg.addresses)]
        www_site: GeneratedSite | None = None
        if www is Www.DIFFERENT:
            www_host = "www." + host
            neighbours += (origin(www_host, cfg.port) + "/",)
            small = dataclasses.replace(cfg, pages_per_site=max(3, cfg.pages_per_site // 2))
            www_site = GeneratedSite(
                small, "www." + name, www_host, PLAIN, neighbours=(homes[i],), address=address
            )
        sites.append(
            GeneratedSite(
                cfg,
                name,
                host,
                personality,
                www=www,
                neighbours=neighbours,
                address=address,
                hostile_variant=hostile_count,
                canonical=_declares(cfg.profile, i),
            )
        )
        if personality.hostile:
            hostile_count += 1
        if www_site is not None:
            sites.append(www_site)
    if cfg.profile in (*dirty, Profile.FIELD):
        sites.append(WebComSite(cfg, cfg.addresses[0]))
        sites.append(ProductSite(cfg, cfg.addresses[-1]))
    if cfg.profile is Profile.CANONICAL:
        sites += misconfigured_sites(cfg, cfg.addresses[0], tuple(homes[:1]))
    return Web(cfg, sites)


def _declares(profile: Profile, i: int) -> str:
    """How the ``i``-th generated site declares canonical URLs: in the canonical profile
    every dirty site does so rightly, one in three with an HTTP Link header."""
    if profile is not Profile.CANONICAL:
        return ""
    return "header" if i % 3 == 2 else "html"
