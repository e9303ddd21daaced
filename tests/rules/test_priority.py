"""Crawl order (§3.4.2, Fig. 10) and categories from anchors (§4.1, Figs. 13–14)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dustless.rules import (
    Anchor,
    PageCategory,
    Priority,
    is_pagination_label,
    load_script,
    page_category,
    priority,
)

FIG6 = Path(__file__).parent / "data" / "fig6.xml"
RULES = load_script(FIG6).rules
CURRENT = "http://www.web.com/list.aspx?cate_id=3&page=1"


def prio(link: str, current: str | None = CURRENT, **kw) -> int:
    return priority(RULES.match(link), None if current is None else RULES.match(current), **kw)


def test_detail_first_then_same_category_lists_then_other_categories():
    links = [
        "http://www.web.com/list.aspx?cate_id=9&page=1",  # another category
        "http://www.web.com/about.html",  # no pattern
        "http://www.web.com/list.aspx?cate_id=3&page=2",  # the current category
        "javascript:show_detail(15)",  # a detail page
    ]
    ordered = sorted(links, key=prio)
    assert ordered == [links[3], links[2], links[0], links[1]]
    assert [prio(x) for x in ordered] == [0, 1, 2, 3]
    assert [prio(x) for x in ordered] == [
        Priority.DETAIL,
        Priority.LIST_SAME_CATEGORY,
        Priority.LIST_OTHER_CATEGORY,
        Priority.OTHER,
    ]


def test_priority_is_a_plain_int_lower_is_sooner():
    p = prio("javascript:show_detail(15)")
    assert isinstance(p, int)
    assert p < prio("http://www.web.com/list.aspx?cate_id=3&page=2")


def test_from_a_detail_page_lists_of_the_same_class_are_the_current_category():
    detail = "http://www.web.com/detail.aspx?per_id=15"
    assert prio("http://www.web.com/list.aspx?cate_id=9&page=1", detail) == 1


def test_without_a_current_page_lists_are_other_categories():
    assert prio("http://www.web.com/list.aspx?cate_id=3&page=2", None) == 2


def test_pagination_counts_as_the_same_category():
    link = "http://www.web.com/list.aspx?cate_id=9&page=2"
    assert prio(link, paginated=True) == Priority.LIST_SAME_CATEGORY
    assert prio("javascript:show_detail(1)", paginated=True) == Priority.DETAIL


# Fig. 13, with hrefs resolved against the page as the link extractor does.
BASE = "http://people.naver.com/directory/"
FIG13 = [
    Anchor(
        BASE + "DirectoryList.nhn?query=%EC%A0%84%EB%AC%B8%EC%A7%81%EC%97%85%EC%9D%B8"
        "&where=job&dirid=471&depth=1",
        "전문직업인",
    ),
    Anchor(
        BASE + "DirectoryList.nhn?query=%ED%94%84%EB%A1%9C%EA%B7%B8%EB%9E%98%EB%A8%B8"
        "&where=job&dirid=494&depth=2",
        "프로그래머",
    ),
]
PAGE = FIG13[1].url


def test_fig13_category_is_the_text_of_the_link_to_the_page_itself():
    pagination = [
        Anchor(PAGE, "1"),  # the current page in the pagination row: not its category
        Anchor(PAGE + "&page=2", " 2 "),
        Anchor(PAGE + "&page=3", "[3]"),
        Anchor(PAGE + "&page=11", "다음"),
        Anchor("http://ads.example.com/?page=2", "2"),  # another host: not this category
        Anchor(BASE + "Help.nhn", "도움말"),
    ]
    result = page_category(PAGE + "#top", [pagination[0], *FIG13, *pagination[1:]])
    assert result == PageCategory(
        "프로그래머", (PAGE + "&page=2", PAGE + "&page=3", PAGE + "&page=11")
    )


def test_no_link_to_the_page_means_no_category():
    assert page_category("http://x.com/a", FIG13).category is None


def test_the_comparison_key_can_be_the_site_rules():
    page = "http://www.web.com/list.aspx?cate_id=3&page=1"
    links = [Anchor("http://www.web.com/list.aspx?page=1&cate_id=3&sid=77", "인물 > 배우")]
    assert page_category(page, links).category is None
    assert page_category(page, links, key=RULES.apply).category == "인물 > 배우"


@pytest.mark.parametrize(
    "label", ["1", " 12 ", "[3]", "(4)", "<5>", "다음", "이전", "다음 10개", "next", "Prev", "»"]
)
def test_pagination_labels(label):
    assert is_pagination_label(label)


@pytest.mark.parametrize("label", ["", "프로그래머", "2007년", "Top 10", "123456", "next page"])
def test_not_pagination_labels(label):
    assert not is_pagination_label(label)
