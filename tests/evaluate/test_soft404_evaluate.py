"""``dustless evaluate`` and soft 404s (issue 25): a spelling that reached the site's "Page
not found" page (recorded ``soft404``) is no document, so lowercasing paths does not lose
it — the path-case loss was priced far above the truth's because such pages counted as
documents. The truth's ``soft404`` (4th column, or an old ``soft404:SITE`` id) is no
resource either."""

from __future__ import annotations

from pathlib import Path

import pytest

from dustless.analysis import parse_truth, parse_truth_line
from dustless.analysis._evaluate import evaluate_crawl
from dustless.store import open_crawl
from stats.crawl_builder import Page, build_crawl


def _pages(broken: str) -> list[Page]:
    # Documents whose paths have capitals; their lowercase spellings are broken links that
    # the server answers 200 with its one "not found" page.
    return [
        Page("http://a.test/", depth=0, doc="home"),
        Page("http://a.test/Guide.html", doc="guide"),
        Page("http://a.test/guide.html", state=broken, doc="Page not found"),
        Page("http://a.test/News.html", doc="news"),
        Page("http://a.test/news.html", state=broken, doc="Page not found"),
        Page("http://a.test/FAQ.html", doc="faq"),
        Page("http://a.test/faq.html", state=broken, doc="Page not found"),
    ]


def _lowercase_loss(out: Path) -> tuple[float, int, int]:
    with open_crawl(out) as db:
        ev = evaluate_crawl(db)
    [row] = [r for r in ev.rows if (r.factor, r.method) == ("path-case", "lowercase")]
    return row.coverage_loss_rate, ev.downloaded, ev.soft404s


def test_soft_404_spellings_cost_lowercasing_nothing(tmp_path: Path) -> None:
    loss, downloaded, soft = _lowercase_loss(build_crawl(tmp_path / "s", _pages("soft404")))
    assert (loss, downloaded, soft) == (0.0, 4, 3)
    # Two broken spellings recorded as documents (too few for evaluate's fallback guess, one
    # page under more than two unrelated paths): a loss that is not one. Recorded as soft
    # 404s, none.
    loss, downloaded, soft = _lowercase_loss(build_crawl(tmp_path / "ok", _pages("OK")[:5]))
    assert loss > 0
    assert (downloaded, soft) == (5, 0)
    loss, downloaded, soft = _lowercase_loss(build_crawl(tmp_path / "s2", _pages("soft404")[:5]))
    assert (loss, downloaded, soft) == (0.0, 3, 2)
    # Three, recorded as documents (a crawl made before the state existed): the fallback
    # reads the one page served under three unrelated paths as a soft 404.
    loss, _downloaded, soft = _lowercase_loss(build_crawl(tmp_path / "ok3", _pages("OK")))
    assert (loss, soft) == (0.0, 0)


@pytest.mark.parametrize(
    "line",
    [
        "http://r.test/no/such.html\t200\t-\tsoft404",
        "http://r.test/no/such.html\t200\treal1:/no/such.html\tsoft404",
        "http://r.test/no/such.html\t200\tsoft404:site3",  # files before the 4th column
    ],
)
def test_the_truths_soft_404s_are_no_resource(line: str) -> None:
    entry = parse_truth_line(line)
    assert entry is not None
    assert entry.resource is None
    assert parse_truth([line]) == {"http://r.test/no/such.html": None}


def test_a_truth_document_stays_one() -> None:
    entry = parse_truth_line("http://r.test/a.html\t200\treal1:/a.html\tdoc")
    assert entry is not None
    assert entry.resource == "real1:/a.html"
