"""The main-content walk and shingles as they were before issue 28 (CPU per page): the oracle
the faster code in dustless.extract must agree with, page for page (tests/extract/
test_same_extraction.py). Kept as written then, but for what the main content *is*, which
follows the crawler's (round 7, issue 25: the masthead before the page's h1, link-dense
inline runs, tool lines never restored, a listing restored only from the heading on); not
used by the crawler.

The text of a document's main content: its visible text less the site's template (pure).

Two pages are "the same document" for a reader when their *main content* is the same: a
printer, mobile or AMP page wraps the article in another template (header, navigation,
sidebars, footer), and two short articles of one site share a template heavier than their
text. So the near-duplicate fingerprint hashes the text left once the template is taken
out, read in one walk of the tree the parser already built (a boilerplate library costs
milliseconds a page: ``bench/maincontent_bench.py``). The rules are the structural ones of
readability and boilerpipe/jusText (Kohlschütter et al., WSDM 2010: link density and block
shape tell boilerplate from full text):

* **template elements** are skipped whole: ``nav``, ``aside``, ``form``, ``menu``,
  ``button``, ``select``, a ``header`` or ``footer`` outside ``article``/``main`` (HTML
  §4.3.8: inside them they belong to the article), an ARIA landmark that is not content
  (``role`` navigation, banner, contentinfo, complementary, search, menu…), and an element
  whose ``id`` or ``class`` has a token of navigation (``nav``, ``menu``, ``sidebar``,
  ``breadcrumb``, ``footer``, ``header``, ``banner``, ``logo``, ``cookie``…, split at ``-``
  and ``_``: ``print-footer``, ``m-menu``);
* **the copyright notice**: the smallest block whose text has "©", "copyright" or "all
  rights reserved" (the legal line every page of a site repeats) when it is short;
* **link lists**: a block (``li``, ``p``, ``td``, ``div``…) whose kept text is mostly link
  text — a menu, a sidebar, "Print | Mobile" — and a heading just before such a block
  ("In this section"), or before a list with no text at all (the sidebar of a page that
  has no siblings to list);
* **stamps**: a short block (≤ 200 characters between two block breaks) showing a time of
  day to the second — a clock, "generated at 12:05:33", "request … at …" — which differs
  between two fetches of one page; found in the joined text with one regex search;
* **the main element**: when the page marks one (``main``, ``role=main``, or its only
  ``article``), only its text counts.

A page whose main content so found is almost empty (a table of contents is all links) keeps
the link lists instead (the template elements stay out), so it never fingerprints as its
title alone. The ``<head>`` (the ``<title>`` names the site on some templates and not on
others) is not read. Text nodes are joined with a space, as in ``_visible``, and the first
text of each block element (CSS 2.1 §9.2.1's block boxes: ``p``, ``li``, ``td``, ``h1``…)
after a block boundary begins with :data:`BLOCK_BREAK`, which the fingerprint shingles
within (a listing in another order or layout is the same document; ``_fingerprint``).
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

__all__ = ["BLOCK_BREAK", "main_text", "shingles"]

# Before the first text of each block of the main text: the fingerprint shingles each
# block apart, so the order of a listing's items is not part of the document. ASCII's
# record separator: a reader of words never sees it (``str.split`` takes it for whitespace),
# and an ASCII text stays one byte a character (U+2029 made the tokenizer's lower() and
# encode() 4× slower).
BLOCK_BREAK = "\x1e"

_SKIP = frozenset(
    {"nav", "aside", "form", "menu", "button", "select", "dialog", "script", "style",
     "noscript", "template", "iframe", "object", "svg"}
)  # fmt: skip
_SECTIONING = frozenset({"header", "footer"})  # template only outside article/main
_ARTICLE = frozenset({"article", "main"})
_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar",
     "toolbar", "dialog", "alertdialog"}
)  # fmt: skip
_TOKENS = frozenset(
    {"nav", "navbar", "navigation", "menu", "menubar", "sidebar", "breadcrumb", "breadcrumbs",
     "crumbs", "footer", "header", "masthead", "banner", "logo", "cookie", "cookies",
     "consent", "skip", "share", "social", "toolbar", "topbar"}
)  # fmt: skip
_BLOCKS = frozenset(
    {"p", "div", "li", "ul", "ol", "dl", "dd", "dt", "td", "th", "tr", "table", "tbody",
     "section", "article", "main", "pre", "blockquote", "center", "figure", "address",
     "details", "h1", "h2", "h3", "h4", "h5", "h6"}
)  # fmt: skip
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Elements a browser lays out as blocks of their own (CSS 2.1 §9.2.1's block-level boxes):
# a text is one block from one of their edges to the next.
_BREAKS = _BLOCKS | frozenset(
    {"header", "footer", "hr", "caption", "summary", "legend", "fieldset", "hgroup",
     "figcaption", "option"}
)  # fmt: skip
_LISTS = frozenset({"ul", "ol", "dl", "table", "tbody"})
_LISTINGS = _LISTS | frozenset({"pre", "li", "tr", "td", "th", "dt", "dd"})
_MASTHEAD_CHARS = 200
_KEPT, _LISTING, _LINKS = 0, 1, 2
# A time of day to the second, "12:05:59": in a short block it is a per-request stamp (a
# clock, "generated at", "your last visit"), which two fetches of one page never share.
# Searched for from its colon (a literal: the regex scans the text at C speed) and the
# digit before it checked apart.
_CLOCK = re.compile(r":[0-5]\d:[0-5]\d")
_STAMP_CHARS = 200  # a block with a time of day shorter than this: a stamp, not content
_SPLIT = str.maketrans("-_", "  ")
_LINK_DENSE = 0.5  # more link text than this share: a list of links (boilerpipe's cut, 0.33–0.5)
_NOTICE_CHARS = 600  # a copyright block longer than this is content (a licence page)
_MIN_CHARS = 100  # main content shorter than this: keep the link lists too


def _notice(text: str) -> bool:
    # plain substring tests (C speed): a lower() and a loop per text node cost more than the
    # rest of the walk
    return (
        "©" in text
        or "opyright" in text
        or "OPYRIGHT" in text
        or "ights reserved" in text
        or "IGHTS RESERVED" in text
    )


def _template_attrs(attrs: dict[str, str | None]) -> bool:
    role = attrs.get("role")
    if role and role.strip().lower() in _ROLES:
        return True
    for name in ("class", "id"):
        value = attrs.get(name)
        if value:
            for token in value.lower().translate(_SPLIT).split():
                if token in _TOKENS or token.startswith("nav"):
                    return True
    return False


class _Walk:
    """One depth-first walk: ``pieces`` the text nodes kept (the first of a block begins with
    :data:`BLOCK_BREAK`), ``cut[i]`` whether piece i is in a link list (left out unless the
    main content is too short without it)."""

    __slots__ = ("brk", "cut", "h1", "main", "pieces")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.cut = bytearray()
        self.main: list[tuple[int, int]] = []  # piece ranges of main / role=main / article
        self.brk = False  # the next text begins a block
        self.h1 = -1

    def _drop(self, start: int, end: int) -> None:
        """Take pieces[start:end] out of the walk (template found after it was read)."""
        del self.pieces[start:end], self.cut[start:end]
        self.main = [r for r in self.main if r[0] < start]
        self.brk = True
        if self.h1 >= end:
            self.h1 -= end - start
        elif self.h1 >= start:
            self.h1 = -1

    def _cut(self, start: int, end: int, mark: int) -> None:
        for i in range(start, end):
            if mark == _LISTING or self.cut[i] != _LISTING:
                self.cut[i] = mark

    def _run(self, run: list[int], end: int) -> tuple[int, int]:
        """Cut the inline run ``[start, chars, links]`` when it is link-dense; what it took."""
        start, c, k = run
        run[1] = run[2] = 0
        if c and k > _LINK_DENSE * c:
            self._cut(start, end, _LINKS)
            return c, k
        return 0, 0

    def node(
        self, node: LexborNode, in_link: bool, in_article: bool
    ) -> tuple[int, int, bool, bool]:
        """(text chars, link chars, has a notice) of the kept text under ``node``, and whether
        it had text, all cut as link lists."""
        pieces, cut = self.pieces, self.cut
        chars = links = 0
        had = False
        notice = False
        heading: tuple[int, int, int] | None = None  # start, chars, links of the last h*
        run = [0, 0, 0]  # the inline run since the last block child: start, chars, links
        blocky = False
        child = node.child
        while child is not None:
            tag = child.tag
            if tag == "-text":
                text = child.text_content
                if text and not text.isspace():
                    chars += len(text)
                    if in_link:
                        links += len(text)
                    if not notice:
                        notice = _notice(text)
                    if self.brk:
                        text = BLOCK_BREAK + text
                        self.brk = False
                    if not run[1]:
                        run[0] = len(pieces)
                    run[1] += len(text)
                    run[2] += len(text) if in_link else 0
                    pieces.append(text)
                    cut.append(0)
                child = child.next
                continue
            if tag is None or tag[0] == "-" or tag[0] == "_" or child.child is None:
                child = child.next  # a comment, or an element with nothing in it (br, img)
                continue
            if tag in _SKIP or (tag in _SECTIONING and not in_article):
                child = child.next
                continue
            attrs = child.attributes
            if attrs and _template_attrs(attrs):
                child = child.next
                continue
            start = len(pieces)
            breaks = tag in _BREAKS
            if breaks:
                self.brk = True
                rc, rk = self._run(run, start)
                if rc:
                    chars -= rc
                    links -= rk
                    had = True
                blocky = True
            c, k, n, h = self.node(child, in_link or tag == "a", in_article or tag in _ARTICLE)
            had = had or h
            if breaks:
                self.brk = True
            elif c:
                if not run[1]:
                    run[0] = start
                run[1] += c
                run[2] += k
            if tag == "h1" and self.h1 < 0 and c and k <= _LINK_DENSE * c:
                self.h1 = start
            if tag in _BLOCKS:
                if n and c <= _NOTICE_CHARS:
                    self._drop(start, len(pieces))
                    c = k = 0
                    n = False
                elif not c and not h and heading is not None and tag in _LISTS:
                    # a heading over an empty list ("In this section" where the page has no
                    # siblings): the template's, as the heading of a link list is
                    self._drop(heading[0], start)
                    chars -= heading[1]
                    links -= heading[2]
                elif (c and k > _LINK_DENSE * c) or (h and not c):
                    mark = _LISTING if tag in _LISTINGS else _LINKS
                    if c:
                        self._cut(start, len(pieces), mark)
                    if heading is not None and mark == _LISTING:
                        self._cut(heading[0], start, mark)
                        chars -= heading[1]
                        links -= heading[2]
                    c = k = 0
                    had = True
                heading = (start, c, k) if c and tag in _HEADINGS else None
                if tag in _ARTICLE or (attrs and attrs.get("role") == "main"):
                    self.main.append((start, len(pieces)))
            chars += c
            links += k
            notice = notice or n
            child = child.next
        if blocky:
            rc, rk = self._run(run, len(pieces))
            if rc:
                chars -= rc
                links -= rk
                had = True
        return chars, links, notice, had and not chars


def main_text(parser: LexborHTMLParser) -> str:
    """The text of the main content of ``parser``'s document (see the module's docstring)."""
    body = parser.body
    if body is None:
        return ""
    walk = _Walk()
    walk.node(body, False, False)
    pieces, cut = walk.pieces, walk.cut
    lo, hi = 0, len(pieces)
    if walk.main:
        mains = [r for r in walk.main if r[1] > r[0]]
        outer = [
            r for r in mains if not any(o[0] <= r[0] and r[1] <= o[1] and o != r for o in mains)
        ]
        if len(outer) == 1:
            lo, hi = outer[0]
    h1 = walk.h1
    heading = lo <= h1 < hi
    if heading and sum(len(pieces[i]) for i in range(lo, h1) if not cut[i]) <= _MASTHEAD_CHARS:
        lo = h1
    kept = [pieces[i] for i in range(lo, hi) if not cut[i]]
    joined = " ".join(kept)
    text = _unstamped(joined)
    # the chars of the text nodes kept (not the spaces joining them, not the breaks)
    chars = len(text) - len(kept) + 1 - joined.count(BLOCK_BREAK)
    if chars < _MIN_CHARS:
        since = h1 if heading else lo
        restored = [
            pieces[i] for i in range(lo, hi) if not cut[i] or (cut[i] == _LISTING and i >= since)
        ]
        text = _unstamped(" ".join(restored))
    return text


def _unstamped(text: str) -> str:
    """``text`` less its short blocks that show a time of day to the second (stamps)."""
    if ":" not in text:
        return text
    found = _CLOCK.search(text)
    while found is not None:
        at = found.start()
        if at and text[at - 1].isdigit():
            lo = max(text.rfind(BLOCK_BREAK, 0, at), 0)
            hi = text.find(BLOCK_BREAK, at)
            hi = len(text) if hi < 0 else hi
            if hi - lo <= _STAMP_CHARS:
                text = text[:lo] + text[hi:]
                found = _CLOCK.search(text, lo)
                continue
        found = _CLOCK.search(text, found.end())
    return text


# -- _fingerprint._shingles as it was ------------------------------------------------------

from itertools import compress, repeat  # noqa: E402
from operator import ne  # noqa: E402

_ASCII_PUNCT = b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_SPACES = bytes.maketrans(_ASCII_PUNCT, b" " * len(_ASCII_PUNCT))
_MARK = b"Q"
_BREAK_WORDS = b" Q Q "
_BREAK = BLOCK_BREAK.encode()
_NBSP = "\xa0".encode()


def shingles(text: str) -> list[bytes]:
    spaced = text.lower().encode("utf-8", "replace").translate(_SPACES)
    blocks = _BREAK in spaced
    if blocks:
        many = spaced.count(_BREAK) > 1  # (version 4: the last block's end, of several)
        spaced = spaced.replace(_BREAK, _BREAK_WORDS) + (_BREAK_WORDS if many else b"")
    if spaced.isascii():
        words = [w for w in spaced.split() if w.isalpha()]
    else:
        if _NBSP in spaced:
            spaced = spaced.replace(_NBSP, b" ")
        words = [
            w
            for w in spaced.split()
            if w.isalpha() or (not w.isascii() and w.decode("utf-8", "replace").isalpha())
        ]
    windows = zip(words, words[1:], words[2:], strict=False)
    if blocks:
        return list(map(b" ".join, compress(windows, map(ne, words[1:], repeat(_MARK)))))
    if len(words) < 3:
        return [b" ".join(words)] if words else []
    return list(map(b" ".join, windows))
