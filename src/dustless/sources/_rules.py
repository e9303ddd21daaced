"""Which sitemap entries count, and which child sitemaps to fetch: pure decisions.

``entry_allowed`` is the sitemaps.org "Sitemap file location" rule with its robots.txt
exception (sitemaps.org, "Sitemaps & Cross Submits"):

* a sitemap may list URLs of its own protocol, host and port only, at or below its own
  directory: ``http://example.com/catalog/sitemap.xml`` may list ``/catalog/…`` but not
  ``/images/…``;
* a host whose robots.txt lists the sitemap (``Sitemap: http://host1/sitemap-host2.xml`` in
  ``http://host2/robots.txt``) vouches for it: the sitemap may then list any URL of that
  host. The robots.txt of a host covers all its paths, so the directory rule does not apply.

``SitemapBudget`` bounds the walk through sitemap indexes: a depth (the protocol says an
index lists sitemaps, not other indexes, so depth 1 is the norm; 2 tolerates nesting seen in
the wild), a count, and loop detection by the sitemap's identity (an index that lists
itself, or two that list each other, are read once).
"""

from __future__ import annotations

import enum
from collections.abc import Collection

from dustless.errors import InvalidURL
from dustless.url import robots_key, split_lenient

__all__ = ["Admit", "CrossHost", "SitemapBudget", "entry_allowed"]


class CrossHost(enum.Enum):
    """Whether a sitemap may list a URL (sitemaps.org location and cross-submit rules)."""

    ALLOWED = "allowed"
    OTHER_ORIGIN = "other-origin"  # another scheme, host or port, not vouched for by robots
    OUTSIDE_PATH = "outside-path"  # same origin, above the sitemap's directory
    NOT_HTTP = "not-http"  # not an absolute http(s) URL


def _origin(url: str) -> tuple[str, str, int] | None:
    """The robots.txt key of ``url`` (a trailing dot of the host left out), or None."""
    try:
        scheme, host, port = robots_key(url)
    except InvalidURL:
        return None
    return scheme, host.rstrip("."), port


def _path(url: str) -> str:
    return split_lenient(url.strip()).path or "/"


def entry_allowed(
    entry_url: str, sitemap_url: str, robots_hosts: Collection[str] = ()
) -> CrossHost:
    """May the sitemap at ``sitemap_url`` list ``entry_url``?

    ``robots_hosts``: the origins (``http://host:port`` or any URL on them) whose robots.txt
    listed this sitemap in a ``Sitemap:`` line.
    """
    entry = _origin(entry_url)
    if entry is None:
        return CrossHost.NOT_HTTP
    for vouching in robots_hosts:
        if _origin(vouching) == entry:
            return CrossHost.ALLOWED
    if _origin(sitemap_url) != entry:
        return CrossHost.OTHER_ORIGIN
    directory = _path(sitemap_url).rpartition("/")[0] + "/"
    if not _path(entry_url).startswith(directory):
        return CrossHost.OUTSIDE_PATH
    return CrossHost.ALLOWED


class Admit(enum.Enum):
    """What to do with a sitemap URL found in robots.txt or an index."""

    FETCH = "fetch"
    SEEN = "seen"  # already fetched or queued: a loop or a repeat, read once
    TOO_DEEP = "too-deep"
    TOO_MANY = "too-many"


class SitemapBudget:
    """Depth, count and loop bounds of one host's (or one crawl's) sitemap walk.

    Keyed by the caller's identity of the sitemap URL (its normal form), so two spellings of
    one sitemap are one. Memory is bounded by ``max_sitemaps`` identities.
    """

    def __init__(self, *, max_depth: int = 2, max_sitemaps: int = 1000) -> None:
        if max_depth < 0 or max_sitemaps < 1:
            raise ValueError("max_depth must be >= 0 and max_sitemaps >= 1")
        self.max_depth = max_depth
        self.max_sitemaps = max_sitemaps
        self._seen: set[str] = set()
        self.refused: dict[Admit, int] = dict.fromkeys(Admit, 0)

    @property
    def admitted(self) -> int:
        return len(self._seen)

    def admit(self, identity: str, depth: int) -> Admit:
        """``depth`` 0: listed by robots.txt or given; a child of an index at depth d: d + 1."""
        if identity in self._seen:
            verdict = Admit.SEEN
        elif depth > self.max_depth:
            verdict = Admit.TOO_DEEP
        elif len(self._seen) >= self.max_sitemaps:
            verdict = Admit.TOO_MANY
        else:
            self._seen.add(identity)
            return Admit.FETCH
        self.refused[verdict] += 1
        return verdict
