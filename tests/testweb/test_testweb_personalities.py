"""Each server personality of the test web (docs/testweb.md), checked from a real HTTP client on
127.0.0.1.

Seed 000 §4 (path case, trailing slash, www, default documents), seed 001 (session ids,
tracking parameters, parameter order), seed 002 (www.web.com's Fig. 6 patterns, Fig. 3).
Every answer is also checked against the truth file the server wrote.
"""

from urllib.parse import urlsplit

import pytest

from testweb_fixture import LoopbackClient


@pytest.fixture
def web(testweb_factory):
    return testweb_factory(profile="dirty", sites=7, pages_per_site=16)


def truth_of(web):
    return {r.url: r for r in web.truth()}


def canonical(web, host, pattern):
    """A canonical URL on ``host`` whose path+query contains ``pattern``."""
    for r in web.truth():
        parts = urlsplit(r.url)
        path_qs = parts.path + ("?" + parts.query if parts.query else "")
        is_canonical = r.status == 200 and r.rid.endswith(":" + path_qs)
        if parts.hostname == host and is_canonical and pattern in path_qs:
            return r
    raise LookupError(pattern)


async def get_all(*urls):
    async with LoopbackClient() as client:
        return [await client.get(u) for u in urls]


async def test_iis_paths_are_case_insensitive_with_default_asp(web):
    host = web.site("iis")
    leaf = canonical(web, host, ".asp")
    path = urlsplit(leaf.url).path
    sec = path.rsplit("/", 1)[0]
    base = web.base_url(host)
    a, b, c, d, e, f = await get_all(
        leaf.url, base + path.upper(), base + sec + "/", base + sec.upper() + "/Default.asp",
        base + sec.capitalize(), base + "/default.asp",
    )  # fmt: skip
    assert a.status == b.status == c.status == d.status == 200
    assert a.body == b.body  # /ASP/x.asp = /asp/x.asp (000 §4.1)
    assert c.body == d.body  # /dir/default.asp = /dir/
    assert e.status == 301
    assert e.headers["Location"] == base + sec.capitalize() + "/"
    root = (await get_all(base + "/"))[0]
    assert f.body == root.body
    truth = truth_of(web)
    assert truth[base + path.upper()].rid == leaf.rid  # appended when first served
    assert any(u.startswith(base) and u != u.lower() for u in truth)  # links use case variants


async def test_apache_trailing_slash_index_html_and_case_twins(web):
    host = web.site("apache")
    base = web.base_url(host)
    # a section directory: canonical, ends in "/", not the root
    sec = next(
        urlsplit(r.url).path for r in web.truth()
        if urlsplit(r.url).hostname == host and r.rid.endswith("/") and not r.rid.endswith(":/")
    )  # fmt: skip
    d, slash, index, dots, dup = await get_all(
        base + sec[:-1], base + sec, base + sec + "index.html",
        base + sec + "../." + sec, base + "/" + sec.replace("/", "//"),
    )  # fmt: skip
    assert d.status == 301
    assert d.headers["Location"] == base + sec
    assert slash.body == index.body  # /dir/index.html = /dir/ (000 §4.4)
    assert slash.body == dots.body == dup.body  # dot-segments and // as a file system does
    twin = next(
        r for r in web.truth() if urlsplit(r.url).hostname == host and r.status == 200
        and urlsplit(r.url).path.split("/")[1][:1].isupper()
    )  # fmt: skip
    lower_path = "/" + urlsplit(twin.url).path[1:].lower()
    t, lower, upper_file, with_query = await get_all(
        twin.url, base + lower_path, base + lower_path.upper(), base + lower_path + "?x=1"
    )
    assert t.status == lower.status == 200
    assert t.body != lower.body  # /Pubs/x.html is another page than /pubs/x.html (000 §4.1)
    truth = truth_of(web)
    assert truth[twin.url].rid != truth[base + lower_path].rid
    assert upper_file.status == 404
    assert with_query.body == lower.body  # a static file ignores its query


