"""``dustless stats`` and soft 404s (issue 25): a fetch recorded ``soft404`` (a 200 page
saying the URL is missing) is no document — out of the downloads, the documents and their
duplicates — and has a line of its own."""

from __future__ import annotations

from pathlib import Path

from dustless.analysis._stats import crawl_stats
from dustless.analysis._text import format_stats
from dustless.store import open_crawl
from stats.crawl_builder import Page, build_crawl

PAGES = [
    Page("http://a.test/", depth=0, doc="home"),
    Page("http://a.test/x", doc="X"),
    Page("http://a.test/X", doc="X"),
    # Three broken links, answered 200 with one "Page not found" page: its bytes are the
    # same every time, as Tomcat's are.
    Page("http://a.test/gone", state="soft404", doc="Page not found"),
    Page("http://a.test/old/page", state="soft404", doc="Page not found"),
    Page("http://a.test/Gone", state="soft404", doc="Page not found"),
]


def test_soft_404s_are_no_documents_and_have_their_own_line(tmp_path: Path) -> None:
    with open_crawl(build_crawl(tmp_path / "c", PAGES)) as db:
        st = crawl_stats(db)
    assert st.soft404s == 3
    assert st.downloaded == 3  # state OK only
    assert (st.documents, st.distinct_documents) == (3, 2)  # the soft 404s: no duplicates
    states = {s.state: s.count for s in st.document_states}
    assert states["soft404"] == 3
    text = format_stats(st)
    assert "3 complete 2xx downloads, 2 distinct" in text
    assert "soft 404s 3 " in text
