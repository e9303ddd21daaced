"""Feed discovery: ``<link rel="alternate" type="application/rss+xml|atom+xml" href>``.

The RSS autodiscovery convention (RSS Advisory Board, "RSS Autodiscovery") and Atom's
(RFC 4287 §7 registers ``application/atom+xml``): a ``link`` with the ``alternate`` relation
among its space-separated ``rel`` tokens and a feed media type names a feed of the page.
The ``href`` is resolved against the document's base URL (``<base href>``, HTML §4.2.3).
"""

from __future__ import annotations

import contextlib
import enum
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser

from dustless.errors import InvalidURL

__all__ = ["FeedKind", "FeedLink", "discover_feeds"]


class FeedKind(enum.Enum):
    RSS = "application/rss+xml"
    ATOM = "application/atom+xml"


_KINDS = {k.value: k for k in FeedKind}


@dataclass(frozen=True, slots=True)
class FeedLink:
    url: str
    kind: FeedKind
    title: str = ""


def discover_feeds(page: bytes | str | LexborHTMLParser, url: str) -> tuple[FeedLink, ...]:
    """The feeds a page at ``url`` announces, in document order, each URL once."""
    from dustless.url import resolve

    tree = page if isinstance(page, LexborHTMLParser) else LexborHTMLParser(page)
    base = url
    for node in tree.css("base[href]"):
        href = (node.attributes.get("href") or "").strip()
        if href:
            with contextlib.suppress(InvalidURL):
                base = resolve(url, href)
        break  # HTML: only the first <base href> counts
    out: list[FeedLink] = []
    seen: set[str] = set()
    for node in tree.css("link[rel][type][href]"):
        attrs = node.attributes
        rels = (attrs.get("rel") or "").lower().split()
        kind = _KINDS.get((attrs.get("type") or "").split(";")[0].strip().lower())
        href = (attrs.get("href") or "").strip()
        if "alternate" not in rels or kind is None or not href:
            continue
        try:
            target = resolve(base, href)
        except InvalidURL:
            continue
        if target in seen or not target.startswith(("http://", "https://")):
            continue
        seen.add(target)
        out.append(FeedLink(target, kind, (attrs.get("title") or "").strip()))
    return tuple(out)
