"""Link markup of every kind a crawler meets (seed 004 Table 13), for ``links`` sites (pure).

Each form below resolves, on the page's canonical URL (after ``<base href>``), to exactly
the target URL the truth records: whitespace around an ``href`` is stripped and character
references are decoded by an HTML parser before URL resolution (WHATWG HTML §2.4).
"""

from __future__ import annotations

import html
from urllib.parse import urlsplit

__all__ = ["rich_markup"]


def _entities(ref: str) -> str:
    """``ref`` with every ``/`` and ``&`` written as a character reference."""
    return ref.replace("&", "&amp;").replace("/", "&#47;")


def rich_markup(r: int, url: str, rooted: str, rel: str, title: str) -> tuple[str, str]:
    """Markup linking to ``url`` and its kind (``a``, ``h``) chosen by ``r``.

    ``rooted`` is the path-absolute form (or ``url`` when on another host), ``rel`` the
    document-relative form against the page's base.
    """
    t = html.escape(title)
    parts = urlsplit(url)
    mode = r % 11
    if mode == 0:
        return f'<a href="{html.escape(rel)}">{t}</a>', "a"
    if mode == 1:  # protocol-relative: //host:port/path
        pr = url[len(parts.scheme) + 1 :]
        return f'<a href="{html.escape(pr)}">{t}</a>', "a"
    if mode == 2:  # whitespace and a newline around the reference
        return f'<a class="x"\n   href="  {html.escape(rooted)}\n  ">{t}</a>', "a"
    if mode == 3:  # character references inside the attribute
        return f'<a href="{_entities(rooted)}">{t}</a>', "a"
    if mode == 4:  # upper-case markup, single quotes
        return f"<A HREF='{html.escape(url)}'>{t}</A>", "a"
    if mode == 5 and not any(c in rooted for c in " \"'<>=`"):  # unquoted attribute
        return f"<a href={rooted}>{t}</a>", "a"
    if mode == 6:
        return f'<iframe src="{html.escape(rel)}" width="10" height="10"></iframe>', "h"
    if mode == 7:
        return (
            f'<map name="m{r % 997}"><area shape="rect" coords="0,0,9,9" '
            f'href="{html.escape(rooted)}" alt="{t}"></map>',
            "h",
        )
    if mode == 8:
        js = rooted.replace("'", "\\'")
        return f"<span onclick=\"location.href='{html.escape(js)}'\">{t}</span>", "h"
    if mode == 9:
        return f'<script>window.open("{url}");</script>', "h"
    return f'<a href="{html.escape(rooted)}" title="{t}">{t}</a>', "a"
