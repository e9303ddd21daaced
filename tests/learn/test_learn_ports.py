"""A pattern whose host has no port matches the host on any port, and keeps the port."""

from __future__ import annotations

from pathlib import Path

from dustless.rules import PageType, load_script, parse_script

FIG6 = Path(__file__).parents[1] / "rules" / "data" / "fig6.xml"
PAGE = "http://www.web.com:45725/list.aspx?cate_id=467&page=1"


def test_fig6_drives_a_site_on_a_random_port():
    rules = load_script(FIG6).rules
    m = rules.match("http://www.web.com:45725/list.aspx?page=2&cate_id=471&sort=x")
    assert m is not None
    assert m.page_type is PageType.LIST
    assert m.target == "http://www.web.com:45725/list.aspx?cate_id=471&page=2"
    assert rules.is_scripted(PAGE)
    result = rules.filter_links(
        PAGE,
        [
            "javascript:show_detail(1003)",
            "http://www.web.com:45725/list.aspx?cate_id=494&page=1",
            "http://www.web.com:45725/about.html",
        ],
    )
    assert result.urls == (
        "http://www.web.com:45725/detail.aspx?per_id=1003",
        "http://www.web.com:45725/list.aspx?cate_id=494&page=1",
    )
    assert result.dropped == ("http://www.web.com:45725/about.html",)
    [js] = rules.javascript_links("<a onclick='show_detail(7)'>", page_url=PAGE)
    assert js.target == "http://www.web.com:45725/detail.aspx?per_id=7"
    assert rules.apply("http://www.web.com:45725/detail.aspx?per_id=7&x=1") == (
        "http://www.web.com:45725/detail.aspx?per_id=7"
    )


def test_a_port_in_the_pattern_is_kept_to():
    text = """<crawlscript><site title="s"><identity value="a.test:8080"/>
<url type="detail"><originalAddr type="url">http://a.test:8080/d?id={0}</originalAddr>
<targetAddr>http://a.test:8080/d?id={0}</targetAddr></url></site></crawlscript>"""
    rules = parse_script(text).rules
    assert rules.match("http://a.test:8080/d?id=1&z=2") is not None
    assert rules.match("http://a.test:8081/d?id=1") is None
    assert rules.match("http://a.test/d?id=1") is None


def test_a_target_on_another_host_gets_no_port():
    text = """<crawlscript><site title="s"><identity value="a.test"/>
<url type="detail"><originalAddr type="url">http://a.test/d?id={0}</originalAddr>
<targetAddr>http://b.test/item/{0}</targetAddr></url></site></crawlscript>"""
    rules = parse_script(text).rules
    m = rules.match("http://a.test:8080/d?id=5")
    assert m is not None
    assert m.target == "http://b.test/item/5"