async def test_php_session_tracking_order_and_meaningful_params(web):
    host = web.site("php")
    base = web.base_url(host)
    ko = canonical(web, host, "&lang=ko")
    plain_url = ko.url.replace("&lang=ko", "")
    item_id = urlsplit(plain_url).query
    path = urlsplit(plain_url).path
    sec = path.rsplit("/", 1)[0] + "/"
    got = await get_all(
        plain_url,
        plain_url + "&PHPSESSID=0123456789abcdef",
        base + path + "?utm_source=mail&utm_medium=x&" + item_id,
        ko.url,
        base + path + "?lang=ko&" + item_id,
        base + sec,
        base + sec + "index.php",
        base + sec + "?sort=desc",
        base + sec + "index.php?sort=desc&PHPSESSID=42",
    )
    assert all(g.status == 200 for g in got)
    p, sess, utm, kor, kor_swapped, d, d_index, desc, desc_index = (g.body for g in got)
    assert p == sess == utm  # session ids and tracking parameters do not change the page
    assert kor == kor_swapped != p  # lang does; parameter order does not
    assert d == d_index != desc == desc_index  # sort does; index.php is the default document
    truth = truth_of(web)
    assert truth[plain_url + "&PHPSESSID=0123456789abcdef"].rid == truth[plain_url].rid


async def test_jsp_path_session_ids_and_sid_that_selects_a_board(web):
    host = web.site("jsp")
    base = web.base_url(host)
    leaf = canonical(web, host, "view.jsp?no=")
    path, query = urlsplit(leaf.url).path, urlsplit(leaf.url).query
    board1 = canonical(web, host, "list.jsp?sid=1")
    got = await get_all(
        leaf.url,
        base + path + ";jsessionid=0A1B2C3D4E5F?" + query,
        leaf.url + "&ref=home",
        board1.url,
        board1.url.replace("sid=1", "sid=2"),
    )
    assert all(g.status == 200 for g in got)
    assert got[0].body == got[1].body == got[2].body
    assert got[3].body != got[4].body  # "sid" looks like a session id but is not


async def test_www_alias_redirect_and_different_site(web):
    truth = truth_of(web)
    alias = web.site("iis", www="alias")
    redirect = next(i["hosts"][0] for i in web.sites.values() if i["www"] == "redirect")
    different = next(i["hosts"][0] for i in web.sites.values() if i["www"] == "different")
    a, wa, r, wr, d, wd = await get_all(
        web.url(alias), web.url("www." + alias), web.url(redirect), web.url("www." + redirect),
        web.url(different), web.url("www." + different),
    )  # fmt: skip
    assert a.body == wa.body  # www.NAME aliases NAME (000 §4.3)
    assert wr.status == 301
    assert wr.headers["Location"] == web.url(redirect)
    assert r.status == 200
    assert d.status == wd.status == 200
    assert d.body != wd.body
    assert truth[web.url(different)].rid != truth[web.url("www." + different)].rid
    assert "www." + different in web.hosts
    assert "www." + alias in web.hosts


async def test_webcom_serves_the_fig6_patterns(web):
    base = web.base_url("www.web.com")
    got = await get_all(
        base + "/list.aspx?cate_id=467&page=1",
        base + "/list.aspx?page=1&cate_id=467",
        base + "/list.aspx?cate_id=467&page=1&sort=name",
        base + "/list.aspx?cate_id=467&page=2",
        base + "/detail.aspx?per_id=1000",
        base + "/detail.aspx?per_id=1000&view=contents",
        base + "/detail.aspx?per_id=99",
    )
    assert [g.status for g in got] == [200] * 6 + [404]
    assert got[0].body == got[1].body == got[2].body != got[3].body
    assert got[4].body == got[5].body
    assert b"javascript:show_detail(1000)" in got[0].body
    truth = truth_of(web)
    assert truth[base + "/detail.aspx?per_id=1000"].rid == "web:/detail.aspx?per_id=1000"
    assert web.seeds.count(base + "/list.aspx?cate_id=467&page=1") == 1


async def test_product_site_ignores_display_parameters(web):
    row = canonical(web, "shopping.naver.test", "detail.nhn?cat_id=")
    q = dict(p.split("=") for p in urlsplit(row.url).query.split("&"))
    base = web.base_url("shopping.naver.test") + "/detail/detail.nhn"
    got = await get_all(
        row.url,
        row.url + "&ani=0&tc=2",  # seed 002 Fig. 3
        f"{base}?nv_mid={q['nv_mid']}&cat_id={q['cat_id']}",
        f"{base}?cat_id={q['cat_id']}",
    )
    assert [g.status for g in got] == [200, 200, 200, 404]
    assert got[0].body == got[1].body == got[2].body
    assert any("&ani=0&tc=2" in u for u in truth_of(web))  # the site links that spelling
