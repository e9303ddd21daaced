"""Page bodies: a page and a day in, bytes out (pure).

A body depends only on the page (its resource-id, title and links) and its version on the
simulated day, never on the URL it was requested by: every alias of a resource returns
byte-identical bytes, so a payload hash is an exact witness of duplication (issue 3).
"""

from __future__ import annotations

import html

from dustless.testweb._core import KOREAN_WORDS, WORDS, Page, stable_hash

__all__ = ["filler", "render_page"]


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


def render_page(page: Page, day: int) -> bytes:
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
    body = (
        f"<body>\n<h1>{title}</h1>\n<p>{text}</p>\n<p>edition {version}</p>\n"
        f"<ul>\n{items}\n</ul>\n</body></html>\n"
    )
    return (head + body).encode()
