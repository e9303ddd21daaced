"""Canonical declarations (RFC 6596): the link element and the HTTP Link header (RFC 8288)."""

from __future__ import annotations

import pytest

from dustless.extract import (
    canonical_from_link_headers,
    declared_canonical,
    extract_links,
    one_canonical,
)

BASE = "http://a.test/dir/page?utm_source=x"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (['<http://a.test/x>; rel="canonical"'], "http://a.test/x"),
        (["</x>; rel=canonical"], "http://a.test/x"),  # a token, and relative to the request
        (['<x>; rel="alternate canonical"'], "http://a.test/dir/x"),  # one of several types
        (['<http://a.test/x#top>; REL="Canonical"'], "http://a.test/x"),
        (['</a>; rel="next", </b>; rel="canonical"'], "http://a.test/b"),  # several links
        (['</a,b>; rel="canonical"; title="one, two"'], "http://a.test/a,b"),
        (['</a>; rel="next"'], None),
        (['</a>; rel="canonical"', '</b>; rel="canonical"'], None),  # disagree: no hint
        (['</a>; rel="canonical"', '</a>; rel="canonical"'], "http://a.test/a"),
        (["garbage", '<javascript:x()>; rel="canonical"'], None),
    ],
)
def test_the_link_header_names_a_canonical(values, expected):
    assert canonical_from_link_headers(values, BASE) == expected


def test_the_link_element_and_the_header_must_agree():
    html = b'<html><head><link rel="canonical" href="/x"></head><body></body></html>'
    ex = extract_links(html, BASE, "text/html")
    assert ex.canonical == "http://a.test/x"
    assert any(link.url == "http://a.test/x" for link in ex.links)  # still a link (h)
    headers = [("Content-Type", "text/html"), ("Link", '</x>; rel="canonical"')]
    assert declared_canonical(headers, BASE, ex.canonical) == "http://a.test/x"
    other = [("link", '</y>; rel="canonical"')]
    assert declared_canonical(other, BASE, ex.canonical) is None
    assert declared_canonical([], BASE, None) is None
    assert declared_canonical(other, BASE, None) == "http://a.test/y"


def test_two_canonical_elements_that_disagree_declare_nothing():
    two = b'<link rel="canonical" href="/x"><link rel="canonical" href="/y"><a href="/z">z</a>'
    assert extract_links(two, BASE, "text/html").canonical is None
    same = b'<link rel="canonical" href="/x"><link rel=canonical href="http://a.test/x#a">'
    assert extract_links(same, BASE, "text/html").canonical == "http://a.test/x"
    none = b'<link rel="stylesheet canonical" href="/s.css"><a href="/x">x</a>'
    assert extract_links(none, BASE, "text/html").canonical is None
    assert one_canonical([None, "http://a.test/x", None]) == "http://a.test/x"
