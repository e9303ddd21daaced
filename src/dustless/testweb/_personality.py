"""Server personalities: how a site maps request URLs to resources (seed 000 §4, seed 001).

Each personality is a frozen value with a name; a generated site is pages plus one of these.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "APACHE",
    "DYNAMIC",
    "HOSTILE",
    "IIS",
    "JSP",
    "LINKS",
    "PERSONALITIES",
    "PHP",
    "PLAIN",
    "TEMPLATED",
    "Personality",
    "Www",
]


class Www(enum.Enum):
    """What ``www.NAME`` is for a site ``NAME`` (seed 000 §4.3: 'www' prefix)."""

    NONE = "none"  # no www host
    ALIAS = "alias"  # www.NAME serves the same site, byte for byte
    REDIRECT = "redirect"  # www.NAME/x answers 301 → NAME/x
    DIFFERENT = "different"  # www.NAME is another site: removing 'www' is a false positive
    #: www.NAME serves the same site, but every page links to its own host name in absolute
    #: URLs (what a CMS that builds links from the Host header does): the twins' bytes differ
    #: only in their links, so no two have the same SHA-1 — only their text is the same.
    ALIAS_LINKS = "alias-links"


@dataclass(frozen=True, slots=True)
class Personality:
    name: str
    ext: str = ".html"
    #: Windows/IIS: /ASP/x.asp = /asp/x.asp (seed 000 §4.1); canonical paths are lowercase
    case_insensitive: bool = False
    #: what /dir/ serves, also reachable as /dir/<default_doc> (seed 000 §4.4, seed 001)
    default_doc: str = "index.html"
    #: links are written with the alias spellings of this personality
    alias_spellings: bool = False
    #: Unix: some case variants are *different* pages (seed 000 §4.1, /pubs vs /PUBS)
    case_twins: bool = False
    #: leaves are dynamic pages: "php" → item.php?id=N, "jsp" → view.jsp?no=N
    dynamic: str = ""
    #: query parameters that select a page; every other parameter is ignored by the server
    page_params: tuple[str, ...] = ()
    #: parameters added to links that do not change the page (session ids, tracking; seed 001)
    session_param: str = ""
    tracking_params: tuple[str, ...] = ()
    #: ;jsessionid=… path parameters, ignored by the server
    path_session: bool = False
    #: every kind of link markup of seed 004 Table 13, <base href>, entities, whitespace
    rich_links: bool = False
    hostile: bool = False
    #: how a page's body is made: "" the plain page; "dynamic": a timestamp, a request nonce,
    #: a rotating ad and a CSRF field that change with every request; "templated": short
    #: distinct articles inside site boilerplate that outweighs them
    style: str = ""


PLAIN = Personality("plain")
IIS = Personality(
    "iis",
    ext=".asp",
    case_insensitive=True,
    default_doc="default.asp",
    alias_spellings=True,
    tracking_params=("utm_source", "utm_medium"),
)
APACHE = Personality("apache", alias_spellings=True, case_twins=True)
PHP = Personality(
    "php",
    ext=".php",
    default_doc="index.php",
    alias_spellings=True,
    dynamic="php",
    page_params=("id", "lang", "sort"),
    session_param="PHPSESSID",
    tracking_params=("utm_source", "utm_medium", "utm_campaign"),
)
# "sid" looks like a session id but selects a board: stripping it is a false positive.
JSP = Personality(
    "jsp",
    ext=".jsp",
    default_doc="index.jsp",
    alias_spellings=True,
    dynamic="jsp",
    page_params=("no", "sid"),
    tracking_params=("ref",),
    path_session=True,
)
LINKS = Personality("links", rich_links=True)
HOSTILE = Personality("hostile", hostile=True)
# Dynamic pages (a CMS front end): every request gets other bytes, the text stays the page's.
DYNAMIC = Personality(
    "dynamic", alias_spellings=True, tracking_params=("utm_source",), style="dynamic"
)
# A templated documentation site: short distinct articles, boilerplate around each.
TEMPLATED = Personality("templated", style="templated")

PERSONALITIES: dict[str, Personality] = {
    p.name: p for p in (PLAIN, IIS, APACHE, PHP, JSP, LINKS, HOSTILE, DYNAMIC, TEMPLATED)
}
