"""What a ``crawl --script`` stored, read back: ``dustless stats`` shows seed 002 Table 2 by
page type, and ``dustless export`` labels documents with the crawl's page types and
categories without a ``--script`` of its own.

The crawl is the one of ``test_scripted.py``: the test web's ``www.web.com`` with the paper's
Fig. 6 script (list pages ``list.aspx?cate_id={0}&page={1}``, detail pages reachable only
through ``javascript:show_detail({0})``).
"""

from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from crawl.scripted_data import FIG6, ONE_CATEGORY, crawl_web


def crawl_scripted(web, out: Path, script: Path, ch) -> Path:
    assert crawl_web(web, out, script, ch).finished
    return out


@pytest.fixture
def scripted_crawl(web, tmp_path, ch) -> Path:
    return crawl_scripted(web, tmp_path / "web", FIG6, ch)


def _table2_from_db(out: Path) -> dict[str, tuple[int, int, int]]:
    """Table 2 counted here, independently: OK fetches that stored the counts, by type."""
    with sqlite3.connect(out / "crawl.db") as db:
        rows = db.execute(
            "SELECT coalesce(u.page_type, 'other'), f.links_before, f.links_after "
            "FROM fetches f JOIN urls u ON u.id = f.url_id "
            "WHERE f.state = 'OK' AND f.links_before IS NOT NULL"
        ).fetchall()
    out_: dict[str, tuple[int, int, int]] = {}
    for page_type, before, after in rows:
        n, b, a = out_.get(page_type, (0, 0, 0))
        out_[page_type] = (n + 1, b + before, a + after)
    return out_


@pytest.mark.parametrize("script", ["fig6", "one-category"])
def test_stats_show_table_2_of_seed_002_by_page_type(script, web, tmp_path, ch) -> None:
    path = FIG6
    if script == "one-category":
        path = tmp_path / "one.xml"
        path.write_text(ONE_CATEGORY, encoding="utf-8")
    out = crawl_scripted(web, tmp_path / "crawl", path, ch)
    r = ch.run_cli("stats", str(out), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["scripted"] is True
    rows = {row["page_type"]: row for row in data["link_filtering"]}
    expected = _table2_from_db(out)
    # Every page fetched is a list or a detail page: the seed is a list page itself.
    assert set(expected) == {"list", "detail"}
    assert list(rows) == ["list", "detail", "total"]
    assert expected["detail"][0] >= 10
    for page_type, (pages, before, after) in expected.items():
        row = rows[page_type]
        assert (row["pages"], row["links_before"], row["links_after"]) == (pages, before, after)
        assert row["reduction"] == pytest.approx(1 - after / before)
    total = rows["total"]
    assert total["pages"] == sum(v[0] for v in expected.values())
    assert total["links_before"] == sum(v[1] for v in expected.values())
    assert total["links_after"] == sum(v[2] for v in expected.values())
    lists = rows["list"]
    if script == "fig6":
        # Fig. 6 names every link of the test web's list pages: nothing is filtered out.
        assert expected["list"][0] >= 12
        assert lists["links_after"] == lists["links_before"] > 0
        assert lists["reduction"] == 0
    else:
        # §3.4.1: each list page's links to the five other categories are dropped.
        assert lists["links_before"] - lists["links_after"] == 5 * lists["pages"]
        assert lists["reduction"] > 0

    text = ch.run_cli("stats", str(out))
    assert text.returncode == 0, text.stderr
    title = "Seed 002 Table 2. Links before and after URL pattern filtering, by page type"
    assert title in text.stdout
    section = text.stdout.split(title, 1)[1].split("\n\n", 1)[0].splitlines()
    assert section[1].split() == ["page", "type", "pages", "before", "after", "reduction"]
    lines = {line.split()[0]: line.split()[1:] for line in section[3:]}
    assert list(lines) == ["list", "detail", "total"]
    pages, before, after = expected["list"]
    assert lines["list"] == [
        f"{pages:,}",
        f"{before:,}",
        f"{after:,}",
        f"{100 * (1 - after / before):.2f}%",
    ]

    report = tmp_path / "report.html"
    r = ch.run_cli("report", str(out), "-o", str(report))
    assert r.returncode == 0, r.stderr
    html = report.read_text(encoding="utf-8")
    assert '<section id="link-filtering">' in html
    table = html.split('<section id="link-filtering">', 1)[1].split("</section>", 1)[0]
    assert f">{before:,}<" in table
    assert f">{after:,}<" in table


def test_stats_without_script_have_no_table_2(clean_web, tmp_path, ch) -> None:
    out = tmp_path / "plain"
    assert ch.crawl(clean_web, out, max_pages=20).finished
    r = ch.run_cli("stats", str(out), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["scripted"] is False
    assert data["link_filtering"] == []
    text = ch.run_cli("stats", str(out))
    assert "Seed 002 Table 2" not in text.stdout
    report = tmp_path / "report.html"
    assert ch.run_cli("report", str(out), "-o", str(report)).returncode == 0
    assert 'id="link-filtering"' not in report.read_text(encoding="utf-8")


def test_export_uses_the_crawls_own_labels_without_script(
    scripted_crawl: Path, tmp_path: Path, ch
) -> None:
    with sqlite3.connect(scripted_crawl / "crawl.db") as db:
        stored = {
            url: (page_type, category, category_id, name)
            for url, page_type, category, category_id, name in db.execute(
                "SELECT url, page_type, category, category_id, category_name FROM urls"
            )
        }
    out = tmp_path / "files"
    r = ch.run_cli("export", str(scripted_crawl), "--format", "files", "-o", str(out))
    assert r.returncode == 0, r.stderr
    docs = [ET.parse(p).getroot().find("source") for p in sorted(out.rglob("*.xml"))]
    assert len(docs) >= 72
    seen_types: set[str] = set()
    for source in docs:
        assert source is not None
        url = source.findtext("url")
        page_type, category, category_id, name = stored[url]
        if page_type is None:  # the start page: no pattern names it
            assert source.findtext("page") == "other", url
            assert source.findtext("domain") == ""
            continue
        seen_types.add(page_type)
        assert source.findtext("page") == page_type, url
        assert source.findtext("domain") == category == "인물", url
        assert source.findtext("category") == category_id, url
        assert source.findtext("categoryName") == name, url
        assert source.findtext("site") == url.split("/")[2].split(":")[0]  # no script: host
    assert seen_types == {"list", "detail"}
    # A detail page's category is its list page's, which only the crawl knew: a script
    # alone sees no category in ``detail.aspx?per_id=N``.
    details = [s for s in docs if s is not None and s.findtext("page") == "detail"]
    assert details
    assert all(s.findtext("category") for s in details)
