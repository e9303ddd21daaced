"""The templates of the ``real`` test web: one document, many pages around it (pure).

A real site shows one document in several templates — the ordinary page, a printer page, a
mobile page, an AMP page — whose boilerplate (header, navigation, sidebars, footer) really
differs, so whether two pages are "the same document" must be judged by their main content.
Ordinary pages come in four skins (a site draws one): a header-and-sidebar layout, an old
table layout, HTML5 sectioning elements, and a grid with breadcrumbs. Every template puts
the main content, and only it, inside the element ``main_open`` opens.

``render`` takes a :class:`View` (everything the site decided) and returns the page's HTML.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from dustless.testweb._core import WORDS, stable_hash

__all__ = ["View", "render"]


@dataclass(frozen=True, slots=True)
class View:
    """What one page shows; hrefs as the site spells them (escaped here, in attributes)."""

    site: str  # the site's display name
    skin: int
    variant: str  # "normal", "print", "mobile", "amp"
    title: str
    content: str  # the main content's HTML (from the site)
    nav: tuple[tuple[str, str], ...] = ()  # (href, text): home and sections
    sidebar: tuple[tuple[str, str], ...] = ()  # (href, text): pages beside this one
    alternates: tuple[tuple[str, str], ...] = ()  # (href, text): print, mobile, desktop …
    head: str = ""  # canonical and alternate <link>s
    noise: str = ""  # per-request markup of a dynamic site (clock, nonce, notice)
    url_text: str = ""  # the page's URL, printed in a printer page's footer


def _links(items: tuple[tuple[str, str], ...], sep: str = "\n") -> str:
    return sep.join(
        f'<a href="{html.escape(href)}">{html.escape(text)}</a>' for href, text in items
    )


def _legal(site: str, skin: int) -> str:
    """Site-wide footer prose: the same on every page of a site, different between sites."""
    words = [WORDS[stable_hash(site, skin, "legal", k) % len(WORDS)] for k in range(24)]
    return (
        f"© 2026 {html.escape(site)}. All rights reserved. "
        + " ".join(words[:12]).capitalize()
        + ". Content may be reused under the terms of its license; "
        + " ".join(words[12:])
        + "."
    )


def _normal(v: View) -> str:
    title = html.escape(v.title)
    site = html.escape(v.site)
    nav = _links(v.nav)
    side = _links(v.sidebar, "</li>\n<li>")
    alt = _links(v.alternates, " | ")
    legal = _legal(v.site, v.skin)
    if v.skin == 0:
        body = (
            f'<div id="top"><div class="logo">{site}</div><div class="nav">{nav}</div></div>\n'
            f'<div id="wrap"><div id="left"><h4>In this section</h4><ul><li>{side}</li></ul>'
            f'</div>\n<div id="main">{v.noise}\n{v.content}\n<p class="tools">{alt}</p>'
            f'</div></div>\n<div id="bottom">{legal}</div>'
        )
    elif v.skin == 1:
        body = (
            f'<table width="100%" border="0"><tr><td colspan="2" class="banner">'
            f'<font size="5">{site}</font><br>{nav}</td></tr>\n<tr>'
            f'<td width="180" valign="top" class="menu"><ul><li>{side}</li></ul></td>\n'
            f'<td valign="top">{v.content}\n<hr>{alt}</td></tr>\n'
            f'<tr><td colspan="2"><small>{legal}</small>{v.noise}</td></tr></table>'
        )
    elif v.skin == 2:
        body = (
            f'<header><h1 class="site">{site}</h1><nav>{nav}</nav></header>\n'
            f"<main>{v.content}</main>\n<aside><h2>Related</h2><ul><li>{side}</li></ul>"
            f"<p>{alt}</p></aside>\n<footer>{v.noise}<p>{legal}</p></footer>"
        )
    else:
        crumbs = _links(v.nav[:2], " › ")
        body = (
            f'<div class="container"><div class="row navbar">{nav}</div>\n'
            f'<ol class="breadcrumb">{crumbs} › {title}</ol>\n'
            f'<div class="row"><div class="col-9">{v.content}</div>\n'
            f'<div class="col-3 sidebar"><ul><li>{side}</li></ul><div>{alt}</div></div></div>\n'
            f'<div class="row footer">{legal}<br>{v.noise}</div></div>'
        )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f"<title>{title if title == site else f'{title} — {site}'}</title>\n{v.head}"
        f'<link rel="stylesheet" href="/static/site{v.skin}.css">\n</head>\n'
        f"<body>\n{body}\n</body></html>\n"
    )


def _print(v: View) -> str:
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(v.title)}'
        f'</title>\n{v.head}<meta name="robots" content="noindex">\n'
        f"<style>body{{font-family:serif;max-width:40em}} a{{color:#000}}</style></head>\n"
        f'<body class="print" onload="window.print()">\n<div class="print-header">'
        f"{html.escape(v.site)} — printer-friendly version</div>\n{v.content}\n"
        f'<div class="print-footer">{v.noise}Printed from {html.escape(v.url_text)}</div>\n'
        f"</body></html>\n"
    )


def _mobile(v: View) -> str:
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(v.title)}</title>\n{v.head}</head>\n"
        f'<body class="m">\n<div class="m-bar"><button class="burger">☰</button> '
        f'{html.escape(v.site)}</div>\n<details class="m-menu"><summary>Menu</summary>\n'
        f"{_links(v.nav)}</details>\n<article>{v.content}</article>\n"
        f'<div class="m-more">{_links(v.sidebar[:3])}</div>\n'
        f'<div class="m-foot">{v.noise}{_links(v.alternates, " · ")}</div>\n</body></html>\n'
    )


def _amp(v: View) -> str:
    return (
        f'<!doctype html>\n<html ⚡ lang="en"><head><meta charset="utf-8">\n'
        f"<title>{html.escape(v.title)}</title>\n{v.head}"
        f'<meta name="viewport" content="width=device-width">\n'
        f"<style amp-boilerplate>body{{visibility:hidden}}</style>\n"
        f"<style amp-custom>.amp-h{{font-weight:bold}}</style></head>\n"
        f'<body>\n<div class="amp-h">{html.escape(v.site)}</div>\n{v.content}\n'
        f"<div>{v.noise}{_links(v.alternates)}</div>\n</body></html>\n"
    )


def render(view: View) -> str:
    if view.variant == "print":
        return _print(view)
    if view.variant == "mobile":
        return _mobile(view)
    if view.variant == "amp":
        return _amp(view)
    return _normal(view)
