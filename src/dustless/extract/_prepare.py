"""What lexbor reads of a page: the guard's budget, its cheap bound, its measure (issue 28).

:func:`prepare` cuts a page to its budget in tags, and flattens it when :func:`._guard.shape`
finds it hostile (see :mod:`._guard`). Before measuring, it tries a cheap upper bound on what
``shape`` would measure, from counts.

``shape`` reads every tag of a page in Python, about a microsecond a tag: the largest single
cost of a real documentation page. Most such pages are far from every limit, and a few
substring counts and regex scans (C speed, no Python per tag) show it: :func:`upper` gives,
for each field of :class:`._guard.Shape`, a value at least the one ``shape`` would measure,
so a page it finds safe is one ``shape`` finds safe too, and the guard's decision is the
same — this bound errs towards "maybe hostile", never the other way. A page it cannot clear
is measured in full, as before. Each bound below says why it holds; the tests compare it
with ``shape`` field by field on hostile, generated, test-web and real pages.

* **Foreign content.** Inside ``<svg>`` or ``<math>`` the content of ``<style>``/``<script>``
  is markup (``shape`` counts what looks like a tag there): a page with ``<svg`` or
  ``<math`` in any case gets no bound. Without it, every element ``shape`` pushes is a start
  tag token, which begins with ``<`` and a letter.
* **Depth and options.** ``shape`` pushes at most once per start tag token that is not a
  void element and not read as a pair (``_SHAPE_RE``'s first alternative; a pair deepens
  the stack by one while it is read, then leaves it as it was). The ``<`` + letter places
  number at most ``count("<") - count("</")``; from those, the pairs that ``_PAIR_RE`` finds
  and the void start tags ``_VOID_RE`` finds are never pushes: the pair pattern is the same
  at the same place (so where ``shape`` reads a start tag there, it reads the pair
  instead), a pair holds no other ``<`` + letter, and a void name followed by what ends a
  name is that void tag. So depth <= pushes + 1, and options (each one a push) <= pushes.
  When that is not under the limit, the flat blocks (``_FLAT_RE``: a ``<p>``, ``<td>``,
  ``<li>``… holding only text and pairs, then its end tag) are taken out too: where
  ``shape`` pushes one, it pops it at its end tag (on top, the pairs having left the stack
  as it was), so at most one is open at a time, and depth <= other pushes + 2 (one flat
  block, one pair in it); none is an option.
* **Clones.** :mod:`._formatting`'s alive entries plus its evicted ones ("ghosts") grow by
  one at most per formatting start tag read alone: a pair opens and closes its entry in one
  (its end tag drops it, or takes a ghost). So at most ``F`` are alive, ``F`` being the
  places ``_FORMATTING_RE`` finds (a formatting name in any case, ended by a non-word
  character) less the formatting pairs. A reconstruction adds the alive entries and needs
  ``stale`` set since the last one — by a tag token, at most ``count("<")`` of them — or an
  ``<a>`` pair (which may reconstruct anyway); and each token adds at most one adoption
  agency's ``ADOPTION_CLONES``. So clones <= F x (tags + a pairs + 1) + ADOPTION_CLONES x tags.
* **Attributes.** ``shape`` counts them only on a tag whose attribute text is longer than
  ``MAX_ATTRIBUTES``; each attribute but the last takes two characters at least (a name and
  a separator, or ``="…"``), so more than ``MAX_ATTRIBUTES`` need 2 x ``MAX_ATTRIBUTES``
  characters of it. A tag's attribute text holds a ``>`` only inside a quoted value, which
  ``_QUOTED_GT_RE`` finds (or one left open to the end of the page); without one, a tag that
  long is a ``<`` with 2 x ``MAX_ATTRIBUTES`` characters and no ``>`` after it
  (``_LONG_TAG_RE``).
"""

from __future__ import annotations

import re

from dustless.extract._formatting import ADOPTION_CLONES, FORMATTING
from dustless.extract._guard import (
    _PAIRED,
    _RAW,
    _TAG_ATTRS,
    _VOID,
    CLONE_FREE_TAGS,
    MAX_ATTRIBUTES,
    MAX_DEPTH,
    SHAPE_MIN_CHARS,
    Shape,
    _names,
    flatten,
    shape,
)

__all__ = ["BOUND_MAX_TAGS", "prepare", "safe", "upper"]


def _alternation(names: frozenset[str]) -> str:
    return "|".join(sorted(names, key=len, reverse=True))


def _any_case(name: str) -> str:
    # "[bB][iI][gG]": character classes cost the regex far less than re.IGNORECASE.
    return "".join(f"[{c}{c.upper()}]" for c in name)


def _trie(names: list[str]) -> str:
    # "b(?:d(?:i|o)|ig)?": a branch a first letter, not a name (a sixth less time).
    first: dict[str, list[str]] = {}
    for name in names:
        first.setdefault(name[0], []).append(name[1:])
    parts = []
    for letter, rests in sorted(first.items()):
        longer = [r for r in rests if r]
        if not longer:
            parts.append(letter)
        elif len(longer) == 1:
            parts.append(f"{letter}(?:{longer[0]})" + ("?" if "" in rests else ""))
        else:
            parts.append(f"{letter}(?:{_trie(longer)})" + ("?" if "" in rests else ""))
    return "|".join(parts)


