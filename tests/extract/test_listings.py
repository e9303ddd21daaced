"""A listing is one document in any order, layout or template (issue 25).

A section index sorted another way (``?sort=-title``), shown as a grid instead of a list, or
served in its mobile, print or AMP template lists the same titles: the fingerprint shingles
each block apart (``_fingerprint``) and main-content extraction drops the per-request stamp
and the "In this section" heading over an empty list (``_maincontent``), so these pages are
near-duplicates — and two different listings of one site that share a title stay apart.
Checked on the ``real`` test web (real documents' titles in its four skins and its
templates) and on hand-written pages for what it does not draw.
"""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dustless.extract import NEAR_THRESHOLD, content_fingerprint, main_text, similarity
from dustless.testweb import Profile, WebConfig, build_web
from dustless.testweb._core import WORDS
from dustless.testweb._corpus import load_corpus
from support import require

SEEDS = (1, 2, 3)
SAME = 0.9  # the same titles: the same shingles, but for the estimate's error


def _web(pages_per_site: int):
    found = load_corpus()
    require(not found.missing, f"Debian documentation packages missing: {found.missing}")
    return [
        (seed, site)
        for seed in SEEDS
        for site in build_web(
            WebConfig(
                seed=seed, sites=6, pages_per_site=pages_per_site, profile=Profile.REAL, port=8080
            )
        ).sites
    ]


@pytest.fixture(scope="module")
def real_sites():
    return _web(20)


def _fp(site, host: str, path: str, query: str = "") -> bytes:
    outcome = site.route(host, path, query)
    assert outcome.status == 200, (host, path, query, outcome.status)
    fp = content_fingerprint(outcome.render(0), "text/html")  # a dynamic site: a new stamp
    assert fp is not None
    return fp


def _sections(site) -> list[str]:
    return [f"/{name}/" for name, _docs in site.plan.sections]


def test_a_listing_sorted_the_other_way_is_the_same_document(real_sites):
    compared = 0
    for seed, site in real_sites:
        if site.plan.sort_view is None:
            continue
        sort, _view = site.plan.sort_view
        for path in _sections(site):
            alike = similarity(
                _fp(site, site.host, path), _fp(site, site.host, path, f"{sort}=-title")
            )
            compared += 1
            assert alike >= SAME, f"seed {seed} {site.name} {path} {sort}=-title: {alike:.2f}"
    assert compared >= 10


def _titles(rng: random.Random, n: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5))).title() for _ in range(n)]


def _listing(items: str) -> bytes:
    return (
        '<html><body><div id="top"><div class="logo">Site</div></div>'
        f'<div id="main"><h1>Library</h1>{items}<p><a href="?sort=title">title</a> | '
        '<a href="?view=grid">grid</a></p></div><div id="bottom">© 2026 Site</div></body></html>'
    ).encode()


def test_a_table_of_the_items_of_a_list_is_the_same_document(real_sites):
    # The test web's grid keeps the list's order row by row; a grid filled column by column
    # (a directory listing's, a glossary's) reads the titles in another order.
    titles = _titles(random.Random(25), 15)
    links = [f'<a href="/doc/{k}.html">{t}</a>' for k, t in enumerate(titles)]
    as_list = _listing("<ul>" + "".join(f"<li>{a}</li>" for a in links) + "</ul>")
    rows = [links[r::5] for r in range(5)]  # 3 columns of 5, filled downwards
    cells = ("".join(f"<td>{a}</td>" for a in row) for row in rows)
    as_table = _listing("<table>" + "".join(f"<tr>{c}</tr>" for c in cells) + "</table>")
    a = content_fingerprint(as_list, "text/html")
    b = content_fingerprint(as_table, "text/html")
    assert a is not None
    assert b is not None
    assert similarity(a, b) >= SAME
    compared = 0
    for seed, site in real_sites:
        if site.plan.sort_view is None:
            continue
        sort, view = site.plan.sort_view
        for path in _sections(site):
            grid = _fp(site, site.host, path, f"{view}=grid&{sort}=-title")
            alike = similarity(_fp(site, site.host, path), grid)
            compared += 1
            assert alike >= SAME, f"seed {seed} {site.name} {path} grid, -title: {alike:.2f}"
    assert compared >= 10


