"""Links of every kind (seed 004 Table 13) resolve to exactly what the truth says.

A small extractor (the standard library's HTML parser + ``urljoin``) reads every page of
the ``links`` sites; the URLs it finds must be the model's link targets, kind by kind.
"""

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

from dustless.testweb import Profile, WebConfig, build_web, render_page

WS = " \t\n\r\f"


class Extractor(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.base = None
        self.found = []  # (kind, reference)
        self.in_script = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "base" and "href" in a:
            self.base = a["href"].strip(WS)
        elif tag == "a" and "href" in a:
            self.found.append(("a", a["href"]))
        elif tag == "frame" and "src" in a:
            self.found.append(("f", a["src"]))
        elif tag == "iframe" and "src" in a:
            self.found.append(("h", a["src"]))
        elif tag == "area" and "href" in a:
            self.found.append(("h", a["href"]))
        elif tag == "meta" and a.get("http-equiv") == "refresh":
            self.found.append(("h", a["content"].split("url=", 1)[1]))
        if "onclick" in a:
            m = re.search(r"location\.href='([^']*)'", a["onclick"])
            self.found.append(("h", m.group(1)))
        self.in_script = tag == "script"

    def handle_endtag(self, tag):
        self.in_script = False

    def handle_data(self, data):
        if self.in_script:
            for m in re.finditer(r'window\.open\("([^"]*)"\)', data):
                self.found.append(("h", m.group(1)))


def extract(body, url):
    p = Extractor()
    p.feed(body.decode())
    base = urljoin(url, p.base) if p.base else url
    refs = [(kind, ref.strip(WS)) for kind, ref in p.found]
    # javascript: links are for pattern scripts (seed 002); the model marks them uncrawlable
    return sorted(
        (kind, urljoin(base, ref)) for kind, ref in refs if not ref.startswith("javascript:")
    )


def test_every_link_markup_resolves_to_its_target():
    web = build_web(
        WebConfig(seed=3, sites=12, pages_per_site=40, profile=Profile.DIRTY, port=8123)
    )
    kinds = set()
    markup_forms = set()
    checked = 0
    for site in web.sites:
        for page in site.pages():
            body = render_page(page, 0)
            want = sorted((link.kind, link.target) for link in page.links if link.crawlable)
            got = extract(body, page.url)
            assert got == want, page.url
            kinds.update(k for k, _ in got)
            checked += 1
            if site.name == "site5":  # the links personality in the dirty rotation
                text = body.decode()
                for form in ("&#47;", "<A HREF=", "//site", "<base href", '\n   href="  '):
                    if form in text:
                        markup_forms.add(form)
    assert checked > 300
    assert kinds == {"a", "f", "h"}
    assert markup_forms == {"&#47;", "<A HREF=", "//site", "<base href", '\n   href="  '}


def test_webcom_lists_link_details_only_through_javascript():
    web = build_web(WebConfig(seed=1, sites=2, profile=Profile.DIRTY, port=8123))
    site = web.by_host["www.web.com"]
    lists = [p for p in site.pages() if "/list.aspx?" in p.url]
    details = [p for p in site.pages() if "/detail.aspx?" in p.url]
    assert lists
    assert details
    text = render_page(lists[0], 0).decode()
    assert "javascript:show_detail(1000)" in text
    assert "function show_detail(id)" in text
    # Fig. 13: category links with anchor text; Fig. 14: numbered pagination and 다음
    assert 'list.aspx?cate_id=471&amp;page=1" class=" ">' in text
    assert '">2</a>' in text
    assert "다음" in text
    # detail pages are reached by no <a href> an ordinary crawler can follow
    crawlable = {link.target for p in site.pages() for link in p.links if link.crawlable}
    assert not any("detail.aspx" in url for url in crawlable)
