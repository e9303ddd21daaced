"""The CPU bound of extraction: hostile markup costs time in proportion to its size.

Lexbor's tree builder looks at the whole stack of open elements for each block start tag
(and at every option of a select, every attribute of a tag): 100,000 nested ``<div>`` cost
45 s in a crawl, 100,000 unclosed ``<div><span><b>`` 232 s. ``extract._guard`` measures a
page as the tokenizer reads it and flattens one too deep to parse before lexbor sees it;
a budget in tags bounds the rest. Tests check the mechanism, never a time: lexbor is never
given markup nested deeper than ``MAX_DEPTH`` (a spy on the parser), and the links are the
same as a parse of the page would give.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

import dustless.extract._links as links_module
from dustless.extract import DEFAULT_MAX_TAGS, MAX_DEPTH, extract_links
from dustless.extract._guard import MAX_ATTRIBUTES, MAX_OPTIONS, flatten, shape
from dustless.extract._prepare import prepare

DOC = "http://h.test/dir/"

# Two hostile pages (1.1 MB and 1.4 MB), with links before, inside and after.
NESTED_DIV = (
    "<html><body><a href='/first'>first</a>"
    + "<div>" * 50_000
    + "<a href='/deep'>deep</a>"
    + "<div>" * 50_000
    + "</div>" * 100_000
    + "<a href='/after'>after</a></body></html>"
)
UNCLOSED_DIV_SPAN_B = (
    "<html><body><a href='/first'>first</a>"
    + "<div><span><b>" * 50_000
    + "<a href='/middle'>middle</a>"
    + "<div><span><b>" * 50_000
    + "<a href='/end'>end</a>"
)


def _depth(html: str) -> int:
    """The depth of the tree lexbor builds, walked without recursion."""
    root = LexborHTMLParser(html).root
    deepest = 0
    todo = [(root, 1)]
    while todo:
        node, d = todo.pop()
        deepest = max(deepest, d)
        child = node.child
        while child is not None:
            todo.append((child, d + 1))
            child = child.next
    return deepest


@pytest.fixture
def parsed(monkeypatch):
    """What lexbor was given, by every extract_links call of the test."""
    seen: list[str] = []

    def spy(text: str) -> LexborHTMLParser:
        seen.append(text)
        return LexborHTMLParser(text)

    monkeypatch.setattr(links_module, "LexborHTMLParser", spy)
    return seen


def urls(e):
    return [link.url for link in e.links]


def test_the_nested_div_page_is_read_flat_with_every_link(parsed):
    assert len(NESTED_DIV) > 1_100_000
    e = extract_links(NESTED_DIV.encode(), DOC)
    assert urls(e) == ["http://h.test/first", "http://h.test/deep", "http://h.test/after"]
    assert e.flattened
    assert not e.over_budget
    (text,) = parsed
    assert shape(text).depth <= 4
    assert _depth(text) <= 8  # html, body, a, text — not 100,000 divs


def test_the_div_span_b_page_is_flat_and_over_the_tag_budget(parsed):
    # 300,000 tags: more than the default budget, so the page's first part is read
    # (flattened) and the extraction says so; the engine records it as a state of its own.
    assert UNCLOSED_DIV_SPAN_B.count("<") > DEFAULT_MAX_TAGS
    e = extract_links(UNCLOSED_DIV_SPAN_B.encode(), DOC)
    assert urls(e) == ["http://h.test/first", "http://h.test/middle"]
    assert e.flattened
    assert e.over_budget
    assert _depth(parsed[0]) <= 8
    whole = extract_links(UNCLOSED_DIV_SPAN_B.encode(), DOC, max_tags=None)
    assert urls(whole)[-1] == "http://h.test/end"
    assert whole.flattened
    assert not whole.over_budget


@pytest.mark.parametrize(
    ("name", "html"),
    [
        ("nested blocks", "<div>" * 2000),
        ("nested lists", "<ul><li>" * 2000),
        ("definition lists", "<dl><dt><dd>" * 2000),
        ("unclosed phrasing", "<div><span><b>" * 1000),
        ("ruby", "<rb>" * 2000),
        # end tags that close nothing do not hide the nesting
        ("stray end tags", "<div></span>" * 2000),
        ("end tags in comments", "<div><!--</div>-->" * 2000),
        ("end tags in attributes", '<div title="</div>">' * 2000),
        ("end tags in script text", "<div><script>'</div>'</script>" * 2000),
        ("double-escaped script", "<div><script><!--<script></script></div>--></script>" * 600),
        # inside <svg>, <style> content is markup: whatever looks like a tag counts
        ("style in svg", "<svg><style>" + "<div>" * 2000),
        ("cdata in svg", "<svg><![CDATA[>" + "</div>" * 10 + "]]>" + "<div>" * 2000),
    ],
)
def test_hostile_nesting_is_measured_and_flattened(name, html):
    page = f"<html><body><a href='/in'>x</a>{html}<a href='/out'>y</a>"
    s = shape(page)
    assert s.depth > MAX_DEPTH, name
    assert s.hostile
    text, flattened, over = prepare(page, None)
    assert flattened
    assert not over
    assert _depth(text) <= 8
    e = extract_links(page.encode(), DOC)
    assert e.flattened
    assert {"http://h.test/in", "http://h.test/out"} <= set(urls(e))


def test_many_options_and_attributes_are_flattened():
    options = "<select>" + "<option>x</option>" * (MAX_OPTIONS + 1) + "</select>"
    assert shape(options).options == MAX_OPTIONS + 1
    assert prepare(options + "x" * 9000, None)[1]
    # a ">" inside quoted values does not end the tag: the attributes are all counted
    attrs = "<div " + " ".join(f'a{i}=">"' for i in range(MAX_ATTRIBUTES + 1)) + ">x</div>"
    assert shape(attrs).attributes == MAX_ATTRIBUTES + 1
    boolean = "<a href=/x " + " ".join(f"b{i}" for i in range(3000)) + ">t</a>"
    e = extract_links(boolean.encode(), DOC)
    assert e.flattened
    assert urls(e) == ["http://h.test/x"]
    assert e.links[0].text == "t"


@pytest.mark.parametrize(
    "html",
    [
        "<p>text" * 3000,  # paragraphs without end tags
        "<ul>" + "<li>item" * 3000 + "</ul>",
        "<table>" + "<tr><td>a<td>b" * 1500 + "</table>",
        "<dl>" + "<dt>t<dd>d" * 1500 + "</dl>",
        "<select>" + "<option>o" * 400 + "</select>",
        "<div>" * 200 + "<a href=/x>x</a>" + "</div>" * 200 + "<p>x</p>" * 2000,
        "<script>" + "var s = '<div>';" * 2000 + "</script>" + "<p>x</p>" * 2000,
        "<!-- <div> -->" * 3000,
        '<div class="a" data-x="<b>">x</div>' * 2000,
    ],
)
def test_ordinary_big_pages_are_parsed_as_they_are(html):
    page = f"<!DOCTYPE html><html><body>{html}<a href='/x'>x</a></body></html>"
    assert not shape(page).hostile
    text, flattened, _ = prepare(page, None)
    assert not flattened
    assert text == page


DOCUMENT = """<!DOCTYPE html><html><head><base href="/b/">
<link rel="next" href="n2.html"><link rel="stylesheet" href="s.css">
<meta http-equiv="refresh" content="5; url=/r?a=1&amp;b=2">
<script src="/s.js"></script><script>if (a < b) location.href = '/js1';</script>
<script><!-- document.write('<script src=x></script>'); location.replace('/js2') //--></script>
<title><a href="/no-title">not a link</a></title><style>a { x: '<a href=/no-style>' }</style>
</head><body><div class="x"><table><tr><td><a href="a.html?x=1&amp;y=&quot;2&quot;">A <b>bold</b>
<img alt="pic" src="i.png"></a><td><a href='javascript:show(3)'>js</a></table></div>
<textarea><a href="/no-textarea">x</a></textarea><!-- <a href="/no-comment"> -->
<map><area href="/area" alt="Area"></map><iframe src="/frame.html" title="F">x</iframe>
<span onclick="window.open('/onclick')">o</span><p>para<a href=unquoted>U</a>
<svg><a href="/svg-link">s</a></svg><a href="/after-svg" title=">">after</a>
</body></html>"""


def test_flattening_keeps_every_link_its_kind_and_text():
    whole = extract_links(DOCUMENT.encode(), DOC)
    flat = extract_links(flatten(DOCUMENT).encode(), DOC)
    assert [(link.url, link.kind, link.text) for link in flat.links] == [
        (link.url, link.kind, link.text) for link in whole.links
    ]
    assert flat.scripts == whole.scripts
    assert flat.base == whole.base == "http://h.test/b/"
    assert "http://h.test/no-title" not in urls(whole)
    assert len(whole.links) >= 12


def test_a_page_over_the_budget_gives_its_first_part():
    page = "".join(f"<a href='/p{i}'>{i}</a>" for i in range(100)).encode()
    e = extract_links(page, DOC, max_tags=20)
    assert e.over_budget
    assert urls(e) == [f"http://h.test/p{i}" for i in range(10)]  # 2 tags a link
    assert not extract_links(page, DOC).over_budget
    assert len(extract_links(page, DOC, max_tags=None).links) == 100


_TAGS = ["div", "span", "b", "p", "ul", "li", "table", "tr", "td", "section", "i", "dl", "dd"]
_LEAVES = [
    "<a href='/a1'>one</a>",
    '<a href="b?x=1&amp;y=2">two <b>2</b></a>',
    "<iframe src='/if'></iframe>",
    "<link rel=search href=/s>",
    "text",
    "<img alt=i>",
    "<span onclick=\"location.href='/oc'\">c</span>",
]


@st.composite
def markup(draw, depth=0):
    if depth > 4 or draw(st.booleans()):
        return draw(st.sampled_from(_LEAVES))
    tag = draw(st.sampled_from(_TAGS))
    inner = "".join(draw(st.lists(markup(depth + 1), max_size=3)))
    close = draw(st.booleans())
    return f"<{tag}>{inner}" + (f"</{tag}>" if close else "")


@settings(max_examples=150, deadline=None)
@given(body=st.lists(markup(), max_size=6).map("".join))
def test_flattening_keeps_the_links_of_any_markup(body):
    page = f"<html><body>{body}</body></html>"
    whole = extract_links(page.encode(), DOC, max_tags=None)
    flat = extract_links(flatten(page).encode(), DOC, max_tags=None)
    # The same links; their order may differ where the tree builder moves nodes (a link
    # "foster-parented" out of a table comes before the table in the tree, after it here).
    assert sorted((link.url, link.kind.value) for link in flat.links) == sorted(
        (link.url, link.kind.value) for link in whole.links
    )
