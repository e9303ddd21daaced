"""Values shared by the test web's pure modules: configuration, pages, outcomes, hashing.

Nothing here does I/O or reads the clock. Every random choice is a hash of the seed and a
name (``stable_hash(seed, "site3", "links", 4)``), never a shared ``random.Random`` stream,
so adding a page to one site cannot shift the choices made for another: the same seed gives
byte-identical sites, whatever order they are built or served in.
"""

from __future__ import annotations

import abc
import enum
import functools
import hashlib
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = [
    "KOREAN_WORDS",
    "WORDS",
    "Action",
    "Link",
    "Outcome",
    "Page",
    "Profile",
    "Site",
    "WebConfig",
    "change_count",
    "changed_on",
    "origin",
    "pick",
    "stable_hash",
]


class Profile(enum.Enum):
    """Which personalities a generated web has (``dustless testweb --profile``)."""

    CLEAN = "clean"  # no aliases, no traps: throughput benchmarks
    DIRTY = "dirty"  # every aliasing personality
    HOSTILE = "hostile"  # traps and misbehaviour
    MIXED = "mixed"  # all of them
    SITEMAPS = "sitemaps"  # sitemaps and feeds, good and hostile (testweb/_sitemaps.py)
    #: dirty's personalities plus what a field test met on real servers: www aliases whose
    #: pages link to their own host name, dynamic pages, a templated site of short articles
    FIELD = "field"
    #: dirty's sites declaring their canonical URLs (RFC 6596: link element or Link header),
    #: plus sites whose declarations are wrong: every page canonical to the home page, to a
    #: 404, to another site, and pagination whose canonical drops the page parameter
    CANONICAL = "canonical"
    #: sites of real documents (Debian's documentation packages) whose server behaviours are
    #: drawn at random from the seed (testweb/_behaviours.py), with a truth that knows each
    REAL = "real"


@dataclass(frozen=True, slots=True)
class WebConfig:
    """Everything a web is generated from; equal configs give byte-identical webs."""

    seed: int = 1
    sites: int = 12
    pages_per_site: int = 30
    profile: Profile = Profile.MIXED
    port: int = 80
    #: addresses the hosts are spread over (``127.0.0.1``, ``127.0.0.2`` …)
    addresses: tuple[str, ...] = ("127.0.0.1",)
    #: crawl-delay announced by hostile robots.txt files; None: 0.5–2 s chosen per site
    crawl_delay: float | None = None
    #: seconds a slow page waits before its first byte, and a stalled body stalls
    slow_seconds: float = 3.0
    stall_seconds: float = 8.0
    #: seconds every answer waits before it is sent: a web far away (latency-bound crawls)
    latency: float = 0.0
    #: pages are sent gzip'd to a client that accepts it (RFC 9110 §8.4.1.3), as most
    #: servers send HTML; every other page (by its resource id) also chunked, without a
    #: Content-Length (RFC 9112 §7.1). The gzip bytes are the same on every request.
    gzip: bool = False


class Action(enum.Enum):
    """How the server delivers an outcome; everything but NORMAL is misbehaviour."""

    NORMAL = "normal"
    SLOW_FIRST_BYTE = "slow-first-byte"  # sleep, then answer
    STALL = "stall"  # send half the body, sleep, send the rest
    RESET = "reset"  # TCP RST before any byte of the response
    RESET_MID = "reset-mid"  # headers and half the body, then RST
    CHUNKED = "chunked"  # no Content-Length: the body is streamed in chunks
    NO_CONTENT_TYPE = "no-content-type"  # a response without a Content-Type header


@dataclass(frozen=True, slots=True)
class Link:
    """One link as written in a page: what the markup resolves to, and the markup itself.

    ``target`` is the absolute URL a conforming parser gets from ``markup`` on the page's
    canonical URL (after ``<base href>``, entities and whitespace); ``kind`` is the seed 004
    Table 13 class: ``f`` found in ``<frame>``, ``a`` in ``<a href>``, ``h`` anywhere else.
    ``crawlable`` is False for ``javascript:`` links only a pattern script can follow (002).
    """

    target: str
    markup: str
    kind: str = "a"
    crawlable: bool = True


