"""Shape reads ``<code>x</code>`` as one token and measures the same (issue 28).

Real documentation is mostly phrasing closed right after its text; ``shape`` reads such a
pair at once (``_SHAPE_RE``) and the formatting list skips it when nothing is alive. The
measure must not change: every page here is measured both ways — the pairs read at once,
and every tag read as its own token (``_PLAIN_RE``, how shape read pages before) — and the
two measures must be equal, field by field: hostile pages aimed at the pairs (mismatched,
upper-case, in raw text, in foreign content, cloning through ``<a>``/``<b>``), generated
markup, the test web's pages and the real documentation pages.
"""

from __future__ import annotations

import re
from dataclasses import astuple
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.extract._guard import (
    _ATTRS,
    _PLAIN_RE,
    _TOKEN_RE,
    MAX_CLONES,
    MAX_DEPTH,
    MAX_OPTIONS,
    _measure,
    flatten,
    prepare,
    shape,
)
from dustless.testweb import Profile, WebConfig, build_web, render_page
from dustless.testweb._corpus import load_corpus
from support import require


def _same(text: str) -> tuple[int, ...]:
    """The measure of ``text``, after checking it is the one of every tag read alone."""
    fast = astuple(shape(text))
    assert fast == astuple(_measure(text, _PLAIN_RE))
    return fast


