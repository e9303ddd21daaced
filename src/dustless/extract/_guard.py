"""Keeping a hostile page from costing more than its size: the CPU bound of extraction.

Lexbor builds the tree as the HTML standard says (§13.2.6), and some of the standard's steps
look at the whole stack of open elements, at every option of a select, or at every attribute
of a tag so far; lexbor does each look in full, so some markup costs time in the square of
its size. ``perf`` puts 88 % of the time of 100,000 nested ``<div>`` in
``lxb_html_tree_element_in_scope``: each ``<div>`` start tag asks whether a ``p`` is "in
button scope", a walk down the whole stack. Measured, per 20,000 repetitions:

* nesting — ``<div>`` 0.55 s, ``<div><span><b>`` 2.6 s, ``<ul><li>`` 3.1 s, ``<dl><dt><dd>``
  5.0 s (and 16 times that for 4 times as many: a 1.1 MB page of nested ``<div>`` took 45 s
  in a crawl, 100,000 unclosed ``<div><span><b>`` 232 s);
* 20,000 options in one select 2.4 s (the selectedness algorithm reruns over all of them);
* 20,000 attributes on one tag 0.86 s (each is compared with the ones before).

No page needs this: browsers stop nesting at 512 levels (Chromium attaches deeper elements
to the 512th) and libxml2 at 256. So :func:`shape` measures a page first, reading it as the
standard's tokenizer does (tags and their attributes, comments, RCDATA/RAWTEXT, script data
and its escapes), and a page nested deeper than :data:`MAX_DEPTH`, or with more than
:data:`MAX_OPTIONS` options or :data:`MAX_ATTRIBUTES` attributes on a tag, is
:func:`flatten`-ed before lexbor sees it: the elements that carry no link go (their text
stays), so lexbor builds a flat tree from markup we wrote, in time proportional to the page.

The measure errs one way only, towards flattening: it counts every start tag as an open
element and pops one only where the tree builder certainly pops it (the matching end tag of
the element on top, the implied end of an ``li``, ``p``, ``option`` … on top, see
:func:`shape`); inside ``<svg>`` or ``<math>``, where the content of ``<style>`` or
``<script>`` is markup, whatever looks like a start tag there counts. What lexbor builds
without a start tag is of two kinds: implied elements (``tbody``, ``tr``, ``p``, one per tag
at most) and clones of formatting elements when it reconstructs them, which can be many per
tag (250 ``<b id=N>`` left open clone into every later ``<div>``: 2.7 GB for a 0.36 MB page).
:mod:`._formatting` counts those as the tokens go, erring towards more, and a page that may
clone more than :data:`MAX_CLONES` elements is flattened too (no formatting element is left
for lexbor to clone). Nothing else bounds extraction: it runs on the event loop, without a
deadline, so this measure is the bound.

Only pages of more than :data:`CLONE_FREE_TAGS` tags or at least :data:`SHAPE_MIN_CHARS`
characters are measured (the test web's pages are not): below that the squares cost
milliseconds and no page can clone :data:`MAX_CLONES` elements. The
measure is Python's ``re`` and costs about a microsecond a tag, 1–2 times lexbor's parse of
the same page. Most tags of real documentation are phrasing closed right after its text
(``<code class="literal">x</code>``, ``<a href="…">x</a>``: a third of the tags of the
PostgreSQL and git manuals' pages): :func:`shape` reads such a pair as one token, applying
its two tags' effects at once, and the formatting list skips it when no entry is alive
(:meth:`~._formatting.Formatting.pair`): the same measure, field for field — the tests
measure pages both ways (``_PLAIN_RE`` reads every tag alone); with the tag pattern's
attributes unrolled (``_TAG_ATTRS``) the measure of those pages costs a third less
(``bench/guard_prepare_bench.py``). Before measuring, :func:`._prepare.prepare` tries a
cheap upper bound on this measure, from counts and a few regex scans, and measures only a
page it cannot clear (most manual pages it clears). And every page has a budget in tags
(``max_tags``): past it only the part before the budget's last tag is parsed, and the
extraction says so (``Extraction.over_budget``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dustless.extract._formatting import FORMATTING, MARKERS, Formatting


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


__all__ = [
    "DEFAULT_MAX_TAGS",
    "MAX_ATTRIBUTES",
    "MAX_CLONES",
    "MAX_DEPTH",
    "MAX_OPTIONS",
    "Shape",
    "flatten",
    "shape",
]

MAX_DEPTH = 256  # libxml2's limit; Chromium's parser stops nesting at 512
MAX_OPTIONS = 512  # in the page (the selectedness cost is per select, N² each)
MAX_ATTRIBUTES = 256  # on one tag
# Elements the tree builder may make by cloning formatting elements (_formatting): about
# 0.4 KB of lexbor's memory each (with an attribute), so the bound is ~40 MB, ~50 ms.
MAX_CLONES = 100_000
# Below this many "<", a page cannot clone MAX_CLONES elements, so it need not be measured:
# F formatting start tags and the T - F other tags (each a pop, then a reconstruction)
# make at most F x (T - F + 1) <= (T + 1)^2 / 4 clones, plus ADOPTION_CLONES an end tag.
CLONE_FREE_TAGS = 512
DEFAULT_MAX_TAGS = 250_000  # more than a 2 MiB page of ordinary markup holds
# Below this and CLONE_FREE_TAGS, a page is not measured: 512² stack scans and the ~2,700
# attributes² that 8 K characters hold cost < 20 ms.
SHAPE_MIN_CHARS = 8 * 1024

# One attribute as the tokenizer reads it (§13.2.5.32–.39): a name runs to whitespace, "/",
# ">" or "=" (and may start with "="), then optionally "=" and a value — double-quoted,
# single-quoted (either may run to the end of the input), or unquoted up to whitespace or
# ">". Between attributes: whitespace and "/" (a "/" not before ">" is ignored).
_NAME = r"[^\t\n\f\r />][^\t\n\f\r />=]*"
_VALUE = r"(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:\"[^\"]*(?:\"|\Z)|'[^']*(?:'|\Z)|[^\t\n\f\r >]*))?"
_ATTR_RE = re.compile(f"({_NAME}){_VALUE}")
_ATTRS = f"(?:[\\t\\n\\f\\r /]+|{_NAME}{_VALUE})*"
# What the tokenizer can meet in the data state, first match wins:
#   1. a tag with no "<" and no ">" in it, whose quotes all open a value right after "="
#      (most tags, read fast: the same extent as 2 for them), or
#   2. any start or end tag: "<" or "</", a letter, the name up to whitespace, "/" or ">",
#      attributes, ">" (or the end of the input, where the tag is dropped);
#   3. a comment: "<!--" then ">" or "->" at once (abrupt), else up to "-->" or "--!>", else
#      to the end of the input (§13.2.5.43–.52);
#   4. a DOCTYPE, a CDATA section or bogus comment ("<!…", "<?…", "</" + not a letter).
# The attributes of alternative 1: characters but "<>\"'=", and "=" (then whitespace, then a
# quoted value holding no "<" or ">", if any). Written unrolled and possessive — runs of
# ordinary characters at once, no backtracking into them (whatever one gives back, the next
# part cannot take: it starts with "=", a quote or ">") — it reads the same tags in two
# thirds of the time of the alternation it replaced, and never backtracks exponentially on
# a tag that fails (many "= " then a lone quote).
_TAG_ATTRS = r"[^<>\"'=]*+(?:=[\t\n\f\r ]*+(?:\"[^\"<>]*\"|'[^'<>]*')?[^<>\"'=]*+)*+"
_TOKEN_RE = re.compile(
    r"<(/?)([A-Za-z][^\t\n\f\r />]*)"
    f"(?:({_TAG_ATTRS})>|"
    f"({_ATTRS})(?:>|\\Z))"
    r"|<!--(?:-?>|.*?--!?>|.*\Z)"
    r"|<(?:!|\?|/(?![A-Za-z]))[^>]*(?:>|\Z)",
    re.S,
)
# Phrasing that a page closes as soon as it opens, most of the tags of real documentation
# (``<code class="literal">x</code>``, ``<a href="…">x</a>``): none ends, pops or marks
# anything by its start tag (not _ENDS_TOP, _SPECIAL, MARKERS, _RAW, _VOID), so a start tag,
# text with no "<" and its own end tag have the effects :func:`shape` gives them one by one,
# which it applies at once for the pair (see there). Not nobr (its start tag may end one).
_PAIRED = _names(
    "a b big code em font i s small strike strong tt u span abbr cite dfn kbd mark q samp "
    "sub sup time var bdi bdo data ins del label"
)
# _TOKEN_RE for shape, with one more alternative tried first: such a start tag read as
# alternative 1 reads it (the name ends at whitespace, "/" or ">"), text, and its end tag
# with nothing but whitespace in it. The tokenizer meets the same tokens either way: the
# pair is tried only where _TOKEN_RE would start a tag, and its parts are the tokens
# _TOKEN_RE reads there (the text holds no "<", the element is not RCDATA/RAWTEXT).
# Lower case only: a case-insensitive alternation costs the regex half again, and a pair
# written otherwise is read as its two tags, as before.
_SHAPE_RE = re.compile(
    f"<({'|'.join(sorted(_PAIRED, key=len, reverse=True))})"
    f"((?:[\\t\\n\\f\\r /]{_TAG_ATTRS})?)>[^<]*</\\1[\\t\\n\\f\\r ]*>|" + _TOKEN_RE.pattern,
    re.S,
)
# The same tokens with no pair ever read at once: every tag is its own token, as shape read
# them before issue 28. The tests measure pages with both and compare.
_PLAIN_RE = re.compile("(?!)()()|" + _TOKEN_RE.pattern, re.S)
# The "special" category (§13.2.4.2) less its void elements, and svg/math whose content
# holds more of them (MathML text integration points, SVG foreignObject/desc/title): an
# adoption agency finds its "furthest block" or a scope boundary among these.
_SPECIAL = _names(
    "address applet article aside blockquote body button caption center colgroup dd details "
    "dir div dl dt fieldset figcaption figure footer form frameset h1 h2 h3 h4 h5 h6 head "
    "header hgroup html iframe li listing main marquee menu nav noembed noframes noscript "
    "object ol p plaintext pre script search section select style summary table tbody td "
    "template textarea tfoot th thead title tr ul xmp svg math"
)
# Start tags that never pop an element off the stack, in any insertion mode: formatting
# elements but a and nobr, and phrasing that the "any other start tag" rule inserts.
_QUIET = (FORMATTING - {"a", "nobr"}) | _names(
    "span abbr cite dfn kbd mark q samp sub sup time var bdi bdo data ins del label img br wbr"
)
# Start tags after which the tree builder does not reconstruct the active formatting
# elements (§13.2.6.4.7: blocks, lists, tables, head content …); every other one does.
_NO_RECONSTRUCT = _names(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption "
    "figure footer header hgroup main menu nav ol p search section summary ul h1 h2 h3 h4 h5 "
    "h6 pre listing form li dd dt plaintext table hr textarea iframe noembed body html head "
    "frameset caption col colgroup frame tbody td tfoot th thead tr base basefont bgsound "
    "link meta noframes script style template title rb rp rt rtc param source track"
)
# What a start tag means for the formatting list, one lookup a tag (unknown names are
# "any other start tag": they reconstruct and pop nothing).
_POPS, _RECONSTRUCTS, _FORMATS, _SPECIALS, _MARKS = 1, 2, 4, 8, 16
_KIND: dict[str, int] = {
    name: (name not in _QUIET and _POPS)
    | (name not in _NO_RECONSTRUCT and _RECONSTRUCTS)
    | (name in FORMATTING and _FORMATS)
    | (name in _SPECIAL and _SPECIALS)
    | (name in MARKERS and _MARKS)
    for name in _QUIET | _NO_RECONSTRUCT | FORMATTING | _SPECIAL | MARKERS
}
# Elements with no end tag (§13.1.2): they never nest.
_VOID = _names(
    "area base basefont bgsound br col embed frame hr image img input keygen link meta "
    "param source track wbr"
)
# Elements whose content the tokenizer reads as text up to their end tag (§13.2.6.2 and the
# "in body" rules that switch the tokenizer): RCDATA, RAWTEXT, script data, PLAINTEXT.
_RAW = _names("title textarea style xmp iframe noembed noframes script plaintext")
_END_RE = {name: re.compile(rf"</{name}(?=[\t\n\f\r />])", re.I) for name in _RAW}
# Script data (§13.2.5.4, .15–.31): "<!--" enters the escaped state (unless dashes and ">"
# close it at once); there "<script" enters the double-escaped state, in which "</script"
# only returns to the escaped state; "-->" returns to script data from both.
_SCRIPT_MARK_RE = re.compile(r"<!--(-*>)?|-->|<(/?)script(?=[\t\n\f\r />])", re.I)
_OPEN_RE = re.compile(r"<[A-Za-z]")
# Start tags that end the element on top of the stack when it is one of these (§13.2.6.4.7,
# "in body": an li ends an li, a dd or dt ends either, a block ends a p, an option ends an
# option; "in row"/"in cell": a td or th ends either, a tr ends a tr). Not <table>, which
# leaves a p open in quirks mode.
_BLOCKS = _names(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption "
    "figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr listing main menu nav ol p pre "
    "search section summary ul xmp li dd dt"
)
_ENDS_TOP: dict[str, frozenset[str]] = {
    **{name: frozenset({"p"}) for name in _BLOCKS},
    "li": frozenset({"li", "p"}),
    "dd": frozenset({"dd", "dt", "p"}),
    "dt": frozenset({"dd", "dt", "p"}),
    "option": frozenset({"option"}),
    "optgroup": frozenset({"option"}),
    "td": frozenset({"td", "th"}),
    "th": frozenset({"td", "th"}),
    "tr": frozenset({"td", "th", "tr"}),  # "in cell": close the cell, then "in row"
}
# An end tag ends these first when they are above its element ("generate implied end tags",
# §13.2.6.3; the table end tags close the cell, row and section first, §13.2.6.4.9–.15):
# they are popped only when its element is right under them.
_IMPLIED = frozenset({"li", "p", "dd", "dt", "option", "optgroup", "rb", "rp", "rt", "rtc"})
_CELL = frozenset({"td", "th"})
_END_FIRST: dict[str, frozenset[str]] = {
    "tr": _IMPLIED | _CELL,
    "tbody": _IMPLIED | _CELL | {"tr"},
    "thead": _IMPLIED | _CELL | {"tr"},
    "tfoot": _IMPLIED | _CELL | {"tr"},
    "table": _IMPLIED | _CELL | {"tr", "tbody", "thead", "tfoot", "caption", "colgroup"},
}

# What the pair alternative of _SHAPE_RE relies on (see _PAIRED).
assert not _PAIRED & (_SPECIAL | MARKERS | _RAW | _VOID | _ENDS_TOP.keys() | {"nobr"})
assert all(_KIND.get(name, _RECONSTRUCTS) & _RECONSTRUCTS for name in _PAIRED)


@dataclass(frozen=True, slots=True)
class Shape:
    """What :func:`shape` measured: the deepest nesting the tree builder may reach, the
    options, the most attributes on one tag, the tags (start and end) and the elements it
    may clone from the list of active formatting elements — up to where the page showed
    itself hostile (the measure stops at the first limit passed)."""

    depth: int
    options: int
    attributes: int
    tags: int
    clones: int = 0

    @property
    def hostile(self) -> bool:
        return (
            self.depth > MAX_DEPTH
            or self.options > MAX_OPTIONS
            or self.attributes > MAX_ATTRIBUTES
            or self.clones > MAX_CLONES
        )


def _script_end(text: str, start: int) -> int:
    """Where the script data that starts at ``start`` ends (its "</script"), or -1."""
    state = 0  # 0 script data, 1 escaped, 2 double escaped
    for m in _SCRIPT_MARK_RE.finditer(text, start):
        token = m.group()
        if token[1:2] == "!":
            if state == 0 and m.group(1) is None:
                state = 1
        elif token == "-->":
            state = 0
        elif m.group(2):  # "</script"
            if state == 2:
                state = 1
            else:
                return m.start()
        elif state == 1:  # "<script" in the escaped state
            state = 2
    return -1


def _raw_end(name: str, text: str, start: int) -> int:
    """Where the RCDATA/RAWTEXT/script content starting at ``start`` ends, or -1."""
    if name == "script":
        return _script_end(text, start)
    if name == "plaintext":
        return -1
    m = _END_RE[name].search(text, start)
    return -1 if m is None else m.start()


def shape(text: str) -> Shape:
    """Measure ``text`` as the tree builder will meet it (see the module docstring).

    The stack holds the name of every element opened; an end tag pops its element if it is
    on top (or right under an ``li``, ``p``, cell … that the end tag certainly ends first);
    a start tag pops the element on top if its rules end that element (``_ENDS_TOP``).
    Anything else leaves the stack as it is, which can only make the measure deeper than
    the tree lexbor builds. Beside it, the list of active formatting elements
    (:mod:`._formatting`) counts the clones its reconstructions may make."""
    return _measure(text, _SHAPE_RE)


def _measure(text: str, token_re: re.Pattern[str]) -> Shape:
    """:func:`shape` with the tokens of ``token_re``: ``_SHAPE_RE``, or ``_PLAIN_RE``."""
    stack: list[str] = []
    push = stack.append
    pop = stack.pop
    deepest = options = attributes = tags = 0
    # The special elements in the stack, (index, serial, pushed a marker) — the serial is
    # the tag count at their start tag — for the formatting list's "nothing special opened
    # after it", and to clear the list to a marker when its element certainly closes.
    specials: list[tuple[int, int, bool]] = []
    fmt = Formatting()
    stale = False  # something may have popped entries since their last reconstruction
    last = 0  # where the previous token ended: text before a token reconstructs
    foreign = False  # met <svg> or <math>: raw-text content may be markup
    n = len(text)
    resume = 0  # the next token starts here or later (after raw text)
    tokens = token_re.finditer(text)
    while True:
        for m in tokens:
            start = m.start()
            if start < resume:
                if m.end() > resume:
                    break  # a "token" across the end of raw text: read again from there
                continue
            if stale and start > last:  # text: the tree builder reconstructs (§13.2.6.4.7)
                fmt.clones += fmt.live
                stale = False
                if fmt.clones > MAX_CLONES:
                    break
            last = m.end()
            paired, pair_attrs, end_tag, name, simple, full = m.groups()
            if paired is not None:
                # A start tag, text, its end tag: what the code below does for each, in
                # order. The start tag pops nothing but may reconstruct (it is "a" or plain
                # phrasing), after which nothing is stale, so the text before the end tag
                # reconstructs nothing; its element, on top, is pushed and popped, and no
                # special element opens between (the end tag's whitespace is no attribute).
                tags += 1
                name = paired
                if len(pair_attrs) > MAX_ATTRIBUTES:
                    attributes = max(attributes, len(_ATTR_RE.findall(pair_attrs)))
                    if attributes > MAX_ATTRIBUTES:
                        break
                kind = _KIND.get(name, _RECONSTRUCTS)
                if stale or kind & _POPS:
                    fmt.clones += fmt.live
                    stale = False
                    if fmt.clones > MAX_CLONES:
                        break
                if len(stack) >= deepest:
                    deepest = len(stack) + 1
                    if deepest > MAX_DEPTH:
                        if kind & _FORMATS:
                            fmt.open(name, pair_attrs, tags, specials[-1][1] if specials else -1)
                        break
                tags += 1
                stale = True
                if kind & _FORMATS:
                    fmt.pair(name, pair_attrs, tags - 1, specials[-1][1] if specials else -1)
                continue
            if name is None:  # a comment, a DOCTYPE, a bogus comment or a CDATA section
                if foreign and m.group().startswith("<![CDATA["):
                    # CDATA in foreign content runs to "]]>": what looks like a tag counts
                    stop = text.find("]]>", m.start())
                    stop = n if stop < 0 else stop
                    for _ in _OPEN_RE.finditer(text, m.start() + 9, stop):
                        push("?")
                    deepest = max(deepest, len(stack))
                    resume = last = stop
                continue
            tags += 1
            name = name.lower()
            attrs = full if simple is None else simple
            if len(attrs) > MAX_ATTRIBUTES:
                attributes = max(attributes, len(_ATTR_RE.findall(attrs)))
                if attributes > MAX_ATTRIBUTES:
                    break
            if end_tag:
                stale = True  # any end tag may pop formatting elements off the stack
                if _KIND.get(name, 0) & _FORMATS:
                    fmt.close(name, specials[-1][1] if specials else -1)
                # Pop it if it is on top, or under elements its end tag certainly ends first.
                first = _END_FIRST.get(name, _IMPLIED)
                k = len(stack) - 1
                while k >= 0 and stack[k] in first and stack[k] != name:
                    k -= 1
                if k >= 0 and stack[k] == name:
                    del stack[k:]
                    while specials and specials[-1][0] >= k:
                        _, serial, marker = specials.pop()
                        if marker:
                            fmt.marker_closed(serial)
                continue
            ends = _ENDS_TOP.get(name)
            if ends is not None:
                while stack and stack[-1] in ends:
                    pop()
                k = len(stack)
                while specials and specials[-1][0] >= k:
                    _, serial, marker = specials.pop()
                    if marker:
                        fmt.marker_closed(serial)
            kind = _KIND.get(name, _RECONSTRUCTS)
            if kind & _POPS:
                stale = True
            if stale and kind & _RECONSTRUCTS:
                fmt.clones += fmt.live
                stale = False
                if fmt.clones > MAX_CLONES:
                    break
            if kind & _FORMATS:
                fmt.open(name, attrs, tags, specials[-1][1] if specials else -1)
            if name in _VOID:
                continue
            if name == "option":
                options += 1
                if options > MAX_OPTIONS:
                    break
            elif name == "svg" or name == "math":
                foreign = True
            push(name)  # "/>" does not close an HTML element (§13.2.6.4.7): an open anyway
            if kind & _SPECIALS:
                marker = bool(kind & _MARKS)
                specials.append((len(stack) - 1, tags, marker))
                if marker:
                    fmt.marker(tags)
            if name in _RAW:
                stop = _raw_end(name, text, m.end())
                stop = n if stop < 0 else stop
                if foreign:
                    for _ in _OPEN_RE.finditer(text, m.end(), stop):
                        push("?")
                resume = last = stop
            if len(stack) > deepest:
                deepest = len(stack)
                if deepest > MAX_DEPTH:
                    break  # hostile already: the rest need not be read
        else:
            break
        if (
            deepest > MAX_DEPTH
            or options > MAX_OPTIONS
            or attributes > MAX_ATTRIBUTES
            or fmt.clones > MAX_CLONES
        ):
            break
        tokens = token_re.finditer(text, resume)
    return Shape(deepest, options, attributes, tags, fmt.clones)


# What a flattened page keeps: the elements links come from (and <img> for the alt text of
# an anchor, <frameset> without which <frame> is ignored), with the attributes they are read
# by; an element with an onclick becomes a <wbr> (void) that keeps it. Everything else goes
# but its text, and so does the content of RCDATA/RAWTEXT elements other than <script>.
_KEEP: dict[str, frozenset[str]] = {
    "a": frozenset({"href", "onclick"}),
    "area": frozenset({"href", "alt", "onclick"}),
    "frame": frozenset({"src", "name", "title"}),
    "frameset": frozenset(),
    "iframe": frozenset({"src", "title"}),
    "link": frozenset({"rel", "href", "title"}),
    "meta": frozenset({"http-equiv", "content", "charset"}),
    "base": frozenset({"href"}),
    "img": frozenset({"alt", "onclick"}),
    "script": frozenset({"src"}),
}
_KEEP_END = frozenset({"a", "frameset"})
_ONCLICK = frozenset({"onclick"})


def _rebuild(name: str, attrs: str, wanted: frozenset[str]) -> str:
    # The wanted attributes, the first of each name (§13.2.5.33: later ones are dropped),
    # written as they were: values keep their character references for lexbor to decode.
    kept: dict[str, str] = {}
    if attrs.strip("\t\n\f\r /"):
        for m in _ATTR_RE.finditer(attrs):
            key = m.group(1).lower()
            if key in wanted and key not in kept:
                kept[key] = m.group()
    return "<" + name + "".join(" " + a for a in kept.values()) + ">"


def flatten(text: str) -> str:
    """``text`` without the elements that carry no link: a flat tree, the same links.

    Lexbor reads what this writes, not the page: text (which holds no tag, every "<" that
    starts one having been read as a token here), the kept tags rebuilt with their wanted
    attributes, and the content of scripts, which the script-data states above end where
    lexbor ends them."""
    out: list[str] = []
    append = out.append
    pos = 0
    n = len(text)
    foreign = False  # met <svg> or <math>: what follows may be foreign content
    while pos < n:
        m = _TOKEN_RE.search(text, pos)
        if m is None:
            break
        append(text[pos : m.start()])
        pos = m.end()
        name = m.group(2)
        if name is None:
            token = m.group()
            if token[2:9].lower() == "doctype":
                append(token)  # quirks mode decides some of the tree builder's rules
            continue
        lower = name.lower()
        attrs = m.group(3)
        if attrs is None:
            attrs = m.group(4)
        if m.group(1):  # an end tag
            if lower in _KEEP_END:
                append(f"</{lower}>")
            continue
        wanted = _KEEP.get(lower)
        if wanted is not None:
            append(_rebuild(lower, attrs, wanted))
        elif "onclick" in attrs.lower():
            append(_rebuild("wbr", attrs, _ONCLICK))
        if lower == "svg" or lower == "math":
            foreign = True
        # In foreign content <style>, <title> … are elements like any other, their content
        # markup (an HTML tag there leaves the foreign content): read it as markup.
        if lower in _RAW and (lower in ("script", "iframe", "plaintext") or not foreign):
            end = _raw_end(lower, text, pos)
            stop = n if end < 0 else end
            if lower == "script":
                append(text[pos:stop])
                append("</script>")
            elif lower == "iframe":
                append("</iframe>")
            pos = stop  # its end tag is then read (and dropped) as any other
    append(text[pos:])
    return "".join(out)