@dataclass(frozen=True, slots=True)
class Page:
    """A resource with a body. Its body depends only on the page and the simulated day."""

    rid: str  # truth resource-id, e.g. "site3:/news/item-4.html"
    url: str  # canonical absolute URL
    title: str
    links: tuple[Link, ...] = ()
    #: mean days between two changes (a Poisson process of rate 1/period); 0 = never changes
    #: (seed 004 Tables 12–13)
    period: int = 0
    phase: int = 0  # salt of the page's change draws (the rates file's third column)
    head: str = ""  # extra markup inside <head> (base href, meta refresh)
    frameset: bool = False
    lang: str = "en"
    text_words: int = 60
    #: the personality's page style ("", "dynamic", "templated"; see Personality.style)
    style: str = ""
    #: site boilerplate around a templated page's text (the same string on every page)
    chrome: str = ""
    #: for a www.NAME twin whose pages link to their own host: the origin the body is written
    #: with, and the twin's origin it is rewritten to when requested there
    origin: str = ""
    twin_origin: str = ""
    #: the HTTP Link header of the page (RFC 8288), e.g. its canonical URL (RFC 6596)
    link_header: str = ""

    def version(self, day: int) -> int:
        """How many times the page has changed by ``day`` (changes only when days advance)."""
        return change_count(self.rid, self.period, self.phase, day)


def changed_on(rid: str, period: int, salt: int, day: int) -> bool:
    """Whether the page changes on ``day`` (> 0): a Poisson process of rate ``1/period`` a day.

    Real pages change at random times, which is what the change-rate estimators of the
    recrawl work assume (Cho & Garcia-Molina, TOIT 2003: Poisson changes seen at regular
    visits). A day holds at least one change with probability ``1 - exp(-1/period)``, drawn
    from a hash of the page and the day, so the same seed always gives the same history.
    ``period`` 0: the page never changes.
    """
    if period <= 0 or day <= 0:
        return False
    draw = stable_hash("change", rid, salt, day) / 2.0**64
    return draw < -math.expm1(-1.0 / period)


@functools.lru_cache(maxsize=65536)
def change_count(rid: str, period: int, salt: int, day: int) -> int:
    """How many of the days ``1..day`` hold a change of the page (its version on ``day``)."""
    if period <= 0 or day <= 0:
        return 0
    # Recursion through the cache: a server stepping day by day costs one draw per page a day.
    return change_count(rid, period, salt, day - 1) + changed_on(rid, period, salt, day)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the server answers for one request, decided by pure code.

    ``rid`` is the truth resource-id of the response (``redirect``, ``404``, ``soft404``,
    ``trap:…``, ``robots:…`` or a page's id). The body is ``page`` rendered for the day,
    ``render(day)`` (a sitemap whose lastmod follows its pages), or the fixed ``body``.
    """

    status: int
    rid: str
    page: Page | None = None
    body: bytes = b""
    content_type: str | None = "text/html; charset=utf-8"
    location: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    action: Action = Action.NORMAL
    delay: float = 0.0
    trap: bool = False
    #: a resource a crawler should fetch once (pages, not redirects or errors)
    resource: bool = True
    cacheable: bool = True
    render: Callable[[int], bytes] | None = None


class Site(abc.ABC):
    """A virtual server: the host names it answers and how it answers them."""

    name: str  # resource-id prefix, e.g. "site3"
    hosts: tuple[str, ...]  # every host name it answers, aliases included
    seeds: tuple[str, ...]  # absolute URLs a crawl of it starts from
    address: str = "127.0.0.1"
    personality_name: str = ""
    www_mode: str = "none"
    robots_variant: str = "plain"

    @abc.abstractmethod
    def pages(self) -> Iterable[Page]:
        """Every resource with a body; its canonical URL goes into the truth at start."""

    @abc.abstractmethod
    def route(self, host: str, path: str, query: str) -> Outcome:
        """The answer to ``GET path?query`` on ``host`` (path still percent-encoded)."""


def origin(host: str, port: int) -> str:
    return f"http://{host}" if port == 80 else f"http://{host}:{port}"


def stable_hash(*parts: object) -> int:
    """A 64-bit hash of ``parts`` that is the same in every process and Python version."""
    data = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def pick(seq: tuple[str, ...] | list[str], *parts: object) -> str:
    return seq[stable_hash(*parts) % len(seq)]


WORDS: tuple[str, ...] = (
    "about", "archive", "atlas", "board", "books", "campus", "career", "catalog", "chart",
    "circle", "city", "club", "data", "desk", "digest", "docs", "events", "faq", "field",
    "forum", "garden", "gallery", "guide", "harbor", "health", "history", "index", "journal",
    "lab", "library", "market", "media", "members", "museum", "music", "news", "notes",
    "office", "people", "photo", "press", "projects", "pubs", "radio", "report", "research",
    "review", "river", "school", "science", "service", "shop", "sports", "story", "studio",
    "support", "team", "travel", "valley", "video", "weather", "wiki", "world", "yard",
)  # fmt: skip

KOREAN_WORDS: tuple[str, ...] = (
    "전문직업인", "프로그래머", "연구관련단체인", "교수", "의사", "변호사", "기자", "작가",
    "음악가", "화가", "배우", "운동선수", "정치인", "기업인", "공무원", "교사",
)  # fmt: skip
