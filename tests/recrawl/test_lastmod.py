"""Sitemap ``lastmod`` in recrawls: ``changes`` reports how often it agreed with the changes
the downloads showed, and a budgeted ``recrawl`` takes the pages whose lastmod moved first.

The test web's sitemap gives each page the day of its last change as lastmod, except two
liars (a stale lastmod, one that says "today" every day): ``declared_lastmod`` and the
pages' versions are the truth both tests compare with.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from itertools import pairwise
from pathlib import Path

import pytest

from dustless.analysis._changes_db import crawl_change_report
from dustless.cli.main import main
from dustless.store import open_crawl
from dustless.testweb._core import Profile, WebConfig
from dustless.testweb._sitemaps import LIARS, SITEMAP_HOST, SitemapSite, declared_lastmod


@pytest.fixture
def web(testweb_factory):
    return testweb_factory(profile="sitemaps")


def _listed(web):
    """The pages the sitemaps list, with their liar kind (None: honest)."""
    site = SitemapSite(WebConfig(profile=Profile.SITEMAPS, port=web.port))
    origin = site.origin
    return [(p, LIARS.get(p.url[len(origin) :])) for p in [site.home, *site.linked, *site.orphans]]


def _crawl(web, out: Path) -> float:
    seed = web.base_url(SITEMAP_HOST) + "/"
    args = ["crawl", seed, "--out", str(out), *web.resolve_args, "--delay", "0"]
    assert main([*args, "--delay-factor", "0", "--quiet", "--sitemaps"]) == 0
    with open_crawl(out) as db:
        return db.batches[0].batch_time


def _recrawl(out: Path, t0: float, day: int, *extra: str) -> None:
    when = dt.datetime.fromtimestamp(t0 + day * 86_400, dt.UTC).isoformat()
    assert main(["recrawl", str(out), "--batch-time", when, "--quiet", *extra]) == 0


def _pages_fetched(out: Path, batch: int) -> set[str]:
    with sqlite3.connect(out / "crawl.db") as db:
        rows = db.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id "
            "WHERE f.batch = ? AND u.kind NOT IN ('m', 'n')",
            (batch,),
        ).fetchall()
    return {u for (u,) in rows}


def test_changes_reports_how_often_lastmod_agreed_with_the_changes(web, tmp_path) -> None:
    out = tmp_path / "c"
    t0 = _crawl(web, out)
    days = [0, 2, 4, 7, 9]
    for day in days[1:]:
        web.set_day(day)
        _recrawl(out, t0, day)
    with open_crawl(out) as db:
        report = crawl_change_report(db)
    expected = [0, 0, 0, 0]  # moved & changed, moved & same, still & changed, still & same
    for page, liar in _listed(web):
        for a, b in pairwise(days):
            moved = declared_lastmod(page, a, liar) != declared_lastmod(page, b, liar)
            changed = page.version(a) != page.version(b)
            expected[(0 if moved else 2) + (0 if changed else 1)] += 1
    got = report.lastmod
    assert got is not None
    assert [got.moved_changed, got.moved_unchanged, got.still_changed, got.still_unchanged] == (
        expected
    )
    assert got.pairs == len(_listed(web)) * (len(days) - 1)
    assert got.moved_unchanged > 0  # the liar that says "today" every day
    assert got.agreement is not None
    assert got.agreement < 1.0
    # The sitemaps themselves are URL sources, not documents of the change tables.
    assert not any(p.url.endswith((".xml", ".xml.gz")) for p in report.pages)


def test_a_budgeted_recrawl_takes_the_pages_whose_lastmod_moved_first(web, tmp_path) -> None:
    out = tmp_path / "c"
    t0 = _crawl(web, out)
    # Day 3, a budget of one page: the sitemaps are read again all the same (outside the
    # budget), and what they say now is the evidence of the next plan.
    web.set_day(3)
    _recrawl(out, t0, 3, "--budget", "1")
    fetched = _pages_fetched(out, 2)
    assert len(fetched) == 1
    moved = {
        page.url
        for page, liar in _listed(web)
        if page.url not in fetched
        and declared_lastmod(page, 3, liar) != declared_lastmod(page, 0, liar)
    }
    assert moved  # the "today" liar at least
    web.set_day(4)
    _recrawl(out, t0, 4, "--budget", str(len(moved)))
    assert _pages_fetched(out, 3) == moved


def test_a_recrawl_can_turn_sitemaps_on(web, tmp_path) -> None:
    """robots.txt is reused from the crawl DB within its 24 hours, and its Sitemap: lines
    are read from there: the orphans come in with the recrawl that asks for sitemaps."""
    out = tmp_path / "c"
    seed = web.base_url(SITEMAP_HOST) + "/"
    args = ["crawl", seed, "--out", str(out), *web.resolve_args, "--delay", "0"]
    assert main([*args, "--delay-factor", "0", "--quiet"]) == 0
    site = SitemapSite(WebConfig(profile=Profile.SITEMAPS, port=web.port))
    orphans = {p.url for p in site.orphans}
    assert not orphans & _pages_fetched(out, 1)
    with open_crawl(out) as db:
        t0 = db.batches[0].batch_time
    _recrawl(out, t0, 1, "--sitemaps")
    assert orphans <= _pages_fetched(out, 2)
