"""extract_links: every tag and kind of seed 004 Table 13, base, entities, scripts, charset."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.extract import Extraction, LinkKind, extract_links, parse_refresh
from dustless.url import resolve

A, F, H = LinkKind.ANCHOR, LinkKind.FRAME, LinkKind.OTHER
DOC = "http://ex.test/dir/page.html"


def links(html: str | bytes, url: str = DOC, ct: str | None = "text/html") -> Extraction:
    body = html.encode("utf-8") if isinstance(html, str) else html
    return extract_links(body, url, ct)


def pairs(e: Extraction) -> list[tuple[str, LinkKind]]:
    return [(link.url, link.kind) for link in e.links]


# -- one fixture per element ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ('<a href="a.html">x</a>', [("http://ex.test/dir/a.html", A)]),
        ('<map><area href="/m" alt="M"></map>', [("http://ex.test/m", H)]),
        ('<iframe src="//cdn.test/i"></iframe>', [("http://cdn.test/i", H)]),
        ('<script src="s.js"></script>', [("http://ex.test/dir/s.js", H)]),
        ('<link rel="next" href="p2.html">', [("http://ex.test/dir/p2.html", H)]),
        ('<link rel="Alternate canonical" href="/c">', [("http://ex.test/c", H)]),
        ('<link rel="stylesheet" href="s.css">', []),  # a resource, not a document
        ('<meta http-equiv="refresh" content="0; url=/r">', [("http://ex.test/r", H)]),
        ("<div onclick=\"location.href='/o'\">x</div>", [("http://ex.test/o", H)]),
        (
            "<span onclick=\"window.open('w.html','_blank')\">x</span>",
            [("http://ex.test/dir/w.html", H)],
        ),
        ("<a href=\"javascript:location.replace('/j')\">x</a>", [("http://ex.test/j", H)]),
        ('<a href="https://other.test/">x</a>', [("https://other.test/", A)]),
    ],
)
def test_each_element_gives_its_kind(html: str, expected: list[tuple[str, LinkKind]]) -> None:
    assert pairs(links(f"<html><body>{html}</body></html>")) == expected


def test_frames_in_a_frameset_are_f_links() -> None:
    e = links('<frameset><frame src="top.html" name="top"><frame src="/main"></frameset>')
    assert pairs(e) == [("http://ex.test/dir/top.html", F), ("http://ex.test/main", F)]
    assert e.links[0].text == "top"
    assert e.link_kinds == "00f"


def test_counts_and_link_kind_code_follow_table_13() -> None:
    e = links(
        '<a href="1">1</a><a href="2">2</a><iframe src="3"></iframe>'
        '<a href="javascript:void(0)">js</a><a href="mailto:x@y.test">m</a>'
    )
    assert e.counts == {F: 0, A: 2, H: 1}
    assert e.link_kinds == "ha0"
    assert links("<p>no links</p>").link_kinds == "000"


def test_every_occurrence_kept_in_document_order() -> None:
    e = links('<a href="x">one</a><iframe src="y"></iframe><a href="x">two</a>')
    assert [(link.raw, link.text) for link in e.links] == [("x", "one"), ("y", ""), ("x", "two")]


# -- base, entities, whitespace -----------------------------------------------------------------
def test_base_href_applies_to_every_link_even_before_it() -> None:
    e = links('<a href="before">b</a><base href="http://b.test/x/"><a href="after">a</a>')
    assert e.base == "http://b.test/x/"
    assert [link.url for link in e.links] == ["http://b.test/x/before", "http://b.test/x/after"]


def test_relative_base_resolves_against_document_and_first_base_wins() -> None:
    e = links('<head><base href="../up/"><base href="/other/"></head><a href="z">z</a>')
    assert e.base == "http://ex.test/up/"
    assert e.links[0].url == "http://ex.test/up/z"


def test_non_http_base_is_ignored() -> None:
    e = links('<base href="javascript:alert(1)"><a href="z">z</a>')
    assert e.base == DOC
    assert e.links[0].url == "http://ex.test/dir/z"


def test_entities_and_surrounding_whitespace() -> None:
    e = links('<a href="\n  q?a=1&amp;b=2&#x26;c=3  \t">\n  Hello\n <b>big</b>   world </a>')
    (link,) = e.links
    assert link.url == "http://ex.test/dir/q?a=1&b=2&c=3"
    assert link.raw == "\n  q?a=1&b=2&c=3  \t"
    assert link.text == "Hello big world"


def test_image_alt_is_the_text_of_an_image_link() -> None:
    assert links('<a href="/"><img src="l.png" alt="Logo"></a>').links[0].text == "Logo"


def test_without_anchor_text_the_links_are_the_same_and_their_text_empty() -> None:
    html = (
        '<base href="/b/"><a href="x">one <b>two</b></a><a href="/y"><img alt="Logo"></a>'
        '<iframe src="f" title="T"></iframe><p onclick="location.href=\'/o\'">p</p>'
    )
    full = links(html)
    bare = extract_links(html.encode(), DOC, "text/html", anchor_text=False)
    assert pairs(bare) == pairs(full) == [
        ("http://ex.test/b/x", A), ("http://ex.test/y", A), ("http://ex.test/b/f", H),
        ("http://ex.test/o", H),
    ]  # fmt: skip
    assert [link.text for link in full.links] == ["one two", "Logo", "T", ""]
    assert [link.text for link in bare.links] == ["", "", "T", ""]


def test_one_css_engine_serves_every_document_and_thread() -> None:
    # The selector engine is kept per thread and reused: documents parsed one after the
    # other, and at once in threads, each get their own nodes, in document order.
    from concurrent.futures import ThreadPoolExecutor

    def page(i: int) -> list[str]:
        html = "".join(
            f'<a href="/{i}/{j}">{j}</a><script src="/s{i}"></script>' for j in range(50)
        )
        return [link.url for link in links(html).links]

    expected = [
        [u for j in range(50) for u in (f"http://ex.test/{i}/{j}", f"http://ex.test/s{i}")]
        for i in range(40)
    ]
    assert [page(i) for i in range(40)] == expected
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(page, range(40))) == expected


def test_unresolvable_and_non_http_links_are_skipped() -> None:
    e = links(
        '<a href="http://[::1">bad</a><a href="mailto:a@b.test">m</a>'
        '<a href="ftp://f.test/">f</a><a href="data:text/html,x">d</a><a href="ok">ok</a>'
    )
    assert [link.url for link in e.links] == ["http://ex.test/dir/ok"]


def test_a_stray_percent_in_a_link_is_followed_as_percent_25() -> None:
    # Browsers follow `?q=100%`; dropping it would lose the page (RFC 3986 §2.4: a data "%"
    # is written %25).
    e = links('<a href="/search?q=100%">a</a><a href="sale-50%-off.html">b</a>')
    assert [link.url for link in e.links] == [
        "http://ex.test/search?q=100%25",
        "http://ex.test/dir/sale-50%25-off.html",
    ]


# -- scripts (seed 002 Fig. 6 and 8) ------------------------------------------------------------
def test_javascript_links_and_onclick_text_are_kept_as_scripts() -> None:
    e = links(
        '<a href="javascript:show_detail(42)">d</a>'
        '<a href="#" onclick="pBlog(\'541293/C/860/869/10599/0\');">b</a>'
    )
    assert e.scripts == ("javascript:show_detail(42)", "pBlog('541293/C/860/869/10599/0');")
    assert [link.url for link in e.links] == ["http://ex.test/dir/page.html#"]


# -- meta refresh -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "url"),
    [
        ("0; url=/a", "/a"),
        ("5;URL='b.html'", "b.html"),
        ('3, url = "c d"', "c d"),
        ("0;e.html", "e.html"),
        ("  1.5 ; URL=f  ", "f"),
        ("0", None),
        ("", None),
        ("soon; url=/x", None),
        ("0 url=/x", None),
    ],
)
def test_parse_refresh(content: str, url: str | None) -> None:
    assert parse_refresh(content) == url


# -- charset --------------------------------------------------------------------------------------
def test_charset_from_content_type() -> None:
    body = '<a href="/k">한국어</a>'.encode("euc-kr")
    assert links(body, ct="text/html; charset=EUC-KR").links[0].text == "한국어"


def test_charset_from_meta_prescan() -> None:
    body = '<meta charset="euc-kr"><a href="/k">웹 로봇</a>'.encode("euc-kr")
    assert links(body, ct="text/html").links[0].text == "웹 로봇"
    body = (
        '<meta http-equiv="Content-Type" content="text/html; charset=ks_c_5601-1987">'
        '<a href="/k">수집</a>'
    ).encode("cp949")
    assert links(body, ct=None).links[0].text == "수집"


def test_bom_wins_over_declarations() -> None:
    body = '<a href="/u">ü</a>'.encode("utf-16")  # with BOM
    assert links(body, ct="text/html; charset=iso-8859-1").links[0].text == "ü"


@pytest.mark.parametrize(
    "ct",
    [
        "text/html; charset=rot13",
        "text/html; charset=hex",
        "charset=nope",
        "text/html; charset=utf-7",
        "text/html; charset=idna",
        "text/html; charset=undefined",
    ],
)
def test_bad_or_non_text_charsets_fall_back(ct: str) -> None:
    assert links('<a href="/x">é</a>', ct=ct).links[0].text == "é"


def test_undeclared_non_utf8_falls_back_to_windows_1252() -> None:
    assert links('<a href="/x">café</a>'.encode("cp1252"), ct=None).links[0].text == "café"


# -- robustness and agreement with resolve ------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(body=st.binary(max_size=2000), ct=st.one_of(st.none(), st.text(max_size=40)))
def test_arbitrary_bytes_never_raise(body: bytes, ct: str | None) -> None:
    e = extract_links(body, DOC, ct)
    assert all(link.url.startswith(("http://", "https://")) for link in e.links)
    assert sum(e.counts.values()) == len(e.links)


_FRAGMENTS = st.sampled_from(
    ["<a href=", "<frame src=", "<base href=", "<iframe src=", "<meta http-equiv=refresh content=",
     '"', "'", ">", "</a>", "&amp;", "&#", "javascript:", "onclick=", "/", "?", "#", "..", "\\",
     "\t", "\n", "x", "é", "한", "http://", "<", "%", "%zz", ":", "//"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_FRAGMENTS, max_size=40))
def test_html_like_soup_never_raises(parts: list[str]) -> None:
    extract_links("".join(parts).encode("utf-8"), DOC, "text/html; charset=utf-8")


_REF = st.text(alphabet="ab./?#:%\\\t@-_1", max_size=12) | st.sampled_from(
    ["/", "//h.test/p", "http://h.test/a/../b", "?q", "#f", "", "../../x", "HTTP://Up.test/"]
)
_BASES = st.sampled_from(
    [
        "http://ex.test/dir/page.html",
        "http://ex.test/dir/page.html?q=1#f",
        "https://u:p@ex.test:8443/a/b/",
        "http://ex.test",
        "http://ex.test/a;b/c",
    ]
)


@settings(max_examples=400, deadline=None)
@given(base=_BASES, refs=st.lists(_REF, min_size=1, max_size=5))
def test_shared_cache_agrees_with_resolve(base: str, refs: list[str]) -> None:
    """The cross-page resolution cache must never change an answer."""
    html = "".join(
        f'<a href="{r.replace("&", "&amp;").replace(chr(34), "&quot;")}">x</a>' for r in refs
    )
    for _ in range(2):  # second round is answered from the cache
        got = [link.url for link in extract_links(html.encode(), base, "text/html").links]
        want = []
        for r in refs:
            try:
                u = resolve(base, r.strip(" \t\n\r\f"))
            except ValueError:
                continue
            if u.startswith(("http://", "https://")):
                want.append(u)
        assert got == want


def test_inline_script_navigation_is_an_h_link() -> None:
    e = links('<script>if (x) { window.open("/pop.html", "_blank"); }</script>')
    assert pairs(e) == [("http://ex.test/pop.html", H)]
    assert e.scripts == ()  # only javascript: URLs and onclick texts are kept


def test_a_literal_that_is_only_a_prefix_is_not_a_link() -> None:
    e = links(
        "<script>function show_detail(id) { location.href = 'detail.aspx?per_id=' + id; }"
        '</script><a href="javascript:show_detail(7)">7</a>'
    )
    assert e.links == ()
    assert e.scripts == ("javascript:show_detail(7)",)


# -- the fast path of plain references (must be exactly resolve) --------------------------

_FAST_BASES = [
    "http://ex.test/dir/page.html",
    "http://ex.test/dir/page.html?q=1#f",
    "https://u:p@ex.test:8443/a/b/",
    "http://ex.test",
    "http://ex.test/a;b/c",
    "http://EX.Test:80/a/./b/../c.html",
    "http://ex.test/%7Efoo/bar%2fx",
    "https://ex.test:443",
    "http://ex.test/a b/c",
    "http://[::1]:8080/x/y",
    "http://1.2.3.4/a/",
    "http://xn--bcher-kva.test/a/b",
    "http://ex.test:0080/x",
    "http://ex.test//a//b",
]
_PLAINISH = st.text(alphabet="aZ09._~-/?=&%:#@\\ +", max_size=14)
_PLAIN = st.text(alphabet="aZ09._~-/?=&", max_size=16)  # mostly takes the fast path
_FAST_REFS = (
    _PLAINISH
    | _PLAIN
    | st.builds(lambda p: "/" + p, _PLAIN)
    | st.builds(lambda p: "http://ex.test" + p, _PLAIN)
    | st.builds(lambda p: "/" + p, _PLAINISH)
    | st.builds(
        lambda scheme, host, port, path: f"{scheme}://{host}{port}{path}",
        st.sampled_from(["http", "https", "HTTP", "ftp"]),
        st.sampled_from(
            ["h.test", "H.test", "h.test.", "1.2.3", "0x7f.1", "xn--a", "a..b", "a-", "ex.test"]
        ),
        st.sampled_from(["", ":80", ":443", ":8080", ":00080", ":65536", ":"]),
        st.builds(lambda p: "/" + p, _PLAINISH) | _PLAINISH,
    )
    | st.sampled_from(["/", ".", "..", "./a", "a/..", "a/./b", "/a/.", "a//b", "~x", "-", "a?"])
)


@settings(max_examples=1500, deadline=None)
@given(base=st.sampled_from(_FAST_BASES), ref=_FAST_REFS)
def test_fast_path_equals_resolve(base: str, ref: str) -> None:
    from dustless.extract._links import _BaseScope, _fast_resolve

    fast = _fast_resolve(resolve, _BaseScope(base), ref)
    if fast is not None:
        assert fast == resolve(base, ref)


@pytest.mark.parametrize("base", _FAST_BASES)
def test_fast_path_is_taken_for_plain_links_and_agrees(base: str) -> None:
    from dustless.extract._links import _BaseScope, _fast_resolve

    refs = [
        "/gallery/chart-0.html",
        "page-2.html",
        "sub/dir/",
        "/",
        "a.html?id=3&x=y",
        "http://site3.test:46397/news/",
        "https://ex.test/a/b.html",
        "http://ex.test",
    ]
    taken = 0
    for ref in refs:
        fast = _fast_resolve(resolve, _BaseScope(base), ref)
        if fast is not None:
            taken += 1
            assert fast == resolve(base, ref)
    if base in ("http://ex.test/dir/page.html", "http://ex.test"):
        assert taken == len(refs)  # the common case does not fall back to resolve


def test_fast_link_is_a_link() -> None:
    import dataclasses

    from dustless.extract import Link
    from dustless.extract._links import _link

    # _link fills the slots directly: only right while Link's __init__ does nothing more.
    assert not hasattr(Link, "__post_init__")
    assert [f.name for f in dataclasses.fields(Link)] == ["url", "kind", "text", "raw"]
    made = _link("http://a.test/", A, "t", " r ")
    assert made == Link("http://a.test/", A, "t", " r ")
    assert hash(made) == hash(Link("http://a.test/", A, "t", " r "))
    assert repr(made) == repr(Link("http://a.test/", A, "t", " r "))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.url = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    "html",
    [
        '<BASE HREF="http://b.test/d/"><a href="x">x</a>',
        '<bAsE href="http://b.test/d/"><a href="x" OnClick="location.href=\'/o\'">x</a>',
        '<p ONCLICK="window.open(\'/w\')">p</p><a href="y">y</a>',
        '<a href="z">z</a><!-- <base href="http://c.test/"> onclick -->',
    ],
)
def test_base_and_onclick_in_any_case(html: str) -> None:
    # extract_links skips the <base>/onclick queries when the source cannot hold them;
    # the result must be what the queries find.
    from selectolax.lexbor import LexborHTMLParser

    got = links(html)
    parser = LexborHTMLParser(html)
    first = parser.css_first("base[href]")
    assert got.base == (resolve(DOC, first.attrs["href"]) if first is not None else DOC)
    onclicks = [n.attrs["onclick"] for n in parser.css("[onclick]")]
    assert [s for s in got.scripts if s in onclicks] == onclicks


# -- <link rel>: hyperlinks to documents, not resources of this one ------------------------------
@pytest.mark.parametrize(
    "rel",
    [
        # HTML §4.6.7's hyperlink types allowed on <link>
        "search", "alternate", "author", "canonical", "help", "license", "next", "prev",
        "privacy-policy", "terms-of-service",
        # HTML 4.01 §6.12 and the registered extensions that name documents
        "start", "contents", "index", "glossary", "copyright", "chapter", "section",
        "subsection", "appendix", "first", "last", "up", "home", "archives", "amphtml",
        "shortlink", "previous", "SEARCH", " next  prev ",
    ],
)  # fmt: skip
def test_link_relations_that_name_documents_are_followed(rel: str) -> None:
    html = f'<html><head><link rel="{rel}" href="/doc" title="T"></head></html>'
    assert pairs(links(html)) == [("http://ex.test/doc", H)]


@pytest.mark.parametrize(
    "rel",
    [
        "stylesheet", "alternate stylesheet", "icon", "shortcut icon", "apple-touch-icon",
        "manifest", "preload", "prefetch", "modulepreload", "preconnect", "dns-prefetch",
        "pingback", "alternate icon", "", "nofollow", "unknown-thing",
    ],
)  # fmt: skip
def test_link_relations_that_name_resources_are_not(rel: str) -> None:
    html = f'<html><head><link rel="{rel}" href="/res"></head></html>'
    assert pairs(links(html)) == []
