"""HTML → links, each with its kind (seed 004 Table 13), anchor text and raw attribute value.

Which element gives which kind (004 §4: "<frame> 태그에서 발견된 URL은 'f-URL', <a href> 태그에서
발견된 URL은 'a-URL', 그 외의 URL은 'h-URL'" — e.g. URLs found in JavaScript):

=====================================  =====
``<frame src>``                        ``f``
``<a href>``                           ``a``
``<area href>``, ``<iframe src>``,     ``h``
``<script src>``, ``<link href>`` (hyperlink relations only: ``next``, ``search``, ``alternate``
…, never a stylesheet or icon), ``<meta http-equiv=refresh>``,
navigation calls in inline ``<script>``, ``onclick`` and ``javascript:`` URLs
(``location.href = '…'``, ``window.open('…')``, ``location.assign/replace('…')``)
=====================================  =====

``javascript:`` hrefs and ``onclick`` texts are kept verbatim in ``Extraction.scripts`` for the
pattern scripts of seed 002 (Fig. 6 ``javascript:show_detail({0})``, Fig. 8), never as links.
Only http(s) results are returned; a reference that ``dustless.url.resolve`` rejects is skipped.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterable

from selectolax.lexbor import LexborCSSSelector, LexborHTMLParser, LexborNode

from dustless.extract._canonical import one_canonical
from dustless.extract._charset import decode_document
from dustless.extract._guard import DEFAULT_MAX_TAGS
from dustless.extract._maincontent import LINK_IDS, LINK_TAGS
from dustless.extract._prepare import prepare
from dustless.extract._types import Extraction, Link, LinkKind
from dustless.extract._visible import tree_text
from dustless.kinds import DOCUMENT_KINDS

__all__ = ["extract_links", "parse_refresh"]

_A, _F, _H = LinkKind.ANCHOR, LinkKind.FRAME, LinkKind.OTHER
# (kind, letter) pairs: ``LinkKind.value`` and iterating the enum are Python-level in 3.11
# (~0.4 µs a ``.value``, measured), once per link in the hot loop.
_KINDS = tuple((kind, kind.value) for kind in DOCUMENT_KINDS)
# One CSS query for the link elements, answered in document order (lexbor repeats a node
# matching two selectors; duplicates are dropped by node id below), and one for onclick.
_SELECTOR = "a[href], frame[src], area[href], iframe[src], script, link[href], meta[http-equiv]"
# <link rel> keywords that make the element a hyperlink to another document, not a resource
# of this one. HTML §4.6.7's "hyperlink" link types allowed on <link> (alternate, author,
# canonical, help, license, next, prev, privacy-policy, search, terms-of-service); HTML 4.01
# §6.12's document relations (start, contents, index, glossary, copyright, chapter, section,
# subsection, appendix, bookmark); and the "hyperlink" extensions of the registry HTML points
# to (microformats.org/wiki/existing-rel-values: first, last, up, home, archives, toc,
# amphtml, shortlink, and "previous" as old pages spell "prev").
_DOC_RELS = frozenset(
    {
        "alternate", "author", "canonical", "help", "license", "next", "prev", "privacy-policy",
        "search", "terms-of-service",
        "start", "contents", "index", "glossary", "copyright", "chapter", "section",
        "subsection", "appendix", "bookmark",
        "first", "last", "up", "home", "archives", "toc", "amphtml", "shortlink", "previous",
    }
)  # fmt: skip
# Keywords that make it an external resource of this document (HTML §4.6.7 "external
# resource" types and the icon extensions): "alternate stylesheet" is a stylesheet.
_RESOURCE_RELS = frozenset(
    {
        "stylesheet", "icon", "shortcut", "apple-touch-icon", "apple-touch-icon-precomposed",
        "mask-icon", "manifest", "modulepreload", "pingback", "preconnect", "prefetch",
        "preload", "prerender", "dns-prefetch", "expect",
    }
)  # fmt: skip
# Navigation calls in inline JavaScript whose whole argument is one quoted literal: a
# literal followed by ``+`` (``location.href = 'detail.aspx?id=' + id``) is only a prefix,
# and following it would invent a URL nobody links to.
_JS_NAV = re.compile(
    r"""(?:location(?:\.href)?\s*=|location\.(?:assign|replace)\s*\(|window\.open\s*\()"""
    r"""\s*(['"])([^'"]*?)\1(?=\s*(?:[),;}]|$))""",
    re.IGNORECASE,
)
_MAX_TEXT = 1000  # anchor text beyond this is of no use and costs memory
_SPACE = " \t\n\f\r"  # ASCII whitespace (HTML §2.3.1 / WHATWG URL "strip")

# dustless.url.resolve, reference resolution (RFC 3986 §5): (base, reference[, encoding]) -> URL.
ResolveFn = Callable[..., str]

# Link(...) through its slots, as the frozen dataclass's __init__ does with object.__setattr__
# per field: 0.44 µs instead of 0.65 µs a link (measured), ~35 links a page.
# test_fast_link_is_a_link checks it builds what Link() builds.
_new = object.__new__
_slot = Link.__dict__  # the member descriptors of its __slots__
_set_url, _set_kind, _set_text, _set_raw = (
    _slot[f].__set__ for f in ("url", "kind", "text", "raw")
)


def _link(url: str, kind: LinkKind, text: str, raw: str) -> Link:
    link: Link = _new(Link)
    _set_url(link, url)
    _set_kind(link, kind)
    _set_text(link, text)
    _set_raw(link, raw)
    return link


_ENGINES = threading.local()


def _select(node: LexborNode | None, query: str) -> list[LexborNode]:
    """``node.css(query)`` through one CSS engine per thread. selectolax makes a CSS parser
    and selector engine for each document at its first query (and frees it with the
    document); kept per thread, it is made once."""
    engine: LexborCSSSelector | None = getattr(_ENGINES, "engine", None)
    if engine is None:
        engine = _ENGINES.engine = LexborCSSSelector()  # type: ignore[no-untyped-call]
    return [] if node is None else engine.find(query, node)


@functools.cache
def _resolve_fn() -> ResolveFn:
    """WHATWG URL parsing against a base, from the url package: imported at the first call
    (not with this module), then kept, since an import statement per page is not free."""
    from dustless.url import resolve

    return resolve


def parse_refresh(content: str) -> str | None:
    """The URL of a ``<meta http-equiv=refresh content=…>`` value, or None.

    HTML §4.2.5.3 "shared declarative refresh steps": skip whitespace, the time (digits and
    dots), then ``;`` or ``,`` and whitespace, then an optional ``url`` ``=``, then the URL —
    unquoted, or up to a matching quote.
    """
    s = content.lstrip(_SPACE)
    i = 0
    while i < len(s) and (s[i].isdigit() or s[i] == "."):
        i += 1
    if i == 0:
        return None
    s = s[i:].lstrip(_SPACE)
    if s[:1] in (";", ","):
        s = s[1:].lstrip(_SPACE)
    elif s:
        return None
    if s[:3].lower() == "url":
        rest = s[3:].lstrip(_SPACE)
        if rest[:1] == "=":
            s = rest[1:].lstrip(_SPACE)
    if s[:1] in ("'", '"'):
        quote, s = s[0], s[1:]
        end = s.find(quote)
        if end >= 0:
            s = s[:end]
    s = s.strip(_SPACE)
    return s or None


# Resolution results shared across pages. Most link occurrences on a site repeat (navigation,
# and every page is linked from several others), so caching by "the part of the base the
# result depends on" saves most ``resolve`` calls. The cache changes no result — the function
# stays pure in effect — and is cleared when full, which bounds its memory.
_CACHE: dict[tuple[str, str], str | None] = {}
_CACHE_SIZE = 100_000
# Characters after which WHATWG parsing can change the reference's shape (tabs and newlines
# are deleted, backslashes are slashes in special schemes): such references key on the full base.
_QUIRKY = re.compile(r"[\t\n\r\\]")

# Fast path for the commonest references, taken where the cache misses: a plain path (and
# query) of unreserved characters, without dot segments, empty segments, escapes or anything
# WHATWG or the rfc3986 normalizer would rewrite. Such a reference resolves to a prefix that
# depends on the base alone, plus the reference verbatim; the prefix itself comes from
# ``resolve`` (one probe per base directory or origin, memoized), so whatever the base's
# spelling, the answer is what ``resolve`` gives (test_fast_path_equals_resolve). A
# ``resolve`` call (ada join, then the rfc3986 normalizer) costs ~10 µs; this ~1 µs.
_SEG = r"(?!\.\.?(?:[/?]|$))[A-Za-z0-9._~-]+"
_PLAIN_TAIL = rf"(?:/{_SEG})*/?(?:\?[A-Za-z0-9._~=&-]*)?"
_PLAIN_RELATIVE = re.compile(rf"{_SEG}{_PLAIN_TAIL}")
_PLAIN_ABSOLUTE_PATH = re.compile(rf"(?:/{_SEG})+/?(?:\?[A-Za-z0-9._~=&-]*)?|/")
# An absolute http(s) URL of a plain lower-case host (optional port), then a plain path.
_PLAIN_URL = re.compile(
    rf"(https?://[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::[0-9]{{1,5}})?)((?:/{_SEG})*/?)"
    rf"(\?[A-Za-z0-9._~=&-]*)?"
)
_PREFIXES: dict[tuple[str, str], str | None] = {}
_PROBE = "x"


def _prefix(resolve: ResolveFn, base: str, probe: str) -> str | None:
    """What ``resolve`` puts before a plain reference ``probe + "x"`` at ``base``, or None.

    ``probe``: ``""`` for path-relative references (the base's directory), ``"/"`` for
    path-absolute ones (the origin), ``"abs"`` for an absolute URL ``base`` (its origin,
    which must come back unchanged from ``resolve``).
    """
    key = (base, probe)
    try:
        return _PREFIXES[key]
    except KeyError:
        pass
    try:
        if probe == "abs":
            got = resolve("", base + "/" + _PROBE)
            prefix: str | None = base if got == base + "/" + _PROBE else None
        else:
            got = resolve(base, probe + _PROBE)
            ok = got.startswith(("http://", "https://")) and got.endswith("/" + _PROBE)
            prefix = got[: -len(_PROBE) - len(probe)] if ok else None
    except ValueError:
        prefix = None
    if len(_PREFIXES) >= _CACHE_SIZE:
        _PREFIXES.clear()
    _PREFIXES[key] = prefix
    return prefix


def _fast_resolve(resolve: ResolveFn, scope: _BaseScope, ref: str) -> str | None:
    """``resolve(scope.base, ref)`` for a plain reference, or None to ask ``resolve``."""
    first = ref[:1]
    if first == "/":
        if _PLAIN_ABSOLUTE_PATH.fullmatch(ref) is None:
            return None
        prefix = _prefix(resolve, scope.origin, "/")
        return None if prefix is None else prefix + ref
    if first == "h":
        m = _PLAIN_URL.fullmatch(ref)
        if m is None:
            return None
        origin, path, query = m.groups()
        if not path:
            path = "/"  # "http://h.test" is "http://h.test/"
        prefix = _prefix(resolve, origin, "abs")
        if prefix is None:
            return None
        return prefix + path + (query or "")
    if not first or _PLAIN_RELATIVE.fullmatch(ref) is None:
        return None
    prefix = _prefix(resolve, scope.dir, "")
    return None if prefix is None else prefix + ref


class _BaseScope:
    """Which part of the base a reference's resolution depends on (WHATWG URL §4.4 states)."""

    __slots__ = ("base", "dir", "origin", "scheme")

    def __init__(self, base: str) -> None:
        self.base = base
        colon = base.find("://")
        self.scheme = base[: colon + 1] if colon > 0 else base
        cut = len(base)
        for ch in "?#":
            i = base.find(ch)
            if 0 <= i < cut:
                cut = i
        start = colon + 3 if colon > 0 else cut
        slash = base.find("/", start, cut)
        self.origin = base[:slash] if slash >= 0 else base
        last = base.rfind("/", start, cut)
        self.dir = base[: last + 1] if last >= 0 else base


def _text(node: LexborNode) -> str:
    text: str = node.text(deep=True, separator="", strip=False)
    if not text or text.isspace():
        img = next(iter(_select(node, "img[alt]")), None)
        text = img.attrs.get("alt") or "" if img is not None else ""
    return " ".join(text.split())[:_MAX_TEXT]


def _resolve_new(
    key: tuple[str, str], ref: str, scope: _BaseScope, resolve: ResolveFn, encoding: str
) -> str | None:
    """The absolute http(s) URL of ``ref`` (None: none a browser would follow), kept in the
    cache under ``key`` (cleared whole when full: pages of one site share most links)."""
    absolute = _fast_resolve(resolve, scope, ref)
    if absolute is None:
        try:
            absolute = resolve(scope.base, ref, encoding)
        except ValueError:  # InvalidURL: a reference no browser would follow
            absolute = None
    if absolute is not None and not absolute.startswith(("http://", "https://")):
        absolute = None
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[key] = absolute
    return absolute


def _document_base(parser: LexborHTMLParser, url: str, encoding: str, resolve: ResolveFn) -> str:
    """The base links resolve against: the first ``<base href>`` (HTML §2.4.1 "document base
    URL": it sets the base for every link, even those before it), or ``url``. One that does
    not resolve to http(s) is ignored: links then resolve against the document URL."""
    first_base = next(iter(_select(parser.root, "base[href]")), None)
    if first_base is None:
        return url
    base_href = (first_base.attrs.get("href") or "").strip(_SPACE)
    try:
        candidate = resolve(url, base_href, encoding)
    except ValueError:
        return url
    return candidate if candidate.startswith(("http://", "https://")) else url


def _with_head(parser: LexborHTMLParser, walked: list[LexborNode]) -> list[LexborNode] | None:
    """The link elements of the document: its head's, then ``walked`` (its body's, from the
    main-content walk), in document order; None when the tree is not ``html`` of ``head``
    and ``body`` alone (a frameset: no body to walk), to be read with the CSS query."""
    root, head, body = parser.root, parser.head, parser.body
    if root is None or head is None or body is None:
        return None
    # every element is under one of the two (comments and spaces may sit beside them)
    kids = [n.mem_id for n in root.iter() if n.is_element_node]
    if kids != [head.mem_id, body.mem_id]:
        return None
    nodes = [n for n in head.traverse() if n.tag_id in LINK_IDS]
    nodes += walked
    return nodes


def _walk(
    nodes: Iterable[LexborNode],
    add: Callable[[str, LinkKind, str, str], None],
    links: list[Link],
    canonicals: list[str],
    *,
    anchor_text: bool,
) -> None:
    """Hand every link-bearing element's reference to ``add`` (its kind, its letter, its
    label); ``nodes`` holds each element once. ``canonicals`` gets the ``rel=canonical``
    links (RFC 6596)."""
    names = LINK_TAGS
    for node in nodes:
        # by tag id, an int (``node.tag`` makes a string each time)
        tag = names.get(node.tag_id) or node.tag
        # The attributes as a dict: one call that copies them all costs a third of one
        # ``node.attrs.get`` (a lookup by name in lexbor, ~0.6 µs; measured).
        attrs = node.attributes
        value: str | None
        if tag == "a":
            if (value := attrs.get("href")) is not None:
                add(value, _A, "a", _text(node) if anchor_text else "")
        elif tag == "frame":
            if (value := attrs.get("src")) is not None:
                add(value, _F, "f", attrs.get("name") or attrs.get("title") or "")
        elif tag == "area":
            if (value := attrs.get("href")) is not None:
                add(value, _H, "h", attrs.get("alt") or "")
        elif tag == "iframe":
            if (value := attrs.get("src")) is not None:
                add(value, _H, "h", attrs.get("title") or "")
        elif tag == "script":
            if (value := attrs.get("src")) is not None:
                add(value, _H, "h", "")
            else:
                # 004 §4: "자바 스크립트로부터 발견된 URL은 'h-URL'" — URLs found in scripts.
                code = node.text(deep=True)
                if code:
                    for m in _JS_NAV.finditer(code):
                        add(m.group(2), _H, "h", "")
        elif tag == "link":
            rels = set((attrs.get("rel") or "").lower().split())
            value = attrs.get("href")
            if value is not None and rels & _DOC_RELS and not rels & _RESOURCE_RELS:
                before = len(links)
                add(value, _H, "h", attrs.get("title") or "")
                if "canonical" in rels and len(links) > before:
                    canonicals.append(links[-1].url)
        elif tag == "meta" and (attrs.get("http-equiv") or "").strip().lower() == "refresh":
            value = parse_refresh(attrs.get("content") or "")
            if value is not None:
                add(value, _H, "h", "")


def _onclick(
    parser: LexborHTMLParser, add: Callable[[str, LinkKind, str, str], None], scripts: list[str]
) -> None:
    """The navigations written in ``onclick`` attributes (004 §4: URLs found in scripts are
    h-URLs); each attribute's code joins ``scripts``."""
    for node in _select(parser.root, "[onclick]"):
        onclick = node.attrs.get("onclick")
        if onclick:
            scripts.append(onclick)
            for m in _JS_NAV.finditer(onclick):
                add(m.group(2), _H, "h", "")


def extract_links(
    body: bytes,
    url: str,
    content_type: str | None = None,
    *,
    max_tags: int | None = DEFAULT_MAX_TAGS,
    with_text: bool = False,
    anchor_text: bool = True,
) -> Extraction:
    """Every link of an HTML document, resolved against its base, with kinds and counts.

    ``url`` is the document's own (final) URL; ``<base href>`` overrides it as the base
    (HTML §4.2.3, the first ``base`` with an ``href``). Never raises for any ``body``.

    The CPU a page costs is bounded by its size (see ``_guard``): markup nested too deep
    for the parser is read without its structure (``flattened``), and past ``max_tags``
    tags (None: no budget) only the page's first part is read (``over_budget``).

    With ``with_text``, the extraction also carries the document's visible text, read from the
    same tree (``Extraction.text``; equal to ``visible_text`` of the same body). Without
    ``anchor_text``, links carry no anchor text (``Link.text`` is ""): a text walk per link
    that only pattern scripts use.
    """
    resolve = _resolve_fn()
    text, encoding = decode_document(body, content_type)
    # The query of a link in a page that is not UTF-8 is encoded with the page's encoding
    # (WHATWG URL "encoding-parse"): a non-ASCII reference resolves differently per encoding.
    utf8 = encoding == "utf-8"
    text, flattened, over_budget = prepare(text, max_tags)
    parser = LexborHTMLParser(text)
    # A <base> element or an onclick attribute needs its name in the source, in some ASCII
    # case (lower() never loses one; it may find extra, which only costs the query). Most
    # pages have neither: skipping the two tree walks saves ~6 µs net of ~135 µs a page
    # (measured on test-web pages).
    lowered = text.lower()
    has_base = "<base" in lowered
    has_onclick = "onclick" in lowered
    main: str | None = None
    nodes: list[LexborNode] | None = None
    if with_text:
        # One walk of the tree for both: the main-content walk hands over the link elements
        # of the body as it meets them (a CSS query walked the whole tree again: ~6 µs a
        # test-web page, mostly parsing the selector, and ~35 µs a page of a manual).
        walked: list[LexborNode] = []
        main = tree_text(parser, lowered, walked)
        nodes = _with_head(parser, walked)
    if nodes is None:
        # each element once, in document order (lexbor repeats one matching two selectors)
        nodes = list({n.mem_id: n for n in _select(parser.root, _SELECTOR)}.values())

    base = _document_base(parser, url, encoding, resolve) if has_base else url
    links: list[Link] = []
    scripts: list[str] = []
    counts = {"f": 0, "a": 0, "h": 0}  # by kind value: enum hashing is slow in a hot loop
    scope = _BaseScope(base)
    cache = _CACHE
    canonicals: list[str] = []  # RFC 6596 declarations, for Extraction.canonical

    # The cache key of a reference: the part of the base its resolution depends on (WHATWG
    # URL §4.4 states), then the reference. Written inline, not as a method: a call per
    # link was a tenth of the link's cost.
    at_base, at_scheme, at_origin, at_dir = scope.base, scope.scheme, scope.origin, scope.dir
    quirky = _QUIRKY.search
    append = links.append

    def add(raw: str, kind: LinkKind, letter: str, label: str) -> None:
        ref = raw.strip(_SPACE)
        first = ref[:1]
        if first in "jJ" and ref[:11].lower() == "javascript:":
            scripts.append(ref)
            for m in _JS_NAV.finditer(ref):
                add(m.group(2), _H, "h", label)
            return
        if not first or first <= " " or quirky(ref):
            key = (at_base, ref)  # WHATWG parsing may change its shape: the whole base
        elif first == "h" and ref.startswith(("http://", "https://")):
            key = ("", ref)  # absolute: the base does not matter
        elif first == "/":
            # scheme-relative: only the scheme matters; path-absolute: the origin does
            key = (at_scheme, ref) if ref[1:2] == "/" else (at_origin, ref)
        elif first in "?#" or ":" in ref:
            key = (at_base, ref)  # query/fragment-only, or maybe a scheme
        else:
            key = (at_dir, ref)  # path-relative: the base up to its last "/"
        if not utf8 and not ref.isascii():
            key = (f"{encoding}\0{key[0]}", ref)
        try:
            absolute = cache[key]
        except KeyError:
            absolute = _resolve_new(key, ref, scope, resolve, encoding)
        if absolute is None:
            return
        link: Link = _new(Link)  # _link(absolute, kind, label, raw), without the call
        _set_url(link, absolute)
        _set_kind(link, kind)
        _set_text(link, label)
        _set_raw(link, raw)
        append(link)
        counts[letter] += 1

    _walk(nodes, add, links, canonicals, anchor_text=anchor_text)
    if has_onclick:
        _onclick(parser, add, scripts)

    return Extraction(
        tuple(links),
        base,
        {k: counts[v] for k, v in _KINDS},
        tuple(scripts),
        over_budget=over_budget,
        flattened=flattened,
        canonical=one_canonical(u.split("#", 1)[0] for u in canonicals),
        text=main,
    )
