"""The ``field`` profile: what a field test met on real servers, with the truth knowing it.

www twins whose pages link to their own host name (different bytes, the same text), dynamic
pages (a clock, a nonce, a rotating ad, a CSRF field), a templated site of short articles in
heavier boilerplate, case-respelled links that 404 on the case-sensitive host, and a truth
that records every URL's status with no shared "404" resource.
"""

from __future__ import annotations

import collections

from dustless.extract import content_fingerprint, similarity, visible_text
from dustless.testweb import Profile, WebConfig, build_web, render_page
from testweb_fixture import LoopbackClient


def _web():
    return build_web(WebConfig(seed=1, sites=7, pages_per_site=30, profile=Profile.FIELD))


def test_the_field_profile_has_every_personality():
    web = _web()
    modes = {(s.personality_name, s.www_mode) for s in web.sites}
    assert ("iis", "alias-links") in modes
    assert ("dynamic", "alias-links") in modes
    assert ("php", "different") in modes  # an unrelated www site beside it
    assert ("apache", "none") in modes
    assert ("templated", "none") in modes


def test_templated_articles_are_short_and_outweighed_by_boilerplate():
    web = _web()
    site = next(s for s in web.sites if s.personality_name == "templated")
    pages = [p for p in site.pages() if p.url.endswith(".html")]
    assert len(pages) > 20
    chrome_words = len(visible_text(pages[0].chrome.encode()).split())
    assert chrome_words > 2 * pages[0].text_words
    texts = {visible_text(render_page(p, 0)) for p in pages}
    assert len(texts) == len(pages)  # every article is its own


def test_a_dynamic_page_changes_bytes_with_every_request_not_its_text():
    web = _web()
    site = next(s for s in web.sites if s.personality_name == "dynamic")
    page = next(iter(site.pages()))
    bodies = [render_page(page, 0, r) for r in range(1, 6)]
    assert len(set(bodies)) == 5
    assert all(b"csrf_token" in b and b"request " in b and b"Sponsored" in b for b in bodies)
    fps = [content_fingerprint(b, "text/html") for b in bodies]
    assert all(f is not None and similarity(fps[0], f) >= 0.8 for f in fps)


async def test_www_twins_link_to_their_own_host_and_truth_has_no_shared_404(testweb_factory):
    web = testweb_factory(profile="field", sites=7, pages_per_site=20)
    host = web.site("iis", www="alias-links")
    async with LoopbackClient() as client:
        bare = await client.get(web.url(host, "/"))
        twin = await client.get(web.url("www." + host, "/"))
        dyn = web.site("dynamic")
        one = await client.get(web.url(dyn, "/"))
        two = await client.get(web.url(dyn, "/"))
    assert bare.status == twin.status == 200
    assert bare.body != twin.body
    assert f"http://www.{host}:{web.port}/".encode() in twin.body
    assert f"http://{host}:{web.port}/".encode() not in twin.body
    assert visible_text(bare.body) == visible_text(twin.body)
    assert one.body != two.body
    assert "ETag" not in one.headers

    rows = web.truth()
    assert web.truth_path.read_text().startswith("url\tstatus\tresource-id\n")
    by_status = collections.defaultdict(set)
    for r in rows:
        by_status[r.status].add(r.rid)
    assert by_status[404] == {"-"}  # each broken link is no resource, not one "404" page
    assert by_status[301] == {"-"}
    apache = web.site("apache")
    assert any(r.status == 404 and apache in r.url and r.url != r.url.lower() for r in rows)
