"""The cheaper main-content walk and shingles (issue 28) read every page as before.

The code as it was is kept in ``tests/oracle_extract.py``; over every page of several test
webs and a set of tricky pages, the main text, the shingles and the fingerprint must come
out the same. Pure: pages are rendered in-process, no server.
"""

from __future__ import annotations

import pytest
from selectolax.lexbor import LexborHTMLParser

from dustless.extract import extract_links, fingerprint_text
from dustless.extract._fingerprint import _shingles
from dustless.extract._maincontent import main_text
from dustless.testweb import Profile, WebConfig, build_web, render_page
from dustless.testweb._corpus import load_corpus
from oracle_extract import main_text as old_main_text
from oracle_extract import shingles as old_shingles
from support import require

TRICKY = [
    # custom elements (lexbor gives each document its own tag ids), leaves in links, a
    # notice in a leaf, a heading over an empty list, comments, nested inline elements
    "<body><x-card><p>one two three</p></x-card><my-nav>four five six</my-nav></body>",
    "<body><ul><li><a href=a>a b c</a></li><li><a href=b>d e f</a></li></ul><p>g h i</p>",
    "<body><div><a><b>in link bold</b></a> tail text here</div><p>© 2026 site</p></body>",
    "<body><h2>In this section</h2><ul><li><img></li></ul><p>body text of the page</p>",
    "<body><p>x<!-- c -->y</p><p><!-- only --></p><p> </p><span>s</span><br>t</body>",
    '<body><main role="main"><h1>T</h1><p>a</p></main><div role="main"><p>b</p></div>',
    '<body><div class="site-nav"><p>n</p></div><div id="content">ok ok ok</div></body>',
    "<body><article><header>h</header><p>words 12:05:33 more</p></article></body>",
    "<body><svg><a><text>svg text</text></a></svg><math><mi>x</mi></math><p>p</p></body>",
    "<body><table><tr><td>1</td><td><a href=x>two</a></td></tr></table><pre>a\nb</pre>",
    "<body>Ünïcödé wörds hère\xa0and there, <p>日本語 テキスト</p></body>",
    "<frameset><frame src=a></frameset>",
    "",
    # links where the main-content walk does not read the text (issue 28: it hands the link
    # elements to link extraction): template elements, hidden ones, the head, foreign content
    '<head><base href="/b/"><link rel=next href=n><script src=h.js></script><meta '
    'http-equiv=refresh content="0; url=r"></head><body><nav><a href=n1>n</a><div><a '
    "href=n2>m</a></div></nav><header><a href=h1>h</a></header><article><header><a "
    "href=h2>ah</a></header><p>t <a href=p1>p</a></p><footer><area href=f1></footer>"
    '</article><div class="site-menu"><a href=m1>m</a><iframe src=i1></iframe></div>'
    "<script>location.href='/js'</script><svg><a href=s1><text>s</text></a></svg>"
    "<template><a href=t1>t</a></template><noscript><a href=ns>ns</a></noscript>"
    "<a name=x>no href</a><a href=''>empty</a><link rel=stylesheet href=c.css>"
    "<p onclick=\"window.open('/oc')\">oc</p><iframe src=i2></iframe><a href=last>l</a>",
    "<!-- before --><html><!-- in --><head><title>t</title></head><!-- between --><body>"
    "<p><a href=x>x</a></p></body><!-- after --></html><a href=after-html>late</a>",
    "<body><form><a href=f>f</a><button><a href=b>b</a></button></form><select><option>o"
    "</select><dialog><a href=d>d</a></dialog><object><a href=o>o</a></object>"
    '<div role="navigation"><a href=r>r</a><p><a href=r2>r2</a></p></div><a href=end>e</a>',
]


