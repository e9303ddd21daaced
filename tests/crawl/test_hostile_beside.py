"""A hostile web beside a healthy one costs the healthy one nothing.

The ``hostile`` test web serves what a crawler meets on bad days — stalls, resets, bombs,
100,000 nested tags, raw bytes in ``Location``, links and redirects to private addresses —
and the ``dirty`` web serves ordinary sites. Crawled together, every URL of the dirty web
must end exactly as it does when the dirty web is crawled alone (a hostile page must not
stall the loop until healthy hosts time out and back off), no private address is reached,
and each hostile case ends as one recorded state (a page that would cost the HTML parser
far more than its size, ``pFlat``: nested too deep, or cloning its formatting elements).

Which URLs a crawl of the dirty web meets is not fixed, though: ``www.site1.test`` serves
``site1.test`` byte for byte, and content-seen follows the links of the first copy of a
document only. Whichever twin is fetched first (a race between two hosts) lends its host to
the relative links followed, so one crawl may fetch ``http://www.site1.test/`` and another
not. Such a URL must end with an answer (state, status and body) the other crawl got too.

(How much longer the pair takes than the dirty web alone is measured by
``bench/hostile_beside.py``: tests check behaviour, not speed.)
"""

from __future__ import annotations

import sqlite3

from dustless.testweb._hostile import PRIVATE_TARGETS

# Quick politeness and back-off; the hostile sites' robots.txt Crawl-delay capped likewise,
# and their stalls (8 s) given up after 3 s: a dirty page or a nested one needs well under
# a second, but a loaded machine may keep the test web from a healthy answer for one.
_OPTS = {
    "delay": 0.05,
    "delay_factor": 0.0,
    "backoff": 0.05,
    "max_crawl_delay": 0.05,
    "stall_timeout": 3.0,
    "total_timeout": 7.0,
}


def _ends(out, port: int) -> dict[str, tuple[str, int | None, str | None]]:
    """How every URL of the web on ``port`` ended (its last fetch's state, status and body
    SHA-1), by its URL without the port."""
    with sqlite3.connect(out / "crawl.db") as db:
        rows = db.execute(
            "SELECT u.url, f.state, f.status, f.content_sha1 FROM fetches f "
            "JOIN urls u ON u.id = f.url_id "
            "WHERE f.id IN (SELECT max(id) FROM fetches GROUP BY url_id)"
        ).fetchall()
    mark = f":{port}/"
    return {
        url.replace(mark, "/"): (state, status, sha1)
        for url, state, status, sha1 in rows
        if mark in url
    }


def _assert_same_ends(got: dict, want: dict) -> None:
    """Every URL both crawls fetched ends the same way; a URL only one crawl met (a twin's
    spelling, see the module docstring) ends with an answer the other crawl got too."""
    common = got.keys() & want.keys()
    assert {u: got[u] for u in common} == {u: want[u] for u in common}
    assert len(common) > 50
    for mine, theirs in ((got, want), (want, got)):
        answers = set(theirs.values())
        assert {u: e for u, e in mine.items() if u not in common and e not in answers} == {}


def _all_states(out) -> dict[str, tuple[str, str | None]]:
    with sqlite3.connect(out / "crawl.db") as db:
        return {
            url: (state, error)
            for url, state, error in db.execute(
                "SELECT u.url, f.state, f.error FROM fetches f JOIN urls u ON u.id = f.url_id"
            )
        }


def test_a_hostile_web_beside_a_dirty_one_changes_nothing_for_it(testweb_factory, tmp_path, ch):
    dirty = testweb_factory(profile="dirty", sites=2, pages_per_site=12)
    hostile = testweb_factory(profile="hostile", sites=1, pages_per_site=8)
    port = int(dirty.seeds[0].split(":")[2].split("/")[0])

    alone = tmp_path / "alone"
    assert ch.crawl(dirty, alone, **_OPTS).finished
    both = tmp_path / "both"
    resolve = tuple(dict.fromkeys(ch.resolve_of(dirty) + ch.resolve_of(hostile)))
    result = ch.crawl(dirty, both, seeds=(*dirty.seeds, *hostile.seeds), resolve=resolve, **_OPTS)
    assert result.finished

    # The dirty web's URLs end the same way, every one of them.
    _assert_same_ends(_ends(both, port), _ends(alone, port))

    got = _all_states(both)
    # Links and a redirect to private addresses: refused, never connected to.
    for target in PRIVATE_TARGETS:
        state, error = got[target]
        assert state == "filtered", target
        assert "address policy" in (error or ""), target
    # The nested pages: one state each (stored; their links read within the budget).
    nested = {url: s for url, (s, _) in got.items() if "/nest/" in url}
    assert sorted(nested.values()) == ["pBig", "pFlat"]  # past the tag budget; read flat
    # 250 formatting elements cloned into every <div> (2.7 GB in the parser as it is):
    # recorded as read flat, its links all followed, and counted like any other state.
    clones = [url for url in got if url.endswith("/clones/b.html")]
    assert [got[url][0] for url in clones] == ["pFlat"]
    site = clones[0].removesuffix("/clones/b.html")
    # Soft 404s: fetched, and recorded as such (crawl/soft404.py).
    assert got[site + "/before"][0] == got[site + "/after"][0] == "soft404"
    assert result.stats.states["pFlat"] == 2
    # Raw bytes in Location: the target is requested percent-encoded, and found.
    assert any("/caf%C3%A9/%ED%95%9C?" in url and s == "OK" for url, (s, _) in got.items())
