"""Seeds and parties (seed 004 §2): which site a URL belongs to, and whether a link stays
inside its party or becomes a candidate seed.

A *party* is the set of documents locally reachable from a seed, inside the seed's site.
``--scope`` says what a site is:

- ``host``: the host name (004's reading: a site is a web server);
- ``domain``: the registrable domain (``news.example.co.kr`` and ``www.example.co.kr`` are
  one site). Without the Public Suffix List we know the common two-level suffixes
  (``co.uk``, ``co.kr``, ``ac.kr``, …); anything else takes the last two labels;
- ``any``: no boundary: every link stays in the party of the seed it was reached from.

Internal links go to the party's queue; external ones become candidate seeds (004 §2:
"외부 URL은 후보 시드 URL이 된다"), recorded, and crawled as new parties while the crawl
has fewer than ``--max-sites`` sites. Pure.
"""

from __future__ import annotations

import enum

__all__ = ["Scope", "is_internal", "registrable_domain", "site_of"]


class Scope(enum.Enum):
    HOST = "host"
    DOMAIN = "domain"
    ANY = "any"


# Second-level labels under which registrations happen (a small, documented subset of the
# Public Suffix List; 004 crawled the Korean web, hence the .kr ones).
_TWO_LEVEL = frozenset(
    [
        "ac",
        "co",
        "go",
        "or",
        "ne",
        "re",
        "pe",
        "mil",
        "hs",
        "ms",
        "es",
        "kg",
        "sc",
        "seoul",
        "busan",
        "com",
        "net",
        "org",
        "edu",
        "gov",
    ]
)
_TWO_LEVEL_TLDS = frozenset(["kr", "uk", "jp", "au", "nz", "br", "cn", "tw", "za", "in", "il"])


def registrable_domain(host: str) -> str:
    if not host or host[0].isdigit() or ":" in host or host.startswith("["):
        return host  # IP literals have no domain
    labels = host.rstrip(".").split(".")
    if len(labels) <= 2:
        return host
    if labels[-1] in _TWO_LEVEL_TLDS and labels[-2] in _TWO_LEVEL:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


def site_of(host: str, scope: Scope) -> str:
    """The site of ``host``: what ``--max-sites`` and ``--max-pages-per-site`` count.

    Under ``any`` the party has no boundary, but sites are still counted per host.
    """
    return registrable_domain(host) if scope is Scope.DOMAIN else host


def is_internal(scope: Scope, party_site: str, host: str) -> bool:
    """Whether a link to ``host`` stays in the party whose seed's site is ``party_site``."""
    return scope is Scope.ANY or site_of(host, scope) == party_site