# Pages that pass any count of pairs but are hostile, and their measure's limit passed.
B_OPEN = "".join(f"<b id={i}>" for i in range(260))
HOSTILE = {
    # nesting under pairs: every level holds a pair, the pairs pop nothing
    "nested-with-pairs": "<div><code>x</code>" * (MAX_DEPTH + 10),
    # end tags that match nothing: a pair's end tag never pops what is under it
    "mismatched-ends": ("<div><code>x</em></code>" * (MAX_DEPTH + 10)),
    # upper case: read as two tags, the same measure
    "upper-case-pairs": "<DIV><CODE>x</CODE><Code>y</code>" * (MAX_DEPTH + 10),
    # 260 distinct <b> left open: every pair's end tag may pop, the next text clones them
    "clones-through-b": B_OPEN + "<i>x</i>y" * (MAX_CLONES // 200),
    # the same through <a> pairs (each adopts nothing: no <a> alive) and <code> pairs
    "clones-through-a": B_OPEN + "<a href=x>x</a>y<code>z</code>w" * (MAX_CLONES // 400),
    # Noah's Ark: four identical <b> evict one, whose ghost takes each pair's end tag
    "ark-ghosts": "<b><b><b><b>" + "<b>x</b>t" * 200 + B_OPEN + "<i>x</i>y" * 400,
    # options in a datalist, with pairs between them
    "datalist-options": "<datalist>" + "<option><code>v</code>" * (MAX_OPTIONS + 5),
    # end tags in raw text match nothing: the divs stay open
    "ends-in-raw-text": "<div><title></div><code>x</code></title>" * (MAX_DEPTH + 10),
    "ends-in-script": "<div><script>'</div>'<code>x</code></script>" * (MAX_DEPTH + 10),
    "ends-in-comment": "<div><!-- </div><code>x</code> -->" * (MAX_DEPTH + 10),
    # foreign content: in <svg> a <style>'s content is markup, pairs included
    "svg-style": "<svg><style>" + "<g><code>x</code>" * (MAX_DEPTH + 10),
    # a pair's start tag with too many attributes
    "attributes-on-a-pair": "<p>" * 600 + f"<code {' '.join(f'a{i}' for i in range(300))}>x</code>",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_pages_with_pairs_measure_the_same_and_are_flattened(name):
    text = HOSTILE[name]
    _same(text)
    assert shape(text).hostile
    assert prepare(text, None)[1]  # flattened


# Pages near the pairs' edges, hostile or not: each is measured the same both ways.
EDGES = [
    "<code>x</code >y<code/>z</code/>w<code\tclass='a'>v</code\n>",
    "<codex>x</codex><bx>y</bx><b=1>z</b><a href='<'>x</a><a title=\"a>b\">y</a>",
    "<a href=1>x</a><a href=2>" + "<a href=3>y</a>" * 50 + "</a>" + "<p>t" * 600,
    "<table><td><b>x</b><b id=1>" + "<i>x</i>" * 600 + "</td></table>" + "<p>t" * 600,
    "<nobr>x</nobr><nobr>" + "<nobr>y</nobr>" * 400 + "<p>t" * 300,
    "<script><!--<script>" + "<code>x</code>" * 300 + "</script>--></script>" + "<i>" * 600,
    "<math><![CDATA[" + "<code>x</code>" * 300 + "]]></math>" + "<p>z" * 300,
    "<plaintext>" + "<code>x</code>" * 600,
    # a tag across the end of raw text: read again from that end
    '<title><a title="</title>"><code>x</code>' * 300,
    "<script><b id='</script>'>y<code>x</code>" * 300 + "<i>" * 300,
    "<b>" * 3 + "<b>x</b>" * 100 + "</b>" * 3 + "<div>t</div>" * 300,
]


@pytest.mark.parametrize("text", EDGES)
def test_pages_at_the_pairs_edges_measure_the_same(text):
    _same(text)


FRAGMENTS = [
    "<code>", "</code>", "<code class=l>", "<CODE>", "</CODE>", "<b>", "</b>", "<b id=1>",
    "<b id=2>", "<i>", "</i>", "<a href=x>", "</a>", "<nobr>", "</nobr>", "<span>",
    "</span>", "<em>", "</em>", "<div>", "</div>", "<p>", "</p>", "<li>", "<td>", "</td>",
    "<tr>", "<table>", "</table>", "<select>", "<option>", "<datalist>", "<svg>", "<math>",
    "<style>", "</style>", "<title>", "</title>", "<script>", "</script>", "<!--", "-->",
    "<![CDATA[", "]]>", "<object>", "</object>", "<caption>", "x", " ", "y z", "<br>",
    "<code>x</code>", "<b>y</b>", "<a href=q>z</a>", "<i> </i>", "<span class=s>t</span>",
    "<em>e</em >", "<b id=3>u</b>", "<code/>", "'", '"', "=", "<",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=120), st.integers(1, 40))
def test_generated_markup_measures_the_same(pieces, repeat):
    # Repetition takes some generated pages over the limits, where the measure stops early.
    _same("".join(pieces) * repeat)


def test_real_documentation_measures_the_same():
    found = load_corpus(fetch=False)
    require(not found.missing, f"Debian documentation packages missing: {found.missing}")
    pages = 0
    for root in found.roots.values():
        for path in sorted(Path(root).rglob("*.htm*")):
            page = path.read_bytes().decode("utf-8", "replace")
            _same(page)
            assert _tokens(_TOKEN_RE, page) == _tokens(_TOKEN_BEFORE, page)
            pages += 1
    assert pages > 1000


@pytest.mark.parametrize("profile", [Profile.CLEAN, Profile.MIXED, Profile.HOSTILE])
def test_test_web_pages_measure_the_same(profile):
    web = build_web(WebConfig(seed=1, sites=8, pages_per_site=25, profile=profile))
    for page in web.pages_by_rid.values():
        _same(render_page(page, 0).decode("utf-8", "replace"))


# The tokens as read before the attributes' pattern was unrolled (issue 28): an alternation
# of one ordinary character or "=" and a quoted value.
_TOKEN_BEFORE = re.compile(
    r"<(/?)([A-Za-z][^\t\n\f\r />]*)"
    r"(?:((?:[^<>\"'=]|=[\t\n\f\r ]*(?:\"[^\"<>]*\"|'[^'<>]*')?)*)>|"
    f"({_ATTRS})(?:>|\\Z))"
    r"|<!--(?:-?>|.*?--!?>|.*\Z)"
    r"|<(?:!|\?|/(?![A-Za-z]))[^>]*(?:>|\Z)",
    re.S,
)


def _tokens(regex: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], tuple]]:
    return [(m.span(), m.groups()) for m in regex.finditer(text)]


TAG_PIECES = ["<a", "<b ", "</", "=", "= ", '"', "'", ">", " ", "\t", "x", "<", "/", "<!--"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(TAG_PIECES), max_size=40))
def test_the_unrolled_attributes_read_the_same_tokens(pieces):
    text = "".join(pieces)
    assert _tokens(_TOKEN_RE, text) == _tokens(_TOKEN_BEFORE, text)


def test_a_failing_tag_costs_no_exponential_backtracking():
    # 5,000 "a= " then a lone quote: alternative 1 fails, having nothing to try again (the
    # alternation before took 2^n steps: 1 s for 22 "a= ", so this never finished).
    text = "<p " + "a= " * 5_000 + "'x" + "<code>y</code>" * 600
    _same(text)
    assert "<code>" not in flatten(text)
