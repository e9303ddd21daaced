"""``dustless crawl --script`` (seed 002 §3.3-§3.4, §4.1) and ``--rules`` (learned rules).

The test web's ``www.web.com`` serves exactly the URL patterns of Fig. 6: list pages
``list.aspx?cate_id={0}&page={1}`` and detail pages reachable only through
``javascript:show_detail({0})``. The paper's own Fig. 6 script drives the crawl.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from crawl.scripted_data import FIG6, ONE_CATEGORY, crawl_web, web_seed
from dustless.crawl import CrawlConfig
from dustless.crawl._build import open_crawl
from dustless.crawl.engine import Crawler
from dustless.errors import ScriptError
from dustless.rules import load_script
from dustless.store import SQLiteStore


def rows(out: Path):
    with sqlite3.connect(out / "crawl.db") as db:
        return db.execute(
            "SELECT f.id, u.id, u.url, u.kind, u.parent_id, u.priority, u.page_type, "
            "u.category, u.category_id, u.category_name, f.status, f.links_before, "
            "f.links_after FROM fetches f JOIN urls u ON u.id = f.url_id "
            "WHERE u.url NOT LIKE '%/robots.txt' ORDER BY f.id"
        ).fetchall()


def test_fig6_script_drives_a_crawl_of_www_web_com(web, tmp_path, ch):
    out = tmp_path / "web"
    result = crawl_web(web, out, FIG6, ch)
    assert result.finished
    fetched = rows(out)
    script = load_script(FIG6).rules
    truth = {r.url for r in web.truth() if r.status == 200 and "www.web.com" in r.url}
    details = {u for u in truth if "/detail.aspx" in u}
    lists = {u for u in truth if "/list.aspx" in u}
    assert len(details) >= 60
    assert len(lists) >= 12

    # Only pattern URLs were fetched (§3.4.1); every list and detail page was reached.
    urls = [r[2] for r in fetched]
    assert all(script.match(u) is not None for u in urls), urls
    assert len(urls) == len(set(urls))
    assert details | lists <= set(urls)
    by_id = {r[1]: r for r in fetched}
    order = {r[2]: r[0] for r in fetched}  # fetch id: one request at a time to the host

    # Every detail page came from a javascript link (Fig. 8: an h-URL) on a list page.
    for r in fetched:
        if "/detail.aspx" in r[2]:
            assert r[3] == "h", r
            assert (r[6], r[5]) == ("detail", 3), r
            assert "/list.aspx" in by_id[r[4]][2], r

    # §3.4.2: a list page's details are fetched before the other list pages of its
    # category that come after it, and a category is finished before the next one starts.
    for page in (r for r in fetched if r[6] == "list"):
        mine = [order[d[2]] for d in fetched if d[4] == page[1] and d[6] == "detail"]
        later = [o for o in fetched if o[6] == "list" and o[8] == page[8] and o[0] > page[0]]
        assert mine, page
        for other in later:
            assert max(mine) < other[0], (page[2], other[2])
    categories = [r[8] for r in fetched]
    runs = [c for i, c in enumerate(categories) if i == 0 or categories[i - 1] != c]
    assert len(runs) == len(set(categories)) == 6, runs

    # Page types and categories are stored with each URL (§3.2, §4.1, Figs. 13-14): the
    # class of the pattern, the category id, and its name from anchor text.
    for r in fetched:
        assert r[7] == "인물", r
        assert r[8], r
        assert r[9], r
    names = {r[8]: r[9] for r in fetched if r[6] == "list"}
    assert len(set(names.values())) == 6
    for r in fetched:
        assert names[r[8]] == r[9], r  # details and later pages share their list's name

    # Table 2: links before and after filtering, per page.
    for r in fetched:
        assert r[11] is not None, r
        assert r[12] is not None, r
        assert r[11] >= r[12] >= 1, r
    list_rows = [r for r in fetched if r[6] == "list"]
    # a list page: 6 category links, numbered pages, "다음", and its people's javascript links
    assert all(r[11] >= 6 + 1 + 10 for r in list_rows if r[2].endswith("page=1"))


def test_links_no_pattern_names_are_not_followed(web, tmp_path, ch):
    script = tmp_path / "one.xml"
    script.write_text(ONE_CATEGORY, encoding="utf-8")
    out = tmp_path / "one"
    assert crawl_web(web, out, script, ch).finished
    fetched = rows(out)
    assert all("cate_id=467" in r[2] or "/detail.aspx" in r[2] for r in fetched)
    first = fetched[0]
    assert first[2] == web_seed(web)
    # the five other categories' links were dropped: Table 2's "after" < "before"
    assert first[11] - first[12] == 5, first
    assert sum(r[11] for r in fetched) > sum(r[12] for r in fetched)


def test_links_are_rewritten_to_target_addr(tmp_path, web, ch):
    # Fig. 3: parameters the script does not keep are dropped by the rewrite, so a link
    # spelled with extra parameters and another order is fetched as the target.
    script = tmp_path / "rw.xml"
    script.write_text(
        FIG6.read_text(encoding="utf-8").replace(
            "<targetAddr>http://www.web.com/list.aspx?cate_id={0}&page={1}</targetAddr>",
            "<targetAddr>http://www.web.com/list.aspx?page={1}&cate_id={0}</targetAddr>",
        ),
        encoding="utf-8",
    )
    out = tmp_path / "rw"
    assert crawl_web(web, out, script, ch).finished
    lists = [r[2] for r in rows(out) if r[6] == "list"]
    assert len(lists) >= 12
    assert all("?page=" in u for u in lists[1:]), lists  # the seed keeps its spelling


def test_scripts_and_rules_are_kept_for_resume(tmp_path):
    script = tmp_path / "web.xml"
    script.write_bytes(FIG6.read_bytes())
    config = CrawlConfig(
        seeds=("http://www.web.com/list.aspx?cate_id=467&page=1",),
        scripts=(str(script),),
        rules=(str(script),),
        progress=False,
    )
    assert CrawlConfig.from_json(config.to_json()) == config
    out = tmp_path / "c"
    out.mkdir()
    store = SQLiteStore(out)
    store.start_batch(config.to_json(), time.time())  # an unfinished crawl
    store.commit()
    store.close()
    parts = open_crawl(CrawlConfig(progress=False), out, resume=True, now=time.time())
    try:
        crawler = Crawler(parts)
        assert crawler.scripted is not None
        assert crawler.discovery.identity("http://www.web.com/list.aspx?page=2&cate_id=9&x=1") == (
            "http://www.web.com/list.aspx?cate_id=9&page=2"
        )
    finally:
        parts.warc.close()
        parts.store.close()
    script.write_text("<crawlscript><site></crawlscript>", encoding="utf-8")
    with pytest.raises(ScriptError, match=r"web\.xml:1:"):
        open_crawl(CrawlConfig(progress=False), out, resume=True, now=time.time())


@pytest.mark.parametrize("option", ["--rules", "--script"])
def test_a_broken_rules_file_is_one_line_with_its_line_number(option, tmp_path, ch):
    bad = tmp_path / "bad.xml"
    bad.write_text('<crawlscript>\n<site title="x">\n<identity/>\n</site>\n</crawlscript>\n')
    proc = ch.run_cli("crawl", "http://a.test/", "--out", str(tmp_path / "x"), option, str(bad))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"{bad}:3:" in lines[0]
    assert not (tmp_path / "x").exists()
