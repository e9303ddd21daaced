"""The text of a document's main content: its visible text less the site's template (pure).

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
  text — a menu, a sidebar, "Print | Mobile" — or a run of inline content beside blocks
  that is (CSS 2.1 §9.2.1.1's anonymous block: "``<hr>``Print | AMP" ending a content
  cell), and a heading just before a *listing* so cut ("In this section"; never before a
  tool line: an article's last heading stays whether "Desktop version" follows it or not),
  or before a list with no text at all (the sidebar of a page that has no siblings to list);
* **the masthead**: a short text (≤ 200 characters) before the page's first ``h1``, where
  no ``header`` holds the site's name (an AMP or printer template): readability and jusText
  start an article at its heading;
* **stamps**: a short block (≤ 200 characters between two block breaks) showing a time of
  day to the second — a clock, "generated at 12:05:33", "request … at …" — which differs
  between two fetches of one page; found in the joined text with one regex search;
* **the main element**: when the page marks one (``main``, ``role=main``, or its only
  ``article``), only its text counts.

A page whose main content so found is almost empty (a table of contents is all links) keeps
its *listings* too (``ul``, ``ol``, ``dl``, ``table``, ``pre`` and their items), from its
heading on, so it never fingerprints as its title alone — but never a tool line ("Legal
Notice", "Desktop version") nor a sidebar's list before the heading: what one template of a
page has and another not, which made a one-heading page's printer, mobile and AMP copies
other documents (issue 25). The ``<head>`` (the ``<title>`` names the site on some
templates and not on others) is not read. Text nodes are joined with a space, as in
``_visible``, and the first text of each block element (CSS 2.1 §9.2.1's block boxes:
``p``, ``li``, ``td``, ``h1``…) after a block boundary begins with :data:`BLOCK_BREAK`,
which the fingerprint shingles within (a listing in another order or layout is the same
document; ``_fingerprint``).
"""

from __future__ import annotations

import re
from itertools import islice

from selectolax.lexbor import LexborHTMLParser, LexborNode

__all__ = ["BLOCK_BREAK", "LINK_IDS", "LINK_TAGS", "main_text"]

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
# A link list of these is a listing (a table of contents, a directory index: the document of a
# page that has little else); any other — a lone "Legal Notice", "Print | AMP", a
# "Desktop version" line — is a template's tool line, which one template has and another not.
_LISTINGS = _LISTS | frozenset({"pre", "li", "tr", "td", "th", "dt", "dd"})
# A time of day to the second, "12:05:59": in a short block it is a per-request stamp (a
# clock, "generated at", "your last visit"), which two fetches of one page never share.
# Searched for from its colon (a literal: the regex scans the text at C speed) and the
# digit before it checked apart.
_CLOCK = re.compile(r":[0-5]\d:[0-5]\d")
_STAMP_CHARS = 200  # a block with a time of day shorter than this: a stamp, not content
_SPLIT = str.maketrans("-_", "  ")
_LINK_DENSE = 0.5  # more link text than this share: a list of links (boilerpipe's cut, 0.33–0.5)
_NOTICE_CHARS = 600  # a copyright block longer than this is content (a licence page)
_MIN_CHARS = 100  # main content shorter than this: keep the listings after its heading too
_MASTHEAD_CHARS = 200  # text before the page's h1 shorter than this: the site's name, not content
# ``cut`` values: a piece kept, in a listing (restored when the page is short), in another
# link list (never restored)
_KEPT, _LISTING, _LINKS = 0, 1, 2


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
            # A site spells a few class values on every element (class="literal" on a third
            # of a manual page's tags): each value's verdict is read once, then looked up.
            known = _VALUES.get(value)
            if known is None:
                known = _template_value(value)
            if known:
                return True
    return False


# The verdict of each class or id value seen (cleared when full: ids are often unique).
_VALUES: dict[str, bool] = {}
_VALUES_SIZE = 10_000


def _template_value(value: str) -> bool:
    verdict = False
    for token in value.lower().translate(_SPLIT).split():
        if token in _TOKENS or token.startswith("nav"):
            verdict = True
            break
    if len(_VALUES) >= _VALUES_SIZE:
        _VALUES.clear()
    _VALUES[value] = verdict
    return verdict


