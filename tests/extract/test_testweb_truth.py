"""Every page of the test web: the links extracted are exactly the links its truth records.

The test web (docs/testweb.md) writes each link in one of many markups — relative,
protocol-relative, entities, whitespace, upper case, unquoted, iframe, area, onclick, inline
script, frames, <base href>, meta refresh — and records the URL a conforming parser must find
and its seed 004 Table 13 kind. Pure: pages are rendered in-process, no server.
"""

from __future__ import annotations

from collections import Counter

import pytest

from dustless.extract import extract_links
from dustless.testweb import Profile, WebConfig, build_web, render_page


@pytest.mark.parametrize(
    ("seed", "profile"),
    [(1, Profile.MIXED), (3, Profile.MIXED), (7, Profile.DIRTY), (2, Profile.CLEAN)],
)
def test_extracted_links_match_the_truth(seed: int, profile: Profile) -> None:
    web = build_web(WebConfig(seed=seed, sites=16, pages_per_site=25, profile=profile))
    checked = 0
    kinds: Counter[str] = Counter()
    for page in web.pages_by_rid.values():
        got = extract_links(render_page(page, 0), page.url, "text/html; charset=utf-8")
        want = Counter((link.target, link.kind) for link in page.links if link.crawlable)
        assert Counter((link.url, link.kind.value) for link in got.links) == want, page.url
        checked += 1
        kinds.update(k.value for k, n in got.counts.items() if n)
    assert checked > 100
    if profile is not Profile.CLEAN:
        assert set(kinds) == {"a", "f", "h"}  # every kind of Table 13 was exercised


def test_the_hostile_web_nested_pages() -> None:
    # The hostile profile serves two deeply nested pages; extraction reads the first flat and
    # whole, the second (300,000 tags) flat and only to its budget.
    web = build_web(WebConfig(seed=1, sites=3, pages_per_site=12, profile=Profile.HOSTILE))
    host = web.hosts[0]
    origin = f"http://{host}"
    divs = web.route(host, "/nest/divs.html", "")
    assert divs is not None
    assert divs.status == 200
    assert len(divs.body) > 1_100_000
    e = extract_links(divs.body, origin + "/nest/divs.html", "text/html; charset=utf-8")
    assert e.flattened
    assert not e.over_budget
    assert [link.url for link in e.links] == [origin + "/", origin + "/landing.html"]
    unclosed = web.route(host, "/nest/unclosed.html", "")
    assert unclosed is not None
    e = extract_links(unclosed.body, origin + "/nest/unclosed.html", "text/html")
    assert e.flattened
    assert e.over_budget
    assert [link.url for link in e.links] == [origin + "/", origin + "/private/open-1.html"]
    home = web.route(host, "/", "")
    assert home is not None
