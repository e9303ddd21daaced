"""``apply`` as the normalizer needs it: idempotent, and it never raises, whatever the URL."""

from __future__ import annotations

from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from dustless.rules import (
    AddrType,
    AddSlash,
    Anchor,
    DropParam,
    FixParam,
    HostRedirect,
    PageType,
    RuleSet,
    SiteScript,
    Substitute,
    UrlPattern,
    load_script,
    page_category,
)

FIG6 = Path(__file__).parent / "data" / "fig6.xml"
RULES = load_script(FIG6).rules + RuleSet(
    (
        SiteScript("bare", ("web.com",), rules=(HostRedirect("www.web.com"),)),
        SiteScript(
            "search",
            ("www.web.com",),
            patterns=(
                UrlPattern(
                    PageType.LIST,
                    "javascript:search('{0}', {1})",
                    "http://www.web.com/검색/{0}?p={1}",
                    AddrType.JAVASCRIPT,
                ),
            ),
        ),
        SiteScript(
            "learned",
            ("www.web.com",),
            rules=(
                Substitute("/story?id=", "/story_"),
                Substitute("aa", "a"),
                Substitute("/a", "/b"),
                Substitute("/b", "/a"),  # undoes the one above: apply must stay idempotent
                DropParam("sid"),
                FixParam("lang", "en"),
                AddSlash("/dir"),
                AddSlash(),
            ),
        ),
    )
)

# Pieces that exercise the patterns and rules, mixed with arbitrary text.
pieces = st.sampled_from(
    [
        "http://",
        "HTTP://",
        "javascript:",
        "www.web.com",
        "web.com",
        ":8080",
        "/list.aspx",
        "/detail.aspx",
        "?",
        "&",
        "=",
        "#",
        "%",
        "%28",
        "cate_id",
        "page",
        "per_id",
        "sid",
        "lang",
        "/story?id=",
        "/dir",
        "/a",
        "/b",
        "aa",
        "show_detail(",
        "search(",
        ",",
        "/%EA%B2%80%EC%83%89/",
        ")",
        "'",
        '"',
        "{0}",
        "1",
        "42",
        " ",
        "\n",
        "인물",
        "@",
        "[::1]",
    ]
)
urls = st.one_of(
    st.text(max_size=40),
    st.lists(st.one_of(pieces, st.text(max_size=3)), max_size=14).map("".join),
)


@settings(max_examples=400, deadline=None)
@given(urls)
@example("http://www.web.com/list.aspx?cate_id=1&page=2&sid=3#x")
@example("javascript:show_detail(15)")
@example("http://web.com/dir?sid=1&lang=fr")
@example("http://www.web.com/a")
def test_apply_is_idempotent_and_never_raises(url):
    once = RULES.apply(url)
    assert isinstance(once, str)
    assert RULES.apply(once) == once
    for site in RULES.sites:
        assert site.apply(site.apply(url)) == site.apply(url)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30), st.lists(st.tuples(urls, st.text(max_size=5)), max_size=5))
def test_link_helpers_never_raise(page, links):
    result = RULES.filter_links(page, [u for u, _ in links])
    assert result.before == len(links)
    RULES.javascript_links(page)
    RULES.match(page)
    page_category(page, [Anchor(u, t) for u, t in links])