def _pages() -> list[tuple[str, bytes]]:
    pages = [(f"http://t.test/{i}", p.encode()) for i, p in enumerate(TRICKY)]
    for seed, profile in [
        (1, Profile.CLEAN),
        (1, Profile.MIXED),
        (2, Profile.FIELD),
        (3, Profile.CANONICAL),
        (4, Profile.HOSTILE),
    ]:
        web = build_web(WebConfig(seed=seed, sites=8, pages_per_site=25, profile=profile))
        pages += [(p.url, render_page(p, 0)) for p in web.pages_by_rid.values()]
    # real documents (Debian's documentation) in their sites' templates
    found = load_corpus()
    require(not found.missing, f"Debian documentation packages missing: {found.missing}")
    web = build_web(WebConfig(seed=1, sites=6, pages_per_site=20, profile=Profile.REAL))
    for site in web.sites:
        for doc in site.plan.docs:  # type: ignore[attr-defined]
            path = site.primary_path(doc)  # type: ignore[attr-defined]
            outcome = site.route(site.host, path, "")
            if outcome.render is not None:
                pages.append((f"http://{site.host}{path}", outcome.render(0)))
    return pages


@pytest.fixture(scope="module")
def pages() -> list[tuple[str, bytes]]:
    return _pages()


def test_main_text_shingles_and_fingerprint_are_as_before(pages) -> None:
    assert len(pages) > 500
    for url, body in pages:
        text = body.decode("utf-8", "replace")
        want = old_main_text(LexborHTMLParser(text))
        assert main_text(LexborHTMLParser(text)) == want, url
        assert _shingles(want) == old_shingles(want), url
        got = extract_links(body, url, "text/html; charset=utf-8", with_text=True)
        assert got.text == want, url
        assert fingerprint_text(got.text) == fingerprint_text(want), url


REFS = [
    "a.html", "./b/../c.html", "/d.html", "//other.test/e", "?q=1", "#top", "http://x.test/f",
    "HTTP://X.test/g", "https:h.html", " \tsp ace.html", "a\\b.html", "x\ny.html", "",
    "mailto:a@b.test", "ü.html", "/ä?ö=1", "g:h", "..", "javascript:location.href='/j.html'",
]  # fmt: skip
BASES = [
    "http://a.test/",
    "http://a.test/dir/page.html?x=1#f",
    "https://a.test:8443/dir/",
    "http://b.test/deep/er/page",
    "http://user@a.test/dir/x",
]


def test_links_resolved_from_the_shared_cache_are_as_resolved_alone() -> None:
    # The cache of resolutions is keyed by the part of the base a reference depends on:
    # pages of different bases that share it must get what each page gets on its own.
    from dustless.extract import _links

    body = "".join(f'<a href="{r}">x</a>' for r in REFS)
    for charset in ("utf-8", "euc-kr"):
        ctype = f"text/html; charset={charset}"
        alone = []
        for base in BASES:
            _links._CACHE.clear()
            _links._PREFIXES.clear()
            alone.append(extract_links(body.encode(charset, "replace"), base, ctype).links)
        shared = [extract_links(body.encode(charset, "replace"), b, ctype).links for b in BASES]
        assert shared == alone
        assert [link.url for link in alone[1]][:3] == [
            "http://a.test/dir/a.html",
            "http://a.test/dir/c.html",
            "http://a.test/d.html",
        ]


def test_links_of_the_one_walk_are_the_css_querys(pages) -> None:
    # With the text (the crawl's call), link elements come from the main-content walk and the
    # head; without it, from one CSS query over the tree: the same extraction either way.
    assert len(pages) > 500
    for url, body in pages:
        walked = extract_links(body, url, "text/html; charset=utf-8", with_text=True)
        queried = extract_links(body, url, "text/html; charset=utf-8")
        assert walked.links == queried.links, url
        assert (walked.base, walked.counts, walked.scripts, walked.canonical) == (
            queried.base,
            queried.counts,
            queried.scripts,
            queried.canonical,
        ), url
        assert (walked.over_budget, walked.flattened) == (queried.over_budget, queried.flattened)