def _templates(site, path: str) -> list[tuple[str, str, str, str]]:
    """(name, host, path, query) of the home or section page ``path`` in its other templates."""
    plan, host = site.plan, site.host
    out = []
    if plan.mobile_mode == "param":
        out.append(("mobile", host, path, plan.mobile_param))
    elif plan.mobile_mode == "host":
        out.append(("mobile", "m." + host, path, ""))
    if plan.print_mode == "param":
        out.append(("print", host, path, plan.print_param))
    elif plan.print_mode == "host":
        out.append(("print", "print." + host, path, ""))
    if plan.amp_mode == "param":
        out.append(("amp", host, path, plan.amp_param))
    return out


def test_the_mobile_print_and_amp_pages_of_home_and_section_pages_are_the_same(real_sites):
    compared = mobile = 0
    for seed, site in real_sites:
        for path in ["/", *_sections(site)]:
            normal = _fp(site, site.host, path)
            for name, host, p, query in _templates(site, path):
                alike = similarity(normal, _fp(site, host, p, query))
                compared += 1
                mobile += name == "mobile"
                # an AMP page's site-name bar is not marked as template, and a listing's
                # main content is short enough that it counts
                floor = NEAR_THRESHOLD if name == "amp" else SAME
                assert alike >= floor, f"seed {seed} {site.name} {path} {name}: {alike:.2f}"
    assert mobile >= 20
    assert compared >= 40


def test_two_section_listings_that_share_titles_stay_apart():
    # Debian's packages repeat a few page titles ("The XML C parser and toolkit of Gnome",
    # "Reference Manual for libxml2"): at 200 documents a site, some sections share them.
    sharing = 0
    for seed, site in _web(200):
        sections = dict(site.plan.sections)
        for one, two in itertools.combinations(sections, 2):
            shared = {site.docs[d].title for d in sections[one]} & {
                site.docs[d].title for d in sections[two]
            }
            a, b = _fp(site, site.host, f"/{one}/"), _fp(site, site.host, f"/{two}/")
            sharing += bool(shared)
            assert similarity(a, b) < NEAR_THRESHOLD, f"seed {seed} {site.name} {one} {two}"
    assert sharing >= 5


def test_two_short_listings_sharing_most_titles_but_not_all_stay_apart():
    # each title of a short listing is one shingle: 6 of 10 titles shared is J = 6/14
    titles = _titles(random.Random(7), 14)
    one = "<ul>" + "".join(f"<li><a href=/a>{t}</a></li>" for t in titles[:10]) + "</ul>"
    two = "<ul>" + "".join(f"<li><a href=/a>{t}</a></li>" for t in titles[4:]) + "</ul>"
    a = content_fingerprint(_listing(one), "text/html")
    b = content_fingerprint(_listing(two), "text/html")
    assert a is not None
    assert b is not None
    assert similarity(a, b) < NEAR_THRESHOLD


_TITLE = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@given(titles=st.lists(_TITLE, min_size=2, max_size=12, unique=True), data=st.data())
def test_any_order_of_a_listings_items_is_the_same_fingerprint(titles, data) -> None:
    # the same shingles, so the same bytes: not merely near
    order = data.draw(st.permutations(titles))
    one = "<ul>" + "".join(f"<li><a href=/a>{t}</a></li>" for t in titles) + "</ul>"
    two = "<ul>" + "".join(f"<li><a href=/a>{t}</a></li>" for t in order) + "</ul>"
    assert content_fingerprint(_listing(one), "text/html") == content_fingerprint(
        _listing(two), "text/html"
    )


def _main(html: str) -> list[str]:
    return main_text(html.encode()).split()


def test_a_short_block_with_a_time_of_day_is_a_stamp_not_content() -> None:
    text = " ".join(random.Random(4).choice(WORDS) for _ in range(30))
    page = (
        '<div id="main"><div class="gen">Generated 2026-01-03 12:05:33 · request 9f2c · '
        f"Try our new search!</div><h1>Title</h1><p>{text}</p></div>"
    )
    assert _main(page) == ["Title", *text.split()]
    # in a long block, a time of day is the document's
    long = f"<p>The meeting starts at 10:30:00 in the hall. {text} {text}</p>"
    assert _main(long)[:6] == ["The", "meeting", "starts", "at", "10:30:00", "in"]


def test_a_heading_over_an_empty_list_is_template() -> None:
    page = (
        '<div id="left"><h4>In this section</h4><ul><li></li></ul></div>'
        '<div id="main"><h1>Library</h1><ul><li><a href="/a">First title</a></li></ul></div>'
    )
    assert _main(page) == ["Library", "First", "title"]
