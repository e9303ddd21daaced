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
    _measure,
    flatten,
    shape,
)
from dustless.extract._prepare import prepare
from dustless.testweb import Profile, WebConfig, build_web, render_page
from dustless.testweb._corpus import load_corpus
from guard_pages import EDGES, FRAGMENTS, HOSTILE
from support import require


def _same(text: str) -> tuple[int, ...]:
    """The measure of ``text``, after checking it is the one of every tag read alone."""
    fast = astuple(shape(text))
    assert fast == astuple(_measure(text, _PLAIN_RE))
    return fast


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_pages_with_pairs_measure_the_same_and_are_flattened(name):
    text = HOSTILE[name]
    _same(text)
    assert shape(text).hostile
    assert prepare(text, None)[1]  # flattened


@pytest.mark.parametrize("text", EDGES)
def test_pages_at_the_pairs_edges_measure_the_same(text):
    _same(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=120), st.integers(1, 40))
def test_generated_markup_measures_the_same(pieces, repeat):
    # Repetition takes some generated pages over the limits, where the measure stops early.
    _same("".join(pieces) * repeat)


def test_real_documentation_measures_the_same():
    found = load_corpus()
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