# Lexbor's tag ids of the names read so far. A standard element's id is a constant of the
# library (an enum below LXB_TAG__LAST_ENTRY) naming one element; a custom element's id is
# its document's own (a pointer, in lexbor 2), so only ids below the first custom one seen
# at import are kept.
_NAMES: dict[int, str | None] = {}
_TEXT_ID = LexborHTMLParser("x").body.child.tag_id  # type: ignore[union-attr]
_CUSTOM_ID = min(
    LexborHTMLParser("<dustless-probe></dustless-probe>").body.child.tag_id,  # type: ignore[union-attr]
    1 << 16,
)


# The elements link extraction reads (``_links._SELECTOR``'s names), by tag id: the walk
# hands each one it meets, in document order, to ``_links``, so links and main content come
# from one walk of the tree instead of a walk and a CSS query (``main_text(parser, found)``).
LINK_TAGS: dict[int, str] = {
    node.tag_id: node.tag
    for html in ("<frameset><frame></frameset>", "<a></a><area><iframe></iframe><script></script>")
    for node in LexborHTMLParser(html + "<link><meta>").root.traverse()  # type: ignore[union-attr]
    if node.tag in ("a", "frame", "area", "iframe", "script", "link", "meta")
}
LINK_IDS = frozenset(LINK_TAGS)


def _name(node: LexborNode, tid: int) -> str | None:
    tag = node.tag
    if tid < _CUSTOM_ID:
        _NAMES[tid] = tag
    return tag


class _Walk:
    """One depth-first walk: ``pieces`` the text nodes kept (the first of a block begins with
    :data:`BLOCK_BREAK`), ``cut[i]`` whether piece i is in a listing (``_LISTING``: left out
    unless the main content is too short without it) or another link list (``_LINKS``), and
    ``h1`` the index of the first piece of the page's first ``h1`` (-1: none)."""

    __slots__ = ("brk", "cut", "found", "h1", "main", "notices", "pieces")

    def __init__(self, found: list[LexborNode]) -> None:
        self.found = found  # the link elements met, in document order (``LINK_IDS``)
        self.pieces: list[str] = []
        self.cut = bytearray()
        self.main: list[tuple[int, int]] = []  # piece ranges of main / role=main / article
        self.brk = False  # the next text begins a block
        self.h1 = -1
        # Whether any text of the page may hold a notice: when the whole text holds none,
        # no text node does, and the five substring tests per node are skipped.
        self.notices = True

    def _skip(self, node: LexborNode) -> None:
        """Pass over a template element's subtree: only its link elements are taken."""
        found = self.found
        for n in islice(node.traverse(), 1, None):  # its descendants (traverse yields it first)
            if n.tag_id in LINK_IDS:
                found.append(n)

    def _drop(self, start: int, end: int) -> None:
        """Take pieces[start:end] out of the walk (template found after it was read)."""
        del self.pieces[start:end], self.cut[start:end]
        self.main = [r for r in self.main if r[0] < start]
        if self.h1 >= end:
            self.h1 -= end - start
        elif self.h1 >= start:
            self.h1 = -1
        self.brk = True

    def node(
        self, node: LexborNode, in_link: bool, in_article: bool
    ) -> tuple[int, int, bool, bool]:
        """(text chars, link chars, has a notice) of the kept text under ``node``, and whether
        it had text, all cut as link lists."""
        pieces, cut = self.pieces, self.cut
        names = _NAMES
        notices = self.notices
        found = self.found
        chars = links = 0
        had = False
        notice = False
        heading: tuple[int, int, int] | None = None  # start, chars, links of the last h*
        # The run of inline content since the last block child (CSS 2.1 §9.2.1.1: beside
        # block boxes it is an anonymous block of its own): its first piece, chars, links.
        # ``blocky``: a block child was met, so a run is a block to judge ("<hr><a>Print</a>
        # | <a>AMP</a>" at the end of a content cell is a link list as a <p> of it is).
        run = run_c = run_k = 0
        blocky = False
        # The children in lexbor's own loop, which passes over the text nodes of ASCII
        # whitespace (between tags: half the nodes of a page) without making them objects.
        for child in node.iter(include_text=True, skip_empty=True):
            # The name by lexbor's tag id (an int, 3× cheaper to read than the name).
            tid = child.tag_id
            if tid == _TEXT_ID:
                text = child.text_content
                if text and not text.isspace():
                    chars += len(text)
                    if in_link:
                        links += len(text)
                    if notices and not notice:
                        notice = _notice(text)
                    if self.brk:
                        text = BLOCK_BREAK + text
                        self.brk = False
                    if not run_c:
                        run = len(pieces)
                    run_c += len(text)
                    if in_link:
                        run_k += len(text)
                    pieces.append(text)
                    cut.append(0)
                continue
            if tid in LINK_IDS:
                found.append(child)
            tag = names.get(tid)
            if tag is None:
                tag = _name(child, tid)
            first = child.first_child  # (``child`` is a deprecated alias: one lookup more)
            if tag is None or tag[0] == "-" or tag[0] == "_" or first is None:
                continue  # a comment, or an element with nothing in it (br, img)
            if tag in _SKIP or (tag in _SECTIONING and not in_article):
                self._skip(child)
                continue
            attrs = child.attributes
            # (a dict test first: most elements have none of the three, a call costs more)
            if (
                attrs
                and ("role" in attrs or "class" in attrs or "id" in attrs)
                and _template_attrs(attrs)
            ):
                self._skip(child)
                continue
            start = len(pieces)
            breaks = tag in _BREAKS
            if breaks:
                self.brk = True
                if run_c:
                    if run_k > _LINK_DENSE * run_c:
                        self._cut(run, start, _LINKS)
                        chars -= run_c
                        links -= run_k
                        had = True
                    run_c = run_k = 0
                blocky = True
            if first.tag_id == _TEXT_ID and first.next is None:
                # An element of one text node (<a>…</a>, <h1>…</h1>, <p>…</p>): what the
                # recursive call gives, without the call (most elements of a page).
                c = k = 0
                n = False
                text = first.text_content
                if text and not text.isspace():
                    c = len(text)
                    if in_link or tag == "a":
                        k = c
                    n = notices and _notice(text)
                    if self.brk:
                        text = BLOCK_BREAK + text
                        self.brk = False
                    pieces.append(text)
                    cut.append(0)
                h = False
            else:
                c, k, n, h = self.node(child, in_link or tag == "a", in_article or tag in _ARTICLE)
                had = had or h
            if breaks:
                self.brk = True
            elif c:
                if not run_c:
                    run = start
                run_c += c
                run_k += k
            if tag == "h1" and self.h1 < 0 and c and k <= _LINK_DENSE * c:
                self.h1 = start  # the page's own heading (a linked h1 is the site's logo)
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
                    if c:  # (else all in it is cut already, each as what it is)
                        self._cut(start, len(pieces), mark)
                    # (a heading is a listing's — "In this section" — never a tool line's:
                    # an article's last heading stays whether a "Desktop version" link
                    # follows it or not)
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
        if blocky and run_c and run_k > _LINK_DENSE * run_c:
            self._cut(run, len(pieces), _LINKS)
            chars -= run_c
            links -= run_k
            had = True
        return chars, links, notice, had and not chars

    def _cut(self, start: int, end: int, mark: int) -> None:
        """Mark pieces[start:end] as a link list: a listing's mark wins over another's (the
        <div> around a table of contents does not make it a tool line)."""
        cut = self.cut
        for i in range(start, end):
            if mark == _LISTING or cut[i] != _LISTING:
                cut[i] = mark


