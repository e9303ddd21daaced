"""The crawler against the test web; the server's own counters are the witness."""

from __future__ import annotations

import sqlite3

from dustless.crawl import Scope
from dustless.store import WarcRef, read_record
from dustless.url import normalize


def fetched_urls(out):
    with sqlite3.connect(out / "crawl.db") as db:
        return db.execute(
            "SELECT u.url, f.state, f.status, f.warc_file, f.warc_offset, f.warc_length "
            "FROM fetches f JOIN urls u ON u.id = f.url_id ORDER BY f.id"
        ).fetchall()


def test_politeness_one_at_a_time_and_the_delay_between(clean_web, tmp_path, ch):
    delay = 0.12
    result = ch.crawl(clean_web, tmp_path / "c", delay=delay, concurrency=16, max_pages_per_site=12)
    assert result.finished
    hosts = clean_web.stats()["hosts"]
    assert len(hosts) >= 6
    for host, s in hosts.items():
        assert s["max_concurrent"] == 1, host
        if s["requests"] > 1:
            # the server measures start to start; we rest `delay` after each end
            assert s["min_gap_s"] >= delay - 0.005, (host, s)


def test_clean_crawl_gets_everything_once_and_the_warc_reads_back(clean_web, tmp_path, ch):
    out = tmp_path / "c"
    result = ch.crawl(clean_web, out, concurrency=32)
    assert result.finished
    server = clean_web.stats()
    assert server["duplicate_fetches"] == 0
    rows = fetched_urls(out)
    assert result.stats.fetched == len(rows)
    # One request per page row, + per host its robots.txt and one soft-404 probe
    # (crawl/soft404.py: a clean site answers it 404, so there is no second).
    assert server["requests"] == len(rows) + 2 * len(server["hosts"])
    assert server["resources_fetched"] >= 6 * 20
    ok = [r for r in rows if r[1] == "OK"]
    assert len(ok) >= server["resources_fetched"] - len(server["hosts"])
    for url, _state, status, wfile, woff, wlen in rows:
        if status is None:
            continue
        rec = read_record(out / "warc", WarcRef(wfile, woff, wlen))
        assert rec.target_uri == url
        assert rec.type in ("response", "revisit")
    seeds_out = _seed_lines(out)
    assert set(clean_web.seeds) <= set(seeds_out)


def test_dirty_standard_never_fetches_one_resource_twice_through_equal_spellings(
    testweb_factory, tmp_path, ch
):
    web = testweb_factory(profile="dirty", sites=6, pages_per_site=20)
    out = tmp_path / "d"
    result = ch.crawl(web, out, policy="standard", concurrency=32, max_pages_per_site=300)
    assert result.finished
    rid_of = {row.url: row.rid for row in web.truth()}
    by_form: dict[tuple[str, str], str] = {}
    requested = [r for r in fetched_urls(out) if r[2] is not None]
    assert requested
    for url, *_ in requested:
        rid = rid_of.get(url)
        if rid is None:
            continue
        form = normalize(url, "standard")
        key = (rid, form)
        assert key not in by_form, f"{url} and {by_form[key]}: one resource, equal by standard"
        by_form[key] = url


def test_hostile_behaviour_ends_as_recorded_states_and_the_crawl_goes_on(
    testweb_factory, tmp_path, ch
):
    web = testweb_factory(
        profile="hostile",
        sites=6,
        pages_per_site=20,
        extra_args=("--slow", "0.3", "--stall", "2.0", "--crawl-delay", "0.05"),
    )
    out = tmp_path / "h"
    result = ch.crawl(
        web, out, concurrency=32, stall_timeout=1.0, total_timeout=5.0, max_depth=5,
        max_pages_per_site=60, backoff=0.05, delay=0.05,
    )  # fmt: skip
    assert result.finished
    for host, s in web.stats()["hosts"].items():
        # polite to hostile servers too: stalls, back-off and robots.txt redirects included
        # (the least gap is checked on the clean web; a reset is never retried at once: below)
        assert s["max_concurrent"] == 1, host
    rows = fetched_urls(out)
    states = {r[1] for r in rows}
    assert "OK" in states
    assert states - {"OK"}, "a hostile web gave no failure states at all?"
    server = web.stats()
    # traps end at the limits: at most max-pages-per-site per site, and never deeper than 5
    per_host = {}
    for url, *_ in rows:
        host = url.split("/")[2]
        per_host[host] = per_host.get(host, 0) + 1
    assert max(per_host.values()) <= 60
    assert server["trap_hits"] <= 60 * len(server["hosts"])
    with sqlite3.connect(out / "crawl.db") as db:
        assert db.execute("SELECT max(depth) FROM urls").fetchone()[0] <= 5
        unrecorded = db.execute(
            "SELECT count(*) FROM urls WHERE state IN ('in-flight')"
        ).fetchone()[0]
    assert unrecorded == 0


def test_parties_grow_from_one_seed_up_to_max_sites(clean_web, tmp_path, ch):
    out = tmp_path / "p"
    first = clean_web.seeds[0]
    result = ch.crawl(clean_web, out, seeds=(first,), max_sites=2, max_depth=2)
    assert result.finished
    hosts = clean_web.stats()["hosts"]
    assert len(hosts) == 2  # the seed's site and one discovered party, no more
    seeds_out = _seed_lines(out)
    assert seeds_out[0] == first
    assert len(seeds_out) > 2  # every outside link is a candidate seed for the next crawl
    with sqlite3.connect(out / "crawl.db") as db:
        parties = db.execute("SELECT count(DISTINCT seed_id) FROM urls").fetchone()[0]
        depths = dict(db.execute("SELECT kind, max(depth) FROM urls GROUP BY kind"))
    assert parties == 2
    assert depths["s"] == 0
    assert max(depths.values()) <= 2


def test_a_reset_is_retried_once_on_a_new_connection_then_recorded(testweb_factory, tmp_path, ch):
    web = testweb_factory(
        profile="hostile",
        sites=6,
        pages_per_site=20,
        extra_args=("--slow", "0.3", "--stall", "2.0", "--crawl-delay", "0.05"),
    )
    reset = web.url("site1.test", "/reset/before.html")
    result = ch.crawl(web, tmp_path / "r", seeds=(reset,), max_depth=0, delay=0.05)
    assert result.finished
    assert result.stats.states.get("hErr") == 1
    # robots.txt, then the page on its kept-alive connection: reset before a byte came back,
    # so sent again once on a new connection (RFC 9112 §9.3.1), reset again: recorded.
    assert web.stats()["hosts"]["site1.test"]["requests"] == 3


def test_max_pages_and_scope_domain_end_to_end(clean_web, tmp_path, ch):
    out = tmp_path / "m"
    result = ch.crawl(clean_web, out, max_pages=25, scope=Scope.DOMAIN)
    assert result.finished
    pages = [r for r in fetched_urls(out) if r[2] is not None]
    assert 0 < len(pages) <= 25
    server = clean_web.stats()
    # Pages + per host one robots.txt and at most two soft-404 probes (crawl/soft404.py).
    assert server["requests"] <= 25 + 3 * len(server["hosts"])


def _seed_lines(out):
    """The URLs of ``seeds.out.txt`` (its comment lines left out)."""
    text = (out / "seeds.out.txt").read_text()
    return [line for line in text.splitlines() if line and not line.startswith("#")]
