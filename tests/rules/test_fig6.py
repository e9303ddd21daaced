"""Seed 002's own examples: Fig. 6 as printed, Figs. 2, 3, 7 and 8."""

from __future__ import annotations

from pathlib import Path

import pytest

from dustless.rules import (
    AddrType,
    PageType,
    SiteScript,
    UrlPattern,
    load_script,
    parse_script,
)

FIG6 = Path(__file__).parent / "data" / "fig6.xml"


@pytest.fixture(scope="module")
def fig6() -> SiteScript:
    return load_script(FIG6).rules.sites[0]


def test_fig6_as_printed_parses_with_a_warning_per_bare_ampersand():
    loaded = load_script(FIG6)
    assert [(w.line, "bare '&'" in w.message) for w in loaded.warnings] == [(5, True), (6, True)]
    assert str(loaded.warnings[0]).startswith(f"{FIG6}:5: warning: ")
    (site,) = loaded.rules.sites
    assert site.title == "사이트 이름"
    assert site.identities == ("www.web.com",)
    listing, detail = site.patterns
    assert listing == UrlPattern(
        PageType.LIST,
        "http://www.web.com/list.aspx?cate_id={0}&page={1}",
        "http://www.web.com/list.aspx?cate_id={0}&page={1}",
        AddrType.URL,
        "인물",
    )
    # The javascript originalAddr starts on its own line in the figure: whitespace is trimmed.
    assert detail.original == "javascript:show_detail({0})"
    assert detail.original_type is AddrType.JAVASCRIPT
    assert detail.target == "http://www.web.com/detail.aspx?per_id={0}"
    assert (detail.page_type, detail.category) == (PageType.DETAIL, "인물")


def test_escaped_ampersands_give_the_same_rules_and_no_warning():
    text = FIG6.read_text(encoding="utf-8").replace("&", "&amp;")
    loaded = parse_script(text)
    assert loaded.warnings == ()
    assert loaded.rules == load_script(FIG6).rules


def test_list_pattern_matches_and_keeps_its_two_values(fig6):
    m = fig6.match("http://www.web.com/list.aspx?cate_id=3&page=2")
    assert m is not None
    assert (m.page_type, m.category, m.category_id) == (PageType.LIST, "인물", "3")
    assert m.values == ((0, "3"), (1, "2"))
    assert m.value(1) == "2"
    assert m.target == "http://www.web.com/list.aspx?cate_id=3&page=2"


def test_javascript_link_becomes_the_detail_url(fig6):
    assert fig6.rewrite("javascript:show_detail(15)") == "http://www.web.com/detail.aspx?per_id=15"
    assert fig6.apply("javascript:show_detail(15)") == "http://www.web.com/detail.aspx?per_id=15"
    m = fig6.match("javascript:show_detail(15)")
    assert m is not None
    assert (m.page_type, m.category_id) == (PageType.DETAIL, "")


def test_detail_target_is_itself_a_detail_page(fig6):
    m = fig6.match("http://www.web.com/detail.aspx?per_id=15")
    assert m is not None
    assert m.page_type is PageType.DETAIL
    assert fig6.apply("http://www.web.com/detail.aspx?per_id=15") == (
        "http://www.web.com/detail.aspx?per_id=15"
    )


def test_unscripted_urls_are_other_and_unchanged(fig6):
    for url in ("http://www.web.com/about.html", "http://other.com/list.aspx?cate_id=1&page=1"):
        assert fig6.match(url) is None
        assert fig6.page_type(url) is PageType.OTHER
        assert fig6.apply(url) == url


def test_list_page_links_are_filtered_like_table_2(fig6):
    links = [
        "http://www.web.com/list.aspx?cate_id=3&page=2",
        "http://www.web.com/list.aspx?cate_id=3&page=3&sort=name",
        "javascript:show_detail(15)",
        "javascript:show_detail(16)",
        "http://www.web.com/login.aspx",
        "http://ad.example.com/banner?id=1",
        "javascript:window.print()",
    ]
    result = fig6.filter_links(links)
    assert (result.before, result.after) == (7, 4)
    assert [k.url for k in result.kept] == [
        "http://www.web.com/list.aspx?cate_id=3&page=2",
        "http://www.web.com/list.aspx?cate_id=3&page=3",
        "http://www.web.com/detail.aspx?per_id=15",
        "http://www.web.com/detail.aspx?per_id=16",
    ]
    assert result.dropped == (
        "http://www.web.com/login.aspx",
        "http://ad.example.com/banner?id=1",
        "javascript:window.print()",
    )


# Fig. 3: two URLs of the same page; the script keeps cat_id and nv_mid only.
NAVER = """<crawlscript><site title="네이버 쇼핑"><identity value="shopping.naver.com"/>
<url type="detail" class="상품">
<originalAddr type="url">http://shopping.naver.com/detail/detail.nhn?cat_id={0}&amp;nv_mid={1}</originalAddr>
<targetAddr>http://shopping.naver.com/detail/detail.nhn?cat_id={0}&amp;nv_mid={1}</targetAddr>
</url></site></crawlscript>"""


def test_fig3_urls_differing_in_unkept_parameters_become_one():
    rules = parse_script(NAVER).rules
    a = "http://shopping.naver.com/detail/detail.nhn?cat_id=00040102&nv_mid=4045429642"
    b = a + "&ani=0&tc=2"
    assert rules.apply(a) == rules.apply(b) == a
    # Fig. 2's server-side page URL names its parameters; their order does not matter.
    c = "http://shopping.naver.com/detail/detail.nhn?nv_mid=4045429642&tc=2&cat_id=00040102"
    assert rules.apply(c) == a


def test_fig7_pattern_with_three_required_values():
    pattern = UrlPattern(
        PageType.LIST,
        "http://people.naver.com/directory/list.nhn?query={0}&where={1}&dirid={2}",
        "http://people.naver.com/directory/list.nhn?query={0}&where={1}&dirid={2}",
        category="인물",
        category_key="{2}",
    )
    url = (
        "http://people.naver.com/directory/list.nhn?query="
        "%EC%97%B0%EA%B5%AC%EA%B4%80%EB%A0%A8%EB%8B%A8%EC%B2%B4%EC%9D%B8&where=job&dirid=467"
    )
    m = pattern.match(url)
    assert m is not None
    assert m.category_id == "467"
    assert m.value(1) == "job"
    # "(필수)": every placeholder is required; a URL without dirid is no list page.
    assert pattern.match(url.replace("&dirid=467", "")) is None


def test_korean_literal_in_a_pattern_matches_the_encoded_url():
    pattern = UrlPattern(
        PageType.LIST,
        "http://people.naver.com/directory/list.nhn?query=연구관련단체인&dirid={0}",
        "http://people.naver.com/directory/list.nhn?query=연구관련단체인&dirid={0}",
    )
    encoded = (
        "http://people.naver.com/directory/list.nhn?query="
        "%EC%97%B0%EA%B5%AC%EA%B4%80%EB%A0%A8%EB%8B%A8%EC%B2%B4%EC%9D%B8&dirid=467"
    )
    m = pattern.match(encoded)
    assert m is not None
    assert m.target == encoded


def test_fig8_javascript_call_with_a_quoted_path():
    pattern = UrlPattern(
        PageType.DETAIL,
        "javascript:pBlog('{0}')",
        "http://blog.danawa.com/prod/{0}",
        AddrType.JAVASCRIPT,
    )
    assert pattern.rewrite("pBlog('541293/C/860/869/10599/0');") == (
        "http://blog.danawa.com/prod/541293/C/860/869/10599/0"
    )
