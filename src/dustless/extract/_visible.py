"""The text a browser shows for a parsed HTML document (pure).

Read from the tree the HTML parser built, not from the markup with patterns: the parser
already knows where a tag ends, which ``<`` is text, and how each entity reads, so a page
whose markup is broken reads as a browser renders it. Elements never rendered as text —
``script``, ``style``, ``noscript`` (text only where scripting is off), ``template`` (HTML
§4.11–4.12) — are removed first; comments and attribute values are not text nodes at all.
Text nodes are joined with a space, as a tag boundary separates words on screen.

Link extraction hands its tree here once its links are read (the near-duplicate fingerprint
of the crawl then costs no second parse: ``bench/fingerprint_bench.py`` prints it "in the
crawl" and "from a stored body"). What the fingerprint reads, ``tree_text``, is the text of
the main content (``_maincontent``: the template taken out); ``all_text`` is every word a
browser shows. ``main_text`` and ``visible_text`` parse a body of their own the same way, so
the crawl and a reader of stored bodies get the same text for the same bytes.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

from dustless.extract._maincontent import main_text

__all__ = ["all_text", "tree_text"]

_HIDDEN = ["script", "style", "noscript", "template"]
# Any of them opened in the (lower-cased) markup: one pass over it, not four.
_HIDDEN_OPEN = re.compile("|".join(f"<{tag}" for tag in _HIDDEN))


def tree_text(parser: LexborHTMLParser, lowered: str, found: list[LexborNode] | None = None) -> str:
    """The text of the main content of ``parser``'s document (what the near-duplicate
    fingerprint hashes); ``lowered`` is not needed (the walk skips hidden elements itself)
    but kept for the callers; ``found`` gets the body's link elements (``main_text``).
    Leaves the tree as it was."""
    del lowered
    return main_text(parser, found)


def all_text(parser: LexborHTMLParser, lowered: str) -> str:
    """The visible text of ``parser``'s document; ``lowered``: its markup in lower case (a
    hidden element needs its name there, so most pages skip the removal). Removes the
    hidden elements from the tree."""
    if _HIDDEN_OPEN.search(lowered):
        parser.strip_tags(_HIDDEN)
    root = parser.root
    if root is None:
        return ""
    return root.text(deep=True, separator=" ", strip=False)
