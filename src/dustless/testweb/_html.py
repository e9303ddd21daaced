"""Page bodies: a page and a day in, bytes out (pure).

A body depends only on the page (its resource-id, title and links) and its version on the
simulated day, never on the URL it was requested by: every alias of a resource returns
byte-identical bytes, so a payload hash is an exact witness of duplication — except where a
personality imitates the servers on which it is not: a dynamic page (a clock, a nonce, a
rotating ad and a CSRF field change with every request) and a ``www`` twin whose links name
its own host (the server rewrites them). There only the text is the same, which is what a
near-duplicate fingerprint compares.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from dustless.testweb._core import KOREAN_WORDS, WORDS, Page, stable_hash

__all__ = ["TEMPLATED_WORDS", "filler", "render_page", "site_chrome"]

#: words of a templated site's article: a short text, outweighed by the site's boilerplate
TEMPLATED_WORDS = 40
# What a rotating ad says (one is picked per request): short phrases, as banner text is.
_ADS = (
    "Sponsored: harbor travel deals this week",
    "Sponsored: campus books on sale today",
    "Sponsored: weather radio for every field",
    "Sponsored: studio music lessons near you",
    "Sponsored: garden market opens this weekend",
)


def filler(count: int, *parts: object, korean: bool = False) -> str:
    """``count`` deterministic words: the page's text, different for every version."""
    words = KOREAN_WORDS if korean else WORDS
    h = stable_hash(*parts)
    out = []
    for i in range(count):
        if i % 8 == 0:
            h = stable_hash(h, i)
        out.append(words[(h >> (i % 8) * 8) % len(words)])
    return " ".join(out)


def site_chrome(name: str, seed: int, nodes: Sequence[object]) -> str:
    """A templated site's boilerplate: header, navigation, "most read" list and legal text.

    The same markup on every page, in plain ``<div>``s as old table-layout templates have it
    (no ``<nav>``/``<aside>`` to tell a reader it is boilerplate), and longer than an
    article: the case where near-duplicate detection is at risk of merging two articles.
    """
    titles = [str(getattr(n, "title", "")) for n in nodes]
    menu = " | ".join(html.escape(t) for t in titles[:12])
    legal = filler(56, seed, name, "legal")
    return (
        f'<div class="top">{html.escape(name)} documentation portal, read our guides</div>\n'
        f'<div class="menu">Most read: {menu}</div>\n'
        f'<div class="legal">{legal}</div>\n'
    )


def _dynamic(page: Page, day: int, request: int) -> str:
    """What changes with every request of a dynamic page: nothing a reader calls content."""
    nonce = f"{stable_hash('nonce', page.rid, request):016x}"
    csrf = f"{stable_hash('csrf', page.rid, request):032x}"
    minute, second = divmod(stable_hash("clock", request) % 3600, 60)
    ad = html.escape(_ADS[stable_hash("ad", page.rid, request) % len(_ADS)])
    return (
        f'<p class="meta">Generated 2026-01-{1 + day % 28:02d} 10:{minute:02d}:{second:02d} '
        f"request {nonce}</p>\n"
        f'<div class="ad">{ad}</div>\n'
        '<form method="post" action="/search">'
        f'<input type="hidden" name="csrf_token" value="{csrf}"><input name="q"></form>\n'
    )


def render_page(page: Page, day: int, request: int = 0) -> bytes:
    """The page's body on ``day``; a dynamic page's also depends on ``request`` (a counter)."""
    version = page.version(day)
    title = html.escape(page.title)
    text = filler(page.text_words, page.rid, version, korean=page.lang == "ko")
    head = (
        f'<!DOCTYPE html>\n<html lang="{page.lang}"><head>\n<meta charset="utf-8">\n'
        f"<title>{title}</title>\n{page.head}</head>\n"
    )
    if page.frameset:
        # Seed 004 Table 13 "f": URLs found in <frame> tags; a frameset has no <body>.
        frames = "\n".join(link.markup for link in page.links if link.kind == "f")
        rest = "\n".join(link.markup for link in page.links if link.kind != "f")
        body = f'<frameset cols="25%,75%">\n{frames}\n<noframes>{rest}</noframes>\n</frameset>\n'
        return (head + body + "</html>\n").encode()
    items = "\n".join(f"<li>{link.markup}</li>" for link in page.links if link.markup)
    extra = _dynamic(page, day, request) if page.style == "dynamic" else ""
    body = (
        f"<body>\n{page.chrome}<h1>{title}</h1>\n<p>{text}</p>\n<p>edition {version}</p>\n"
        f"{extra}<ul>\n{items}\n</ul>\n</body></html>\n"
    )
    return (head + body).encode()
