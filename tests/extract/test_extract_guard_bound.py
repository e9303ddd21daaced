"""The guard's cheap bound is at least what ``shape`` measures, field by field (issue 28).

``prepare`` skips the measure of a page the bound clears (``extract/_prepare.py``), so the
bound must never clear a page the measure would flatten. Every page here is checked both
ways: where the bound clears a page, each field of ``shape``'s measure is at most the
bound's, and ``prepare`` gives what it gave when every page was measured. Pages aimed at
each part of the bound (depth under the limit, clones through pairs, attributes behind a
quoted ">", foreign content, upper-case formatting tags), the pairs' hostile and edge pages,
generated markup, the test web's pages and the real documentation pages.
"""

from __future__ import annotations

from dataclasses import astuple
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.extract._guard import (
    _SHAPE_RE,
    CLONE_FREE_TAGS,
    MAX_ATTRIBUTES,
    MAX_CLONES,
    MAX_DEPTH,
    SHAPE_MIN_CHARS,
    flatten,
    shape,
)
from dustless.extract._prepare import _PAIR_RE, BOUND_MAX_TAGS, prepare, safe, upper
from dustless.testweb import Profile, WebConfig, build_web, render_page
from dustless.testweb._corpus import load_corpus
from guard_pages import EDGES, FRAGMENTS, HOSTILE
from support import require


def _check(text: str) -> bool:
    """Whether the bound clears ``text``, after checking it is sound there."""
    lts = text.count("<")
    cleared = safe(text, lts)
    if cleared:
        measured = shape(text)
        assert not measured.hostile
        bound = upper(text, lts)
        for name, got, most in zip(
            ("depth", "options", "attributes", "tags", "clones"),
            astuple(measured),
            astuple(bound),
            strict=True,
        ):
            assert got <= most, f"{name}: measured {got}, bound {most}"
    # prepare as it was before the bound: the measure decides
    hostile = (lts > CLONE_FREE_TAGS or len(text) >= SHAPE_MIN_CHARS) and shape(text).hostile
    expected = (flatten(text), True, False) if hostile else (text, False, False)
    assert prepare(text, None) == expected
    return cleared