def main_text(parser: LexborHTMLParser, found: list[LexborNode] | None = None) -> str:
    """The text of the main content of ``parser``'s document (see the module's docstring);
    ``found`` gets the link elements of its body (``LINK_IDS``) in document order."""
    body = parser.body
    if body is None:
        return ""
    walk = _Walk([] if found is None else found)
    walk.notices = _notice(body.text(deep=True, separator="", strip=False))
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
    if heading and h1 > lo:
        # What comes before the page's own heading and is short is its masthead — the site's
        # name in a template without a <header> (an AMP or printer page), which the desktop
        # template puts in one: not the document (readability and jusText start an article
        # at its heading; a long text before it is kept, it may be the document's).
        before = sum(len(pieces[i]) for i in range(lo, h1) if not cut[i])
        if before <= _MASTHEAD_CHARS:
            lo = h1
    kept = [pieces[i] for i in range(lo, hi) if not cut[i]]
    joined = " ".join(kept)
    text = _unstamped(joined)
    # the chars of the text nodes kept (not the spaces joining them, not the breaks)
    chars = len(text) - len(kept) + 1 - joined.count(BLOCK_BREAK)
    if chars < _MIN_CHARS:
        # Too little text to be the document alone: a table of contents, a directory index.
        # Its listings are kept — only those from its heading on (a sidebar's list before it
        # is the template's, which a printer page has not) and only listings (a lone link,
        # "Desktop version", is one template's tool line): what every template of the page
        # shows alike.
        since = h1 if heading else lo
        text = _unstamped(
            " ".join(
                pieces[i]
                for i in range(lo, hi)
                if not cut[i] or (cut[i] == _LISTING and i >= since)
            )
        )
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