# _SHAPE_RE's first alternative, the pair, with the name its only group (see _guard). It
# matches at the same places, which is all the bound relies on: the names as a trie (at
# most one name can be followed by what ends a name), the optional attributes and the runs
# possessive (what they would give back, what follows cannot take: ">", "<").
_PAIR_RE = re.compile(
    f"<({_trie(sorted(_PAIRED))})(?:[\\t\\n\\f\\r /]{_TAG_ATTRS})?+>[^<]*+</\\1[\\t\\n\\f\\r ]*+>"
)
# A block holding only text and pairs, and its end tag: where shape reads its start tag, it
# pushes it, reads the text and pairs (the same pattern at the same places), and pops it at
# its end tag, which finds it on top. So at most one is open at a time (none nests in
# another), and their start tags are not counted as pushes that stay. Not option (options
# are bounded by the pushes that stay), nor raw text, void, pair or foreign elements.
_FLAT = _names("p td th dt dd li div pre h1 h2 h3 h4 h5 h6")
_FLAT_RE = re.compile(
    f"<({_trie(sorted(_FLAT))})(?:[\\t\\n\\f\\r /]{_TAG_ATTRS})?+>"
    f"(?:[^<]++|<(?P<pair>{_trie(sorted(_PAIRED))})(?:[\\t\\n\\f\\r /]{_TAG_ATTRS})?+>"
    f"[^<]*+</(?P=pair)[\\t\\n\\f\\r ]*+>)*+</\\1[\\t\\n\\f\\r ]*+>"
)
# Lower case only: a void tag written otherwise is not subtracted (the bound only grows).
_VOID_RE = re.compile(f"<(?:{_alternation(_VOID)})(?=[\\t\\n\\f\\r />])")
# Any case, and "\b" ends the name where the tokenizer does (whitespace, "/", ">", the end)
# and at more places ("<b-x"): more places found, a larger bound.
_FORMATTING_RE = re.compile(
    "<(?:" + "|".join(_any_case(n) for n in sorted(FORMATTING, key=len, reverse=True)) + r")\b"
)
_FOREIGN_RE = re.compile("<(?:" + _any_case("svg") + "|" + _any_case("math") + ")")
_LONG_TAG_RE = re.compile(f"<[A-Za-z/][^>]{{{2 * MAX_ATTRIBUTES}}}")
# A quoted value (after "=", §13.2.5.36) holding ">" or left open to the end of the page.
# Possessive: backtracking into the value to try ">" or the end at each character before
# its closing quote doubled the scan's time.
_QUOTED_GT_RE = re.compile(r"=[\t\n\f\r ]*+(?:\"[^\">]*+(?:>|\Z)|'[^'>]*+(?:>|\Z))")
# What the flat blocks rely on (see _FLAT).
assert not _FLAT & (_RAW | _VOID | _PAIRED | {"option", "optgroup", "svg", "math"})
_UNBOUNDED = Shape(MAX_DEPTH + 1, 0, 0, 0)
# Past this many "<" the bound is not tried: it clears a page only when all but 254 of its
# start tags are void, pairs or flat blocks, which few pages that long are, and its scans
# cost a fifth to a half of the measure. On the 731 measured pages of the PostgreSQL and git
# manuals (each page timed alone, the best of three): bound and measure cost 0.79 of the
# measure alone with 1,200 here, 0.92 with the bound tried on every page, 0.87 with 600.
BOUND_MAX_TAGS = 1200


def upper(text: str, lts: int) -> Shape:
    """At least what ``shape(text)`` measures, field by field (``tags``: at least its
    tags); ``lts`` is at least ``text.count("<")``. A page this cannot bound cheaply gets a
    hostile :class:`Shape` (depth past the limit): measure it in full."""
    if _FOREIGN_RE.search(text):
        return _UNBOUNDED
    pairs = _PAIR_RE.findall(text)
    pushes = lts - text.count("</") - len(pairs) - len(_VOID_RE.findall(text))
    depth = pushes + 1
    if depth > MAX_DEPTH:
        # Most of them may be flat blocks, each popped by its own end tag (see the doc).
        pushes -= len(_FLAT_RE.findall(text))
        depth = pushes + 2
        if depth > MAX_DEPTH:
            return Shape(depth, pushes, 0, lts)  # the usual reason, found first
    if _LONG_TAG_RE.search(text) or _QUOTED_GT_RE.search(text):
        return Shape(depth, pushes, MAX_ATTRIBUTES + 1, lts)
    alive = len(_FORMATTING_RE.findall(text)) - sum(map(FORMATTING.__contains__, pairs))
    reconstructions = lts + pairs.count("a") + 1
    clones = alive * reconstructions + ADOPTION_CLONES * lts
    return Shape(depth, pushes, MAX_ATTRIBUTES, lts, clones)


def safe(text: str, lts: int) -> bool:
    """Whether ``shape(text)`` is certainly not hostile, without measuring it."""
    return not upper(text, lts).hostile


def _cut(text: str, max_tags: int) -> str:
    """``text`` before its ``max_tags``-th "<" (every tag starts with one)."""
    pieces = text.split("<", max_tags)
    return text[: len(text) - len(pieces[-1]) - 1]


def prepare(text: str, max_tags: int | None) -> tuple[str, bool, bool]:
    """``(text for lexbor, flattened, over_budget)``; ``max_tags`` None: no budget."""
    over_budget = False
    lts = text.count("<")
    if max_tags is not None and lts > max_tags:
        text = _cut(text, max_tags)
        over_budget = True
        lts = max_tags
    if lts <= CLONE_FREE_TAGS and len(text) < SHAPE_MIN_CHARS:
        return text, False, over_budget
    # The cheap bound first: most real pages are far from every limit (see the module doc).
    if (lts <= BOUND_MAX_TAGS and safe(text, lts)) or not shape(text).hostile:
        return text, False, over_budget
    return flatten(text), True, over_budget