PAD = "x" * SHAPE_MIN_CHARS  # measured whatever its tags
B_OPEN = "".join(f"<b id={i}>" for i in range(200))
# Pages the bound must not clear (the measure flattens each), though most of their parts are
# far from its limits.
NOT_CLEARED = {
    # 200 distinct <b> open (200 pushes), then pairs: each pair's end tag sets "stale" and
    # the next pair's start tag reconstructs all 200 — clones past the limit, no depth
    "clones-through-pairs": B_OPEN + "<span>x</span>" * (MAX_CLONES // 150),
    "clones-through-upper-case": "".join(f"<B id={i}>" for i in range(200))
    + "<span>x</span>" * (MAX_CLONES // 150),
    # more attributes than the limit, behind a quoted ">" that hides the tag's length
    "attributes-behind-quoted-gt": "<p " + 'a=">" ' * (MAX_ATTRIBUTES + 10) + ">" + PAD,
    "attributes-on-one-long-tag": "<p " + "a " * (MAX_ATTRIBUTES + 10) + ">" + PAD,
    # each end tag, then text (not the last): a reconstruction of all 200, just past the limit (the
    # most reconstructions the bound allows for: one a tag)
    "clones-through-end-tags": B_OPEN + "</x>t" * (MAX_CLONES // 200 + 2),
    # in <svg>, a <style>'s content is markup: what the counts take for pairs and void
    # tags there, the measure counts as open elements
    "svg-style": "<svg><style>" + "<code>x</code>" * 300 + "</style></svg>" + PAD,
    "math-upper-case": "<MATH><style>" + "<br>" * 300 + "</style></MATH>" + PAD,
    "math-cdata": "<math><![CDATA[" + "<em>e</em>" * 300 + "]]></math>" + PAD,
    "nested-past-the-limit": "<div>" * (MAX_DEPTH + 1) + PAD,
    # flat blocks between open elements, and blocks that look flat where shape reads no
    # tag (raw text, comments): the open elements stay
    "nested-with-flats": "<section><p>x <code>c</code></p>" * (MAX_DEPTH - 1) + PAD,
    "flats-in-raw-text": "<div><title><p>x</p></title>" * (MAX_DEPTH + 1) + PAD,
    "flats-in-comments": "<div><!--<p>x</p>-->" * (MAX_DEPTH + 1) + PAD,
    "flat-options": "<select>" + "<option><p>x</p>" * 600 + PAD,
}


@pytest.mark.parametrize("name", sorted(NOT_CLEARED))
def test_hostile_pages_are_not_cleared(name):
    text = NOT_CLEARED[name]
    assert not _check(text)
    assert shape(text).hostile
    assert prepare(text, None)[1]


# Pages the bound clears, close to its limits: the measure agrees.
CLEARED = {
    "nested-to-the-limit": "<div>" * (MAX_DEPTH - 1) + "<code>x</code>" * 300 + PAD,
    "void-and-pairs": "<p>" * 200 + ("<br><img src=x><code>c</code><a href=y>z</a>") * 100,
    "formatting-left-open": "<b>" * 20 + "<p>t</p>" * 200 + PAD,
    # flat blocks, each popped by its own end tag: any number of them
    "flat-blocks": "<div>" * (MAX_DEPTH - 3) + "<p>x <em>e</em> y</p><td>z</td >" * 150,
    "long-text": "<p>" + "y " * 5000 + "</p>" + "<em>t</em>" * 400,
    "quoted-gt-in-text": "<p>" + 'a="b" > c' * 100 + "</p>" + PAD,
}


@pytest.mark.parametrize("name", sorted(CLEARED))
def test_pages_far_enough_from_the_limits_are_cleared(name):
    text = CLEARED[name]
    assert text.count("<") <= BOUND_MAX_TAGS
    assert _check(text)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_the_pairs_hostile_pages_are_not_cleared(name):
    assert not _check(HOSTILE[name])


@pytest.mark.parametrize("text", EDGES)
def test_the_pairs_edges_are_sound(text):
    _check(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*FRAGMENTS, "<B>", "</B>", "<Em>", "<br/>"]), max_size=120))
def test_generated_markup_is_sound(pieces):
    # Repeated to be measured (> CLONE_FREE_TAGS "<") and to come near the limits.
    text = "".join(pieces)
    for repeat in (1, 6, 30):
        _check(text * repeat + PAD)


@pytest.mark.parametrize("profile", [Profile.CLEAN, Profile.MIXED, Profile.HOSTILE])
def test_test_web_pages_are_sound(profile):
    web = build_web(WebConfig(seed=1, sites=8, pages_per_site=25, profile=profile))
    for page in web.pages_by_rid.values():
        _check(render_page(page, 0).decode("utf-8", "replace"))


def test_most_real_documentation_pages_are_cleared():
    found = load_corpus()
    require(not found.missing, f"Debian documentation packages missing: {found.missing}")
    pages = cleared = 0
    for root in found.roots.values():
        for path in sorted(Path(root).rglob("*.htm*")):
            page = path.read_bytes().decode("utf-8", "replace")
            cleared += _check(page)
            pages += 1
    assert pages > 1000
    assert cleared > pages * 3 // 4  # 1,212 of 1,411 when written


PAIR_PIECES = [
    "<code>", "</code>", "<code", "<codex>", "</code >", "<b>", "</b>", "<bdi>", "</bdi>",
    "<big>", "<s>", "</s>", "<small>", "</small>", "<span", "<strong>", "</strong>", "<i>",
    "</i>", "<ins>", "<a href=x>", "</a>", "<abbr>", "</abbr>", "<CODE>", " ", "/", "x",
    "=", '"', "'", ">", "<", "</", "\t", "<p>",
]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PAIR_PIECES), max_size=40))
def test_the_pair_pattern_matches_where_shapes_reads_a_pair(pieces):
    text = "".join(pieces)
    found = [m.start() for m in _PAIR_RE.finditer(text)]
    pairs = []
    for at in range(len(text)):
        m = _SHAPE_RE.match(text, at)
        if m is not None and m.group(1) is not None:
            pairs.append(at)
    # (a pair holds no other "<": the scan that skips over each one misses none)
    assert found == pairs
